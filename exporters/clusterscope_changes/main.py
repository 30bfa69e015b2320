"""`clusterscope_changes --config.clusters clusterscope.yml --config.my-cnf exporters.my.cnf
--changes.file changes.jsonl`: find configuration and version changes on every node of the
description and write each as a line of the changes file (shipped to the log store) and as
counters on /metrics."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path

from clusterscope_inventory.bounded import serve_metrics
from clusterscope_inventory.description import DescriptionError, load
from ndbinfo_exporter import mycnf
from ndbinfo_exporter.main import parse_duration
from prometheus_client.registry import CollectorRegistry

from clusterscope_changes.detector_state import State
from clusterscope_changes.events import ChangesFile
from clusterscope_changes.exposition import DetectorCollector
from clusterscope_changes.grouping import Grouper
from clusterscope_changes.poller import Detector, Options

log = logging.getLogger("clusterscope_changes")
DEFAULT_LISTEN = "127.0.0.1:9125"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clusterscope_changes",
        description="Find global variable, wsrep provider option, NDB parameter and version"
                    " changes on every node of the description, group a change applied"
                    " node by node into one, and log each as a structured line.")
    p.add_argument("--config.clusters", dest="clusters", required=True, metavar="FILE",
                   help="the description of the monitored clusters (clusterscope.yml),"
                        " re-read when it changes")
    p.add_argument("--config.my-cnf", dest="my_cnf", default="~/.my.cnf", metavar="FILE",
                   help="the exporters' option file: each node logs in with the section its"
                        " `credentials` names, as mysqld_exporter and ndbinfo_exporter do")
    p.add_argument("--changes.file", dest="changes_file", required=True, metavar="FILE",
                   help="where change lines are appended (JSON, one per node and change);"
                        " the log shipper sends it to the log store")
    p.add_argument("--state.file", dest="state_file", default=None, metavar="FILE",
                   help="last readings, open rolling changes and counters, kept across"
                        " restarts (without it a restart forgets what it saw)")
    p.add_argument("--web.listen-address", dest="listen", default=DEFAULT_LISTEN,
                   metavar="HOST:PORT", help=f"host:port of /metrics (default {DEFAULT_LISTEN})")
    p.add_argument("--poll.interval", dest="interval", type=parse_duration, default=30.0,
                   metavar="D", help="time between two readings of every node (default 30s:"
                                     " a change is found within that, plus the shipping)")
    p.add_argument("--group.window", dest="window", type=parse_duration, default=1800.0,
                   metavar="D", help="a node's step joins a rolling change whose last step is"
                                     " at most this old (default 30m)")
    p.add_argument("--query.timeout", dest="query_timeout", type=parse_duration, default=5.0,
                   metavar="D", help="limit per query (default 5s)")
    p.add_argument("--ignore", default="", metavar="NAME[,NAME]",
                   help="more global variables that move by themselves and are no change")
    p.add_argument("--log.level", dest="log_level", default="info",
                   choices=["debug", "info", "warn", "error"])
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper().replace("WARN",
                                                                              "WARNING")),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    my_cnf = str(Path(args.my_cnf).expanduser())
    try:
        load(args.clusters)  # a description that does not parse stops the start
        mycnf.read_sections(my_cnf)
        state = State(args.state_file)
    except (DescriptionError, mycnf.ConfigError, ValueError, OSError) as exc:
        print(f"clusterscope_changes: {exc}", file=sys.stderr)
        return 2
    ignore = frozenset(n.strip().lower() for n in args.ignore.split(",") if n.strip())
    detector = Detector(Options(args.clusters, my_cnf, args.query_timeout, ignore), state,
                        ChangesFile(args.changes_file, state.pending),
                        Grouper(args.window, state.groups))
    registry = CollectorRegistry()
    registry.register(DetectorCollector(detector))
    host, _, port = args.listen.rpartition(":")
    detector.poll()  # the first reading: what later readings are compared with
    serve_metrics((host.strip("[]") or "127.0.0.1", int(port)), registry, "clusterscope_changes")
    log.info("watching %s every %.0f s; changes to %s; metrics on http://%s/metrics",
             args.clusters, args.interval, args.changes_file, args.listen)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(args.interval):
        detector.poll()
    detector.state.save(force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
