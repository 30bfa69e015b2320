"""The description of what is monitored: `clusterscope.yml`, written by the user.

One file names every cluster (its kind, its nodes, which credentials reach them and where
their logs are). Everything else follows from it: the scrape targets (served as Prometheus
HTTP service discovery by `clusterscope_inventory`), the exporters' targets, the log
sources, the expected cluster sizes the rules compare against and the dashboards' cluster
and node variables. Nobody edits a file derived from it.

    clusters:
      - name: staging-galera         # the `cluster` label
        kind: galera                 # galera | ndb
        credentials: client          # a section of the exporters' option file
        loadgen: true                # the loadgen may write here (default false)
        wsrep_cluster_name: staging  # what its nodes call their cluster (default: name)
        nodes:
          - {name: node1, address: 10.0.0.11:3306, log: /srv/logs/g/node1.err}
          - {name: node2, address: 10.0.0.12:3306, credentials: client.node2}
          - {name: garb, role: garbd}
      - name: staging-ndb
        kind: ndb
        nodes:
          - {name: sql1, address: 10.0.1.21:3306}          # role sql (the default)
          - {name: sql2, address: 10.0.1.22:3306}
          - {name: mgmd1, role: mgmd, log: /srv/logs/ndb/ndb_1_cluster.log}

Who is told about alerts is its `alerting:` section (alerting.py: receivers by severity,
the heartbeat of the dead man's switch), rendered into Alertmanager's configuration.

Roles: a Galera cluster's nodes are `galera` (a mysqld with the wsrep provider, the default)
or `garbd` (the arbitrator: a member that counts in wsrep_cluster_size and has no mysqld to
scrape). An NDB cluster's are `sql` (an SQL node, the default: ndbinfo is read through the
first of them that answers), `mgmd` (a management node, whose cluster log holds the cluster's
events) or `data` (a data node: it is seen through ndbinfo; listed for its host and log).
"""

from __future__ import annotations

import os
import re
import zoneinfo
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clusterscope_inventory import alerting as alerting_mod
from clusterscope_inventory.alerting import Alerting

KINDS = ("galera", "ndb")
ROLES: dict[str, tuple[str, ...]] = {"galera": ("galera", "garbd"),
                                     "ndb": ("sql", "mgmd", "data")}
DEFAULT_ROLE = {"galera": "galera", "ndb": "sql"}
# Roles with a mysqld to log in to: they need an address and credentials.
MYSQLD_ROLES = ("galera", "sql")
# The `component` label of each role's log (clusterscope/logs/formats.py names the same).
LOG_COMPONENTS = {"galera": "mariadb", "garbd": "garbd", "sql": "mysqld", "mgmd": "ndb_mgmd",
                  "data": "ndbmtd"}
# mysqld_exporter's default auth_module (prometheus/mysqld_exporter probe.go, v0.17.2:
# `if authModule == "" { authModule = "client" }`)
DEFAULT_CREDENTIALS = "client"
DEFAULT_TIMEZONE = "UTC"

# Names become label values, file names (state files) and URL parameters: keep them plain.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
# An option-file section name (mysqld_exporter's auth_module): `client`, `client.node2`
_SECTION = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_ADDRESS = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")

_TOP_KEYS = {"clusters", "alerting"}
_CLUSTER_KEYS = {"name", "kind", "nodes", "credentials", "log_timezone", "simulated",
                 "loadgen", "wsrep_cluster_name"}
_NODE_KEYS = {"name", "role", "address", "credentials", "log", "node_exporter"}


class DescriptionError(ValueError):
    """The description cannot be used; the message names the file, the place and why."""


@dataclass(frozen=True)
class Node:
    name: str
    role: str
    address: str | None = None        # host:port of its mysqld (galera, sql)
    credentials: str = DEFAULT_CREDENTIALS
    log: str | None = None            # its log file, as the shipper and tracker see it
    node_exporter: str | None = None  # host:port of node_exporter on its host


@dataclass(frozen=True)
class Cluster:
    name: str
    kind: str
    nodes: tuple[Node, ...]
    log_timezone: str = DEFAULT_TIMEZONE
    simulated: bool = False  # the lab's NDB simulator: its series say so
    # the loadgen may write to it (its cs_* schemas): an explicit opt-in, never the default
    loadgen: bool = False
    # a Galera cluster's own name (@@wsrep_cluster_name), when it is not `name`: the loadgen
    # checks it on every node before it writes
    wsrep_cluster_name: str | None = None

    @property
    def galera_name(self) -> str:
        return self.wsrep_cluster_name or self.name

    def members(self, *roles: str) -> list[Node]:
        return [n for n in self.nodes if n.role in roles]

    @property
    def mysqld_nodes(self) -> list[Node]:
        return self.members(*MYSQLD_ROLES)

    def expected_members(self) -> int:
        """What the cluster's own size should read when every listed member is up: for
        Galera wsrep_cluster_size counts garbd too (it is a group member)."""
        if self.kind == "galera":
            return len(self.members("galera", "garbd"))
        return len(self.members("data"))


@dataclass(frozen=True)
class LogSource:
    cluster: str
    node: str
    component: str
    path: str
    timezone: str
    simulated: bool


@dataclass(frozen=True)
class Description:
    clusters: tuple[Cluster, ...] = ()
    source: str = "<description>"
    alerting: Alerting | None = None  # who is told (None: nobody, Alertmanager's UI only)
    _by_name: dict[str, Cluster] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update({c.name: c for c in self.clusters})

    def cluster(self, name: str) -> Cluster | None:
        return self._by_name.get(name)

    def of_kind(self, kind: str) -> list[Cluster]:
        return [c for c in self.clusters if c.kind == kind]

    def log_sources(self) -> list[LogSource]:
        return [LogSource(c.name, n.name, LOG_COMPONENTS[n.role], n.log, c.log_timezone,
                          c.simulated)
                for c in self.clusters for n in c.nodes if n.log]


def load(path: str | Path) -> Description:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise DescriptionError(f"{p}: cannot read the description ({exc.strerror})") from exc
    return parse_text(text, str(p))


def parse_text(text: str, source: str = "<description>") -> Description:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DescriptionError(f"{source}: not valid YAML{at}: {problem}") from exc
    return parse(data, source)


def parse(data: Any, source: str = "<description>") -> Description:
    def fail(where: str, problem: str) -> DescriptionError:
        return DescriptionError(f"{source}: {where}: {problem}")

    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise fail("top level", f"expected a mapping with `clusters:`, got {_kind(data)}")
    _no_unknown(data, _TOP_KEYS, "top level", fail)
    raw_clusters = data.get("clusters") or []
    if not isinstance(raw_clusters, list):
        raise fail("clusters", f"expected a list of clusters, got {_kind(raw_clusters)}")
    clusters: list[Cluster] = []
    for i, rc in enumerate(raw_clusters):
        clusters.append(_cluster(rc, f"clusters[{i}]", fail))
    _unique((c.name for c in clusters), "clusters", "cluster", fail)
    alerting = (alerting_mod.parse(data["alerting"], "alerting", fail)
                if data.get("alerting") is not None else None)
    return Description(tuple(clusters), source, alerting)


def _cluster(rc: Any, where: str, fail) -> Cluster:  # noqa: ANN001 - the local fail()
    if not isinstance(rc, dict):
        raise fail(where, f"expected a mapping (name, kind, nodes), got {_kind(rc)}")
    name = _name(rc.get("name"), f"{where}.name", fail)
    where = f"{where} ({name})"
    _no_unknown(rc, _CLUSTER_KEYS, where, fail)
    kind = rc.get("kind")
    if kind not in KINDS:
        raise fail(f"{where}.kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    credentials = _section(rc.get("credentials", DEFAULT_CREDENTIALS),
                           f"{where}.credentials", fail)
    tz = rc.get("log_timezone", DEFAULT_TIMEZONE)
    if not _zone(tz):
        raise fail(f"{where}.log_timezone", f"expected an IANA time zone name such as UTC or"
                   f" Europe/Berlin (the zone the nodes write their logs in), got {tz!r}")
    simulated = rc.get("simulated", False)
    if not isinstance(simulated, bool):
        raise fail(f"{where}.simulated", f"expected true or false, got {simulated!r}")
    loadgen = rc.get("loadgen", False)
    if not isinstance(loadgen, bool):
        raise fail(f"{where}.loadgen", f"expected true or false, got {loadgen!r}")
    wsrep_name = rc.get("wsrep_cluster_name")
    if wsrep_name is not None and (kind != "galera" or not isinstance(wsrep_name, str)
                                   or not wsrep_name.strip()):
        raise fail(f"{where}.wsrep_cluster_name", "expected the Galera cluster's own name (a"
                   " string; only for kind galera)")
    raw_nodes = rc.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise fail(f"{where}.nodes", "expected a non-empty list of nodes")
    nodes = tuple(_node(rn, f"{where}.nodes[{j}]", kind, credentials, fail)
                  for j, rn in enumerate(raw_nodes))
    _unique((n.name for n in nodes), f"{where}.nodes", "node", fail)
    cluster = Cluster(name, kind, nodes, tz, simulated, loadgen, wsrep_name)
    if not cluster.mysqld_nodes:
        need = "a node of role galera" if kind == "galera" else "an SQL node (role sql)"
        raise fail(where, f"needs at least {need}: clusterscope reads the cluster through it")
    return cluster


def _node(rn: Any, where: str, kind: str, credentials: str, fail) -> Node:  # noqa: ANN001
    if not isinstance(rn, dict):
        raise fail(where, f"expected a mapping (name, address, ...), got {_kind(rn)}")
    name = _name(rn.get("name"), f"{where}.name", fail)
    where = f"{where} ({name})"
    _no_unknown(rn, _NODE_KEYS, where, fail)
    role = rn.get("role", DEFAULT_ROLE[kind])
    if role not in ROLES[kind]:
        raise fail(f"{where}.role", f"a {kind} node is one of {', '.join(ROLES[kind])},"
                   f" got {role!r}")
    address = rn.get("address")
    if role in MYSQLD_ROLES:
        address = _address(address, f"{where}.address", fail, required=True)
    elif address is not None:
        raise fail(f"{where}.address", f"a {role} node has no mysqld to scrape; leave"
                   " `address` out (list its host under node_exporter for host metrics)")
    log = rn.get("log")
    if log is not None:
        _log_path(log, f"{where}.log", fail)
    return Node(name=name, role=role, address=address,
                credentials=_section(rn.get("credentials", credentials),
                                     f"{where}.credentials", fail),
                log=log,
                node_exporter=_address(rn.get("node_exporter"), f"{where}.node_exporter",
                                       fail, required=False))


# A log path is one file, named as it is: the collector would read a glob's every match,
# expands `${...}` in any value (go.opentelemetry.io/collector/confmap: `${file:...}`
# reads a file, `${http://...}` fetches a URL), and `..` leaves the directory it seems to
# name.
_GLOB = set("*?[]{}$\\")


def _log_path(log: Any, where: str, fail) -> None:  # noqa: ANN001
    if not isinstance(log, str) or not log.startswith("/"):
        raise fail(where, f"expected an absolute path, got {log!r}")
    bad = sorted(_GLOB & set(log))
    if bad:
        raise fail(where, f"one file, named as it is: no {' '.join(bad)} (globs and"
                   " variables are not taken)")
    if os.path.normpath(log) != log or any(ord(c) < 32 for c in log):
        raise fail(where, "a plain path: no `..`, `.`, doubled or trailing `/`, or control"
                   " characters")


def _zone(value: Any) -> bool:
    """An IANA zone name (the log shipper and the tracker read times without a zone in
    it); the tzdata package supplies the database where the system has none."""
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        return False
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _name(value: Any, where: str, fail) -> str:  # noqa: ANN001
    if not isinstance(value, str | int) or not _NAME.match(str(value)):
        raise fail(where, f"expected a name of letters, digits, `_`, `.` or `-` (at most 63,"
                   f" starting with a letter or digit), got {value!r}")
    return str(value)


def _section(value: Any, where: str, fail) -> str:  # noqa: ANN001
    if not isinstance(value, str) or not _SECTION.match(value):
        raise fail(where, f"expected the name of a section of the exporters' option file"
                   f" (e.g. client or client.node2), got {value!r}")
    return value


def _address(value: Any, where: str, fail, required: bool) -> str | None:  # noqa: ANN001
    if value is None and not required:
        return None
    if not isinstance(value, str) or not (m := _ADDRESS.match(value)) \
            or not 0 < int(m.group(1)) < 65536:
        raise fail(where, f"expected host:port, got {value!r}")
    return value


def _no_unknown(d: dict, known: set[str], where: str, fail) -> None:  # noqa: ANN001
    unknown = sorted(str(k) for k in d if k not in known)
    if unknown:
        raise fail(where, f"unknown key(s) {', '.join(unknown)} (known: "
                   f"{', '.join(sorted(known))})")


def _unique(names: Iterable[str], where: str, what: str, fail) -> None:  # noqa: ANN001
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise fail(where, f"two {what}s are named {n!r}")
        seen.add(n)


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__
