"""Command line: flags in the style of mysqld_exporter, start-up checks, the serve loop."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading

from ndbinfo_exporter import __version__, mycnf, webconfig
from ndbinfo_exporter.collectors import ALL
from ndbinfo_exporter.db import Database
from ndbinfo_exporter.mycnf import ConfigError
from ndbinfo_exporter.scrape import DEFAULT_SLOW_INTERVAL, Scraper
from ndbinfo_exporter.server import make_server
from ndbinfo_exporter.state import ExporterState, RestartLedger

DEFAULT_LISTEN = "127.0.0.1:9723"
log = logging.getLogger("ndbinfo_exporter")


def parse_duration(text: str) -> float:
    """`2`, `2s`, `500ms`, `1m` -> seconds."""
    t = text.strip().lower()
    for suffix, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if t.endswith(suffix):
            t, mult = t[: -len(suffix)], factor
            break
    else:
        mult = 1.0
    try:
        value = float(t) * mult
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"duration must be positive: {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ndbinfo_exporter",
        description="Prometheus exporter for MySQL NDB Cluster's ndbinfo schema. The password"
                    f" comes from the option file or ${mycnf.PASSWORD_ENV}, never from argv.")
    p.add_argument("--web.listen-address", dest="listen", default=DEFAULT_LISTEN,
                   help=f"host:port to serve on (default {DEFAULT_LISTEN})")
    p.add_argument("--web.telemetry-path", dest="path", default="/metrics",
                   help="path of the metrics (default /metrics)")
    p.add_argument("--web.config.file", dest="web_config", default=None,
                   help="exporter-toolkit web config (TLS, bcrypt basic auth)")
    p.add_argument("--config.my-cnf", dest="my_cnf", default="~/.my.cnf",
                   help="MySQL option file whose [client] section says how to connect"
                        " (default ~/.my.cnf)")
    p.add_argument("--query.timeout", dest="query_timeout", type=parse_duration, default=2.0,
                   help="limit per ndbinfo query (default 2s)")
    p.add_argument("--scrape.timeout", dest="scrape_timeout", type=parse_duration,
                   default=10.0, help="budget for a whole scrape (default 10s; a Prometheus"
                   " X-Prometheus-Scrape-Timeout-Seconds header lowers it)")
    p.add_argument("--scrape.slow-interval", dest="slow_interval", type=parse_duration,
                   default=DEFAULT_SLOW_INTERVAL,
                   help="how often the collectors of per-fragment views (lcp, lcp_tables)"
                        " run; scrapes in between serve their last result (default 60s)")
    p.add_argument("--state.file", dest="state_file", default="ndbinfo_exporter.state.json",
                   help="where completed restarts already counted are kept (default"
                        " ./ndbinfo_exporter.state.json)")
    p.add_argument("--log.level", dest="log_level", default="info",
                   choices=["debug", "info", "warn", "error"])
    p.add_argument("--version", action="version", version=f"ndbinfo_exporter {__version__}")
    for c in ALL:
        g = p.add_mutually_exclusive_group()
        g.add_argument(f"--collect.{c.name}", dest=f"collect_{c.name}", action="store_true",
                       default=None, help=f"{c.help} (default {'on' if c.default else 'off'})")
        g.add_argument(f"--no-collect.{c.name}", dest=f"collect_{c.name}",
                       action="store_false", help=argparse.SUPPRESS)
    return p


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"--web.listen-address {text!r}: expected host:port")
    return host.strip("[]") or "0.0.0.0", int(port)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper().replace("WARN",
                                                                             "WARNING")),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    try:
        cfg = mycnf.load(os.path.expanduser(args.my_cnf))
        web = webconfig.load(args.web_config)
        address = parse_listen(args.listen)
        ledger = RestartLedger(args.state_file)
    except (ConfigError, ValueError) as exc:
        print(f"ndbinfo_exporter: {exc}", file=sys.stderr)
        return 2
    enabled = [c for c in ALL
               if (getattr(args, f"collect_{c.name}") is None and c.default)
               or getattr(args, f"collect_{c.name}")]
    db = Database(cfg, args.query_timeout)
    scraper = Scraper(db, enabled, ExporterState(ledger), args.scrape_timeout,
                      args.slow_interval)
    try:
        server = make_server(address, args.path, scraper, web)
    except OSError as exc:
        print(f"ndbinfo_exporter: cannot listen on {args.listen}: {exc.strerror}",
              file=sys.stderr)
        return 2
    log.info("ndbinfo_exporter %s serving %s://%s%s (SQL node %s as %s; collectors: %s)",
             __version__, "https" if web.ssl_context else "http", args.listen, args.path,
             cfg.target(), cfg.user, ", ".join(c.name for c in enabled))

    def stop(signum: int, frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        db.close()
    log.info("stopped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
