"""The target: a `[client]` option file, the nodes it leads to, and their health.

The option file is read by the exporters' reader (ndbinfo_exporter.mycnf: the same keys,
TLS options and errors that never quote a line of it), values as written. Its `ssl-*`
options are honoured: `ssl-ca` with `ssl-mode=VERIFY_CA` or `VERIFY_IDENTITY` (or
MariaDB's `ssl-verify-server-cert`) makes every connection verified TLS, the loadgen's own
(PyMySQL) and sysbench's (sysbench.py Tls).

Health snapshots taken before and after every window decide whether the window saw a
cluster event (node down, restart, Galera membership change, node not Synced): see window.py.
"""

from __future__ import annotations

import contextlib
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pymysql
from ndbinfo_exporter import mycnf

from clusterscope_loadgen.sysbench import Endpoint, Tls


class TargetError(RuntimeError):
    """The target cannot be used; the message says why."""


@dataclass(frozen=True)
class Target:
    path: Path
    user: str
    password: str | None = field(repr=False)
    host: str
    port: int
    socket: str | None = None
    # the option file's TLS (ndbinfo_exporter.mycnf.ClientConfig), None for a socket
    client: mycnf.ClientConfig | None = field(default=None, repr=False, compare=False)

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.host, self.port)

    @property
    def label(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def verified(self) -> bool:
        """Every connection checks the server's certificate against the option file's CA."""
        return self.client is not None and self.client.ssl_mode in ("VERIFY_CA",
                                                                    "VERIFY_IDENTITY")

    @property
    def tls(self) -> Tls | None:
        """sysbench's TLS files, when the option file asks for TLS."""
        c = self.client
        if c is None or c.ssl_mode in ("DISABLED", "PREFERRED") and not c.ssl:
            return None
        return Tls(c.ssl_mode, str(c.ssl["ca"]) if "ca" in c.ssl else None,
                   str(c.ssl["cert"]) if "cert" in c.ssl else None,
                   str(c.ssl["key"]) if "key" in c.ssl else None)

    @classmethod
    def from_cnf(cls, path: str | Path) -> Target:
        p = Path(path)
        if not p.is_file():
            raise TargetError(f"target client config {p} does not exist")
        if stat.S_IMODE(p.stat().st_mode) & 0o077:
            print(f"loadgen: warning: {p} is readable by others; it holds a password (chmod"
                  " 600)", file=sys.stderr)
        try:
            path_, sections = mycnf.read_sections(p)
            section = next((s for s in ("client", "mysql", "client-server")
                            if sections.has_section(s)), "client")
            cfg = mycnf.from_section(path_, sections, section, None)
        except mycnf.ConfigError as exc:
            raise TargetError(f"target client config: {exc}") from None
        return cls(path=p, user=cfg.user, password=cfg.password, host=cfg.host,
                   port=cfg.port, socket=cfg.socket, client=cfg)


def connect(t: Target, node: Endpoint | None = None, database: str | None = None,
            timeout: float = 5.0, read_timeout: float = 30.0
            ) -> pymysql.connections.Connection:
    """A connection to `node` (default: the target's) with the target's login and TLS."""
    node = node or t.endpoint
    tls: dict[str, object] = {}
    if t.client is not None:
        kw = t.client.at(f"{node.host}:{node.port}").connect_kwargs()
        tls = {k: v for k, v in kw.items() if k in ("ssl", "ssl_disabled", "server_public_key")}
    return pymysql.connect(host=node.host, port=node.port, user=t.user,
                           password=t.password or "", database=database, autocommit=True,
                           connect_timeout=timeout, read_timeout=read_timeout,
                           write_timeout=read_timeout, **tls)


@contextlib.contextmanager
def connection(t: Target, node: Endpoint | None = None, database: str | None = None,
               timeout: float = 5.0) -> Iterator[pymysql.connections.Connection]:
    """A connection that is closed however the block ends."""
    conn = connect(t, node, database, timeout)
    try:
        yield conn
    finally:
        conn.close()


def status(conn: pymysql.connections.Connection, like: str) -> dict[str, str]:
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL STATUS LIKE %s", (like,))
        return {k.lower(): v for k, v in cur.fetchall()}


def galera_peers(t: Target) -> list[Endpoint]:
    """Other nodes of the target's Galera cluster, from wsrep_incoming_addresses."""
    try:
        conn = connect(t)
    except pymysql.MySQLError as exc:
        raise TargetError(f"cannot connect to {t.label}: {exc}") from exc
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@port")
            own_port = int(cur.fetchone()[0])
        addrs = status(conn, "wsrep_incoming_addresses").get("wsrep_incoming_addresses", "")
    finally:
        conn.close()
    peers = []
    for a in filter(None, (x.strip() for x in addrs.split(","))):
        host, _, port = a.rpartition(":")
        if not port.isdigit():
            continue
        ep = Endpoint(host.strip("[]") or t.host, int(port))
        if ep.port == own_port and ep.host in (t.host, "127.0.0.1", "localhost"):
            continue
        peers.append(ep)
    return peers


# host:port:<wsrep_node_name>, the name empty where the server has none: MySQL (an NDB SQL
# node) has no wsrep variables and fails `SELECT @@wsrep_node_name` (error 1193, unknown
# system variable), while SHOW VARIABLES LIKE answers everywhere, with no row there.
IDENTITY_SQL = ("SELECT CONCAT(@@hostname, ':', @@port, ':')",
                "SHOW VARIABLES LIKE 'wsrep_node_name'")


def identity(t: Target, node: Endpoint) -> str:
    """What cs_common.lua's identity() returns for a connection to this node."""
    with connection(t, node) as conn, conn.cursor() as cur:
        cur.execute(IDENTITY_SQL[0])
        base = str(cur.fetchone()[0])
        cur.execute(IDENTITY_SQL[1])
        row = cur.fetchone()
        return base + (str(row[1]) if row else "")


# SHOW ENGINES (= INFORMATION_SCHEMA.ENGINES): Support is YES (active), DEFAULT (active and
# the default), NO (compiled without it) or DISABLED; for NDB, DISABLED means a server built
# with NDB Cluster support but not started with --ndbcluster (MySQL 8.0 Reference Manual,
# "The INFORMATION_SCHEMA ENGINES Table", information-schema-engines-table.html). The NDB
# engine's row is named `ndbcluster` (its plugin name: INFORMATION_SCHEMA.PLUGINS of an NDB
# 8.0 SQL node lists PLUGIN_NAME ndbcluster, "Clustered, fault-tolerant tables").
NDB_ENGINE = "ndbcluster"
NDB_AVAILABLE = ("YES", "DEFAULT")


def check_ndb(t: Target) -> None:
    """Refuse a target whose server cannot create NDBCLUSTER tables, saying why."""
    try:
        with connection(t) as conn, conn.cursor() as cur:
            cur.execute("SHOW ENGINES")
            engines = {str(r[0]).lower(): str(r[1]).upper() for r in cur.fetchall()}
            cur.execute("SELECT @@version, @@version_comment")
            version = " ".join(str(v) for v in cur.fetchone())
    except pymysql.MySQLError as exc:
        raise TargetError(f"cannot connect to {t.label}: {exc}") from exc
    support = engines.get(NDB_ENGINE)
    if support in NDB_AVAILABLE:
        return
    why = ("does not list NDBCLUSTER" if support is None else
           f"lists NDBCLUSTER with Support={support}" + (
               " (a server with NDB support started without --ndbcluster)"
               if support == "DISABLED" else " (a server built without NDB)"))
    raise TargetError(f"engine ndb needs an SQL node of a MySQL NDB Cluster, but SHOW ENGINES"
                      f" on {t.label} ({version}) {why}; its engines:"
                      f" {', '.join(sorted(engines))}. Use --engine galera or innodb there")


# Status the window records besides the health verdict (SHOW GLOBAL STATUS names, lower
# case). Counters (their change over a window is kept): wsrep_flow_control_paused_ns, the
# time this node's replication was paused by flow control, and wsrep_local_cert_failures
# (codership/galera galera/src/replicator_smm_stats.cpp, release_26.4.18 0bc393fb: stats
# fc_paused_ns, local_cert_failures_()); Innodb_buffer_pool_reads, the pages InnoDB had to
# read from disk into the buffer pool (MariaDB/server storage/innobase/srv/srv0srv.cc,
# srv_export_innodb_status, commit 003cb2f4: srv_stats.buf_pool_reads). Averages over
# everything since the last FLUSH STATUS, not per window, so their value at each end is
# kept: wsrep_local_recv_queue_avg (the receive queue's length
# averaged per write-set received: gu_fifo_stats_get in galerautils/src/gu_fifo.c, reset
# only by gu_fifo_stats_flush) and wsrep_cert_deps_distance (deps_dist_ / n_certified_ in
# galera/src/certification.hpp stats_get, reset by stats_reset), same release.
COUNTERS = ("wsrep_flow_control_paused_ns", "wsrep_local_cert_failures",
            "innodb_buffer_pool_reads")
AVERAGES = ("wsrep_local_recv_queue_avg", "wsrep_cert_deps_distance")


@dataclass
class Health:
    node: Endpoint
    reachable: bool
    uptime: int = 0
    conf_id: str | None = None
    state: str | None = None
    error: str = ""
    extra: dict = field(default_factory=dict)  # COUNTERS and AVERAGES that were read


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def health(t: Target, node: Endpoint, galera: bool) -> Health:
    try:
        conn = connect(t, node, timeout=3.0)
    except pymysql.MySQLError:
        # A node that is down refuses at once; one on a machine too busy to answer in 3 s
        # gets a longer second chance before its window is called invalid.
        try:
            conn = connect(t, node, timeout=10.0)
        except pymysql.MySQLError as exc:
            return Health(node, False, error=str(exc))
    try:
        st = status(conn, "uptime")
        h = Health(node, True, uptime=int(st.get("uptime", 0)))
        st = status(conn, "innodb_buffer_pool_reads")
        if galera:
            ws = status(conn, "wsrep_%")
            h.conf_id = ws.get("wsrep_cluster_conf_id")
            h.state = ws.get("wsrep_local_state_comment")
            st.update(ws)
        for name in (*COUNTERS, *AVERAGES):
            value = _number(st.get(name))
            if value is not None:
                h.extra[name] = value
        return h
    except pymysql.MySQLError as exc:
        return Health(node, False, error=str(exc))
    finally:
        conn.close()


def window_status(before: list[Health], after: list[Health]) -> dict[str, dict[str, float]]:
    """Per node (host:port): each counter's change over the window and each average at
    both ends (`<name>_before`, `<name>_after`); what either snapshot missed is left out."""
    out: dict[str, dict[str, float]] = {}
    for b, a in zip(before, after, strict=True):
        row: dict[str, float] = {}
        for name in COUNTERS:
            if name in b.extra and name in a.extra and a.extra[name] >= b.extra[name]:
                row[name] = a.extra[name] - b.extra[name]
        for name in AVERAGES:
            for end, h in (("before", b), ("after", a)):
                if name in h.extra:
                    row[f"{name}_{end}"] = h.extra[name]
        out[f"{b.node.host}:{b.node.port}"] = row
    return out
