"""`python -m clusterscope_inventory --config.file clusterscope.yml`: serve the description
as service discovery and metrics; `--check` validates it and prints what follows from it."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading

from clusterscope_inventory import __version__
from clusterscope_inventory.alerting import ConfigWriter
from clusterscope_inventory.description import DescriptionError, load
from clusterscope_inventory.server import Inventory, make_server
from clusterscope_inventory.targets import JOBS, STACK_JOBS, targets

DEFAULT_LISTEN = "127.0.0.1:9110"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="clusterscope_inventory", description="Serve the"
                                " description of the monitored clusters as Prometheus HTTP"
                                " service discovery (/sd/<job>) and metrics (/metrics).")
    p.add_argument("--config.file", dest="config", required=True,
                   help="the description (clusterscope.yml)")
    p.add_argument("--web.listen-address", dest="listen", default=DEFAULT_LISTEN,
                   help=f"host:port (default {DEFAULT_LISTEN})")
    for job in STACK_JOBS:
        flag = job.replace("_", "-")
        p.add_argument(f"--target.{flag}", dest=f"target_{job}", default="",
                       metavar="HOST:PORT",
                       help=f"where the deployment's {job} answers; /sd/{job} lists it when"
                            " the description needs it (empty: not deployed)")
    p.add_argument("--alertmanager.config-file", dest="am_config", default="",
                   metavar="PATH", help="write Alertmanager's configuration here from the"
                   " description's `alerting:` section, again whenever it changes (empty:"
                   " do not)")
    p.add_argument("--alertmanager.secrets-dir", dest="am_secrets",
                   default="/run/secrets/alerting", metavar="DIR",
                   help="where Alertmanager finds the secret files `alerting:` names"
                        " (default /run/secrets/alerting)")
    p.add_argument("--alertmanager.url", dest="am_url", default="", metavar="URL",
                   help="Alertmanager to reload (POST /-/reload) after a change")
    p.add_argument("--alertmanager.group-wait", dest="am_group_wait", default="30s",
                   help="how long Alertmanager gathers a new group's alerts (default 30s)")
    p.add_argument("--alertmanager.group-interval", dest="am_group_interval", default="5m",
                   help="how often a group's changes are sent (default 5m)")
    p.add_argument("--logs.changes-file", dest="changes_file", default="", metavar="PATH",
                   help="the change detector's file as the log shipper sees it: shipped"
                        " with the description's logs (empty: none)")
    p.add_argument("--probes.backend", dest="probe_backend", default="127.0.0.1:9104",
                   metavar="HOST:PORT", help="where mysqld_exporter listens behind its guard:"
                   " /config/probes.yml forwards each described node's probe there (default"
                   " 127.0.0.1:9104)")
    p.add_argument("--check", action="store_true",
                   help="validate the description, print each job's targets and exit")
    p.add_argument("--log.level", dest="log_level", default="info",
                   choices=["debug", "info", "warn", "error"])
    p.add_argument("--version", action="version", version=f"clusterscope_inventory {__version__}")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper().replace("WARN", "WARNING"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.check:
        try:
            desc = load(args.config)
        except DescriptionError as exc:
            print(f"clusterscope_inventory: {exc}", file=sys.stderr)
            return 2
        print(json.dumps({job: targets(desc, job) for job in JOBS}, indent=2))
        return 0
    host, sep, port = args.listen.rpartition(":")
    if not sep or not port.isdigit():
        print(f"clusterscope_inventory: --web.listen-address {args.listen!r}: expected"
              " host:port", file=sys.stderr)
        return 2
    on_load = None
    if args.am_config:
        writer = ConfigWriter(args.am_config, args.am_secrets, args.am_url or None,
                              args.am_group_wait, args.am_group_interval)
        on_load = lambda desc: writer.update(desc.alerting)  # noqa: E731
    try:
        inventory = Inventory(args.config, on_load)
    except DescriptionError as exc:
        print(f"clusterscope_inventory: {exc}", file=sys.stderr)
        return 2
    try:
        stack = {job: getattr(args, f"target_{job}") for job in STACK_JOBS
                 if getattr(args, f"target_{job}")}
        server = make_server((host.strip("[]") or "0.0.0.0", int(port)), inventory, stack,
                             args.probe_backend, args.changes_file or None)
    except OSError as exc:
        print(f"clusterscope_inventory: cannot listen on {args.listen}: {exc.strerror}",
              file=sys.stderr)
        return 2
    desc = inventory.description
    logging.getLogger("clusterscope_inventory").info(
        "serving %s on http://%s (clusters: %s)", args.config, args.listen,
        ", ".join(f"{c.name} ({c.kind}, {len(c.nodes)} nodes)" for c in desc.clusters)
        or "none")

    def stop(signum: int, frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
