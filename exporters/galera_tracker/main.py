"""`python -m galera_tracker --log node1=/path/error.log ... --web.listen-address HOST:PORT`."""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from prometheus_client import start_http_server
from prometheus_client.registry import CollectorRegistry

from galera_tracker.metrics import TrackerCollector
from galera_tracker.state import Tracker


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="galera_tracker", description="Follow Galera nodes' error"
                                " logs and export state changes and SST/IST recoveries")
    p.add_argument("--log", action="append", required=True, metavar="NODE=PATH",
                   help="a node's error log (repeat per node)")
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
    logs: dict[str, str] = {}
    for item in args.log:
        node, sep, path = item.partition("=")
        if not sep or not node or not path:
            print(f"galera_tracker: --log wants NODE=PATH, got {item!r}", file=sys.stderr)
            return 2
        logs[node] = path
    tracker = Tracker(logs, args.state_file)
    registry = CollectorRegistry()
    registry.register(TrackerCollector(tracker))
    host, _, port = args.listen.rpartition(":")
    tracker.poll()  # the first scrape already sees what the logs hold
    start_http_server(int(port), addr=host or "127.0.0.1", registry=registry)
    print(f"galera_tracker: following {', '.join(f'{n}={p}' for n, p in logs.items())};"
          f" metrics on http://{args.listen}/metrics", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(args.interval):
        tracker.poll()
    tracker.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
