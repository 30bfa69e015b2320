"""`python -m galera_tracker --config.clusters clusterscope.yml` (every Galera node's log the
description names), or `--log [CLUSTER/]NODE=PATH ...`; `--web.listen-address HOST:PORT`."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from clusterscope_inventory.bounded import serve_metrics
from clusterscope_inventory.description import LOG_COMPONENTS, DescriptionError, load
from prometheus_client.registry import CollectorRegistry

from galera_tracker.tracker import Tracker
from galera_tracker.tracker_metrics import TrackerCollector


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="galera_tracker", description="Follow Galera nodes' error"
                                " logs and export state changes and SST/IST recoveries")
    p.add_argument("--config.clusters", dest="clusters", default=None, metavar="FILE",
                   help="the description of the monitored clusters (clusterscope.yml): the"
                        " log of every node of role galera it names")
    p.add_argument("--log", action="append", default=[], metavar="[CLUSTER/]NODE=PATH",
                   help="a node's error log (repeat per node); CLUSTER is its cluster label")
    # Flag names follow the sibling ndbinfo_exporter (and Prometheus exporters generally);
    # the first spellings stay accepted, unlisted, so existing deployments keep working.
    p.add_argument("--web.listen-address", dest="listen", default="127.0.0.1:9199",
                   metavar="HOST:PORT", help="host:port of /metrics (default 127.0.0.1:9199)")
    p.add_argument("--listen", dest="listen", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    p.add_argument("--state.file", dest="state_file", default=None, metavar="PATH",
                   help="where positions and counts are kept across restarts")
    p.add_argument("--state-file", dest="state_file", default=argparse.SUPPRESS,
                   help=argparse.SUPPRESS)
    p.add_argument("--interval", type=float, default=0.5, help="seconds between log polls")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logs: dict[tuple[str, str], str] = {}
    explicit: dict[tuple[str, str], str] = {}
    if args.clusters:
        try:
            logs.update(described_logs(args.clusters))
        except DescriptionError as exc:
            print(f"galera_tracker: {exc}", file=sys.stderr)
            return 2
    for item in args.log:
        key, sep, path = item.partition("=")
        cluster, _, node = key.rpartition("/")
        if not sep or not node or not path:
            print(f"galera_tracker: --log wants [CLUSTER/]NODE=PATH, got {item!r}",
                  file=sys.stderr)
            return 2
        explicit[(cluster, node)] = path
    logs.update(explicit)
    if not logs and not args.clusters:
        print("galera_tracker: no log to follow: give --config.clusters (a description with"
              " Galera nodes and their `log`) or --log", file=sys.stderr)
        return 2
    try:
        tracker = Tracker(logs, args.state_file)
    except ValueError as exc:
        print(f"galera_tracker: {exc}", file=sys.stderr)
        return 2
    registry = CollectorRegistry()
    registry.register(TrackerCollector(tracker))
    host, _, port = args.listen.rpartition(":")
    tracker.poll()  # the first scrape already sees what the logs hold
    serve_metrics((host.strip("[]") or "127.0.0.1", int(port)), registry, "galera_tracker")
    print(f"galera_tracker: following {', '.join(f'{c}/{n}={p}' for (c, n), p in logs.items())};"
          f" metrics on http://{args.listen}/metrics", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    watch = DescriptionWatch(args.clusters) if args.clusters else None
    while not stop.wait(args.interval):
        if watch is not None and watch.changed():
            try:
                # the description changed: follow its Galera logs (and any --log) from now on
                tracker.update({**described_logs(args.clusters), **explicit})
            except DescriptionError as exc:
                print(f"galera_tracker: {exc}; still following the logs of the last good"
                      " description", file=sys.stderr, flush=True)
        tracker.poll()
    tracker.save()
    return 0



def described_logs(path: str) -> dict[tuple[str, str], str]:
    """(cluster, node) -> log of every Galera node of the description that names one."""
    return {(src.cluster, src.node): src.path for src in load(path).log_sources()
            if src.component == LOG_COMPONENTS["galera"]}


class DescriptionWatch:
    """Tells when the description file changed (inode, size or mtime), cheaply."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stamp = self._stamp()

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def changed(self) -> bool:
        stamp = self._stamp()
        if stamp == self.stamp:
            return False
        self.stamp = stamp
        return True


if __name__ == "__main__":
    sys.exit(main())
