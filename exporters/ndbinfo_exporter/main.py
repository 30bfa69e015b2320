"""Command line: flags in the style of mysqld_exporter, start-up checks, the serve loop."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from clusterscope_inventory.description import Cluster, DescriptionError

from ndbinfo_exporter import __version__, mycnf
from ndbinfo_exporter.clusters import ClusterSet
from ndbinfo_exporter.collectors import ALL
from ndbinfo_exporter.db import Database
from ndbinfo_exporter.errors import ConfigError
from ndbinfo_exporter.http_server import make_server
from ndbinfo_exporter.scraper import DEFAULT_SLOW_INTERVAL, Scraper, SqlNode
from ndbinfo_exporter.state import ExporterState, RestartLedger
from ndbinfo_exporter.web import webconfig

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
                   help="MySQL option file: its [client] section says how to connect"
                        " (default ~/.my.cnf); with --config.clusters, the section each"
                        " cluster's or node's `credentials` names (mysqld_exporter's"
                        " auth_module format: [client.x] inherits from [client])")
    p.add_argument("--config.clusters", dest="clusters", default=None,
                   help="the description of the monitored clusters (clusterscope.yml):"
                        " every kind: ndb cluster is served on /probe?cluster=NAME and read"
                        " through the first of its SQL nodes that answers")
    p.add_argument("--query.timeout", dest="query_timeout", type=parse_duration, default=2.0,
                   help="limit per ndbinfo query (default 2s)")
    p.add_argument("--scrape.timeout", dest="scrape_timeout", type=parse_duration,
                   default=10.0, help="budget for a whole scrape (default 10s; a Prometheus"
                   " X-Prometheus-Scrape-Timeout-Seconds header lowers it)")
    p.add_argument("--scrape.slow-interval", dest="slow_interval", type=parse_duration,
                   default=DEFAULT_SLOW_INTERVAL,
                   help="how often the slow collectors run (per-fragment views, record"
                        " pools and histograms: "
                        + ", ".join(c.name for c in ALL if c.slow)
                        + "); scrapes in between serve their last result (default 60s)")
    p.add_argument("--state.file", dest="state_file", default="ndbinfo_exporter.state.json",
                   help="where completed restarts already counted are kept (default"
                        " ./ndbinfo_exporter.state.json)")
    p.add_argument("--state.dir", dest="state_dir", default=".",
                   help="with --config.clusters: where each cluster's counted restarts are"
                        " kept, as ndbinfo_exporter.<cluster>.state.json (default .)")
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


VERIFIED = ("VERIFY_CA", "VERIFY_IDENTITY")


def warn_unverified(cfg: mycnf.ClientConfig, what: str) -> None:
    """Once per login at start: a TCP login without a verified certificate can be read by
    anyone on the path (with caching_sha2_password and no TLS, PyMySQL sends the password
    encrypted with a key the server itself hands out)."""
    if cfg.socket is None and cfg.ssl_mode not in VERIFIED:
        log.warning("%s: the login to %s is not verified TLS (ssl-mode %s): set ssl-ca and"
                    " ssl-mode=VERIFY_IDENTITY in [%s] of %s (docs/exporter.md)", what,
                    cfg.target(), cfg.ssl_mode, cfg.section, cfg.path)


def cluster_scraper(cluster: Cluster, my_cnf: str, args: argparse.Namespace,
                    enabled: list) -> Scraper:
    """The scraper of one described NDB cluster. The option file is read again for every
    cluster built: credentials added for a new cluster need no restart."""
    path, sections = mycnf.read_sections(my_cnf)
    nodes = []
    for n in cluster.members("sql"):
        cfg = mycnf.from_section(path, sections, n.credentials, dict(os.environ))
        cfg = cfg.at(n.address)  # type: ignore[arg-type] - sql nodes have one
        warn_unverified(cfg, f"cluster {cluster.name} node {n.name}")
        nodes.append(SqlNode(n.name, Database(cfg, args.query_timeout),
                             Database(cfg, args.query_timeout)))
    state = Path(args.state_dir) / f"ndbinfo_exporter.{cluster.name}.state.json"
    return Scraper(nodes, enabled, ExporterState(RestartLedger(state)), args.scrape_timeout,
                   args.slow_interval)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper().replace("WARN",
                                                                             "WARNING")),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    enabled = [c for c in ALL
               if (getattr(args, f"collect_{c.name}") is None and c.default)
               or getattr(args, f"collect_{c.name}")]
    my_cnf = os.path.expanduser(args.my_cnf)

    def make_scraper(nodes: Database, ledger: RestartLedger) -> Scraper:
        return Scraper(nodes, enabled, ExporterState(ledger), args.scrape_timeout,
                       args.slow_interval)

    def for_cluster(cluster: Cluster) -> Scraper:
        return cluster_scraper(cluster, my_cnf, args, enabled)

    scraper: Scraper | None = None
    clusters: ClusterSet | None = None
    try:
        web = webconfig.load(args.web_config)
        address = parse_listen(args.listen)
        if args.clusters:
            mycnf.read_sections(my_cnf)  # unreadable or malformed: say so at start-up
            clusters = ClusterSet(args.clusters, for_cluster)
            what = f"NDB clusters of {args.clusters} on /probe?cluster=NAME: " + (
                ", ".join(clusters.names()) or "none yet")
        else:
            cfg = mycnf.load(my_cnf)
            warn_unverified(cfg, "the SQL node")
            scraper = make_scraper(Database(cfg, args.query_timeout),
                                   RestartLedger(args.state_file))
            what = f"SQL node {cfg.target()} as {cfg.user} on {args.path}"
    except (ConfigError, DescriptionError, ValueError) as exc:
        print(f"ndbinfo_exporter: {exc}", file=sys.stderr)
        return 2
    try:
        server = make_server(address, args.path, scraper, web, clusters)
    except OSError as exc:
        print(f"ndbinfo_exporter: cannot listen on {args.listen}: {exc.strerror}",
              file=sys.stderr)
        return 2
    log.info("ndbinfo_exporter %s serving %s://%s: %s; collectors: %s", __version__,
             "https" if web.ssl_context else "http", args.listen, what,
             ", ".join(c.name for c in enabled))

    def stop(signum: int, frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        if scraper is not None:
            scraper.close()
        if clusters is not None:
            clusters.close()
    log.info("stopped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
