"""Where the loadgen may write, checked before it writes anything.

1. The cluster: `--cluster NAME` must be a cluster of the description (`--description
   clusterscope.yml`, the file the rest of the stack reads) that says `loadgen: true`, and
   every `--target` must be one of its nodes (host:port as the description lists it). A
   label alone decides nothing: an option file pointed at production stays refused. On a
   Galera cluster every target must also call its cluster by the described name
   (`@@wsrep_cluster_name`; `wsrep_cluster_name:` in the description when it is not the
   cluster's `name`): an address reused or resolved elsewhere is caught at the server.
2. The account: `SHOW GRANTS` may hold USAGE on `*.*` and privileges on `cs\\_`-prefixed
   schemas (where the loadgen's `cs_<experiment>` schemas live), nothing else: no global
   privilege, no other schema, no PROXY, no role, no GRANT OPTION. Each grant beyond that is
   named with the REVOKE that removes it.

The refusal names the fix and never repeats a SHOW GRANTS line as the server wrote it (a
MariaDB one may end in the account's password hash).
"""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass

import pymysql
from clusterscope_inventory.description import Cluster, DescriptionError, load

from clusterscope_loadgen.target import Target, TargetError, connection

# the schemas the loadgen owns: a grant's schema pattern must start with `cs\_` (`_` is a
# wildcard in a schema name of GRANT, so `cs_%` would also match `csv_data`)
OWN_PREFIX = "cs\\_"
# ER_UNKNOWN_SYSTEM_VARIABLE (MySQL and MariaDB error 1193): MySQL has no wsrep_* variables
UNKNOWN_SYSTEM_VARIABLE = 1193
ENGINE_KINDS = {"galera": ("galera",), "ndb": ("ndb",), "innodb": ("galera", "ndb")}


class GuardError(RuntimeError):
    """The loadgen must not write here; the message says what to change."""


def allowed_cluster(description: str | None, name: str | None, engine: str,
                    targets: list[Target]) -> Cluster:
    """The described cluster the targets belong to, if the description lets the loadgen
    write there; a GuardError naming the fix otherwise."""
    if not description:
        raise GuardError("the loadgen writes only to a cluster its description allows: give"
                         " --description clusterscope.yml and --cluster NAME (compose passes"
                         " the description and LOADGEN_CLUSTER)")
    if not name:
        raise GuardError(f"--cluster names the cluster of {description} to write to"
                         " (compose: LOADGEN_CLUSTER in .env)")
    try:
        desc = load(description)
    except DescriptionError as exc:
        raise GuardError(str(exc)) from None
    cluster = desc.cluster(name)
    if cluster is None:
        known = ", ".join(c.name for c in desc.clusters) or "none"
        raise GuardError(f"{description} has no cluster {name!r} (its clusters: {known})")
    if not cluster.loadgen:
        raise GuardError(f"cluster {name} does not allow the loadgen: add `loadgen: true` to"
                         f" it in {description} (only for a cluster you may load and write"
                         " cs_* schemas to: never production)")
    if cluster.kind not in ENGINE_KINDS[engine]:
        raise GuardError(f"--engine {engine} writes to a {' or '.join(ENGINE_KINDS[engine])}"
                         f" cluster; {name} is {cluster.kind}")
    nodes = {_norm(n.address): n.name for n in cluster.mysqld_nodes if n.address}
    for t in targets:
        if t.socket:
            raise GuardError(f"{t.path} connects through a socket: give host= and port= of"
                             f" a node of {name}, as {description} lists it")
        if _norm(t.label) not in nodes:
            raise GuardError(f"{t.path} points at {t.label}, which is not a node of {name} in"
                             f" {description} (its nodes: {', '.join(sorted(nodes))}); point"
                             " it at one of them")
    return cluster


def _norm(address: str) -> str:
    host, _, port = address.rpartition(":")
    return f"{host.strip('[]').lower()}:{port}"


# GRANT <privileges> ON <object> TO <account> [...]: MariaDB and MySQL both print grants so
# (MariaDB KB "SHOW GRANTS"; MySQL 8.4 reference manual 15.7.7.22 "SHOW GRANTS")
_GRANT = re.compile(r"^GRANT (?P<privs>.+?) ON (?P<obj>.+?) TO (?P<who>`[^`]*`@`[^`]*`|"
                    r"'[^']*'@'[^']*')(?P<rest>.*)$", re.S)
_ROLE = re.compile(r"^GRANT (?P<roles>.+?) TO (?P<who>`[^`]*`@`[^`]*`|'[^']*'@'[^']*')", re.S)
_ROUTINE = ("FUNCTION ", "PROCEDURE ", "PACKAGE BODY ", "PACKAGE ")


@dataclass(frozen=True)
class Excess:
    """A grant beyond the loadgen's schemas, and the statement that takes it away."""
    what: str
    revoke: str


def excess(grants: list[str]) -> list[Excess]:
    """Every grant of `SHOW GRANTS` the loadgen's account should not hold."""
    out: list[Excess] = []
    for line in grants:
        m = _GRANT.match(line.strip())
        if m is None:
            r = _ROLE.match(line.strip())
            if r is None:
                out.append(Excess("a grant this check cannot read",
                                  "SHOW GRANTS, and revoke what is not on cs_* schemas"))
                continue
            out.append(Excess(f"role(s) {r['roles']}",
                              f"REVOKE {r['roles']} FROM {r['who']}"))
            continue
        privs, obj, who = m["privs"].strip(), m["obj"].strip(), m["who"]
        if "WITH GRANT OPTION" in m["rest"].upper():
            out.append(Excess(f"GRANT OPTION on {obj}",
                              f"REVOKE GRANT OPTION ON {obj} FROM {who}"))
        if privs.upper() == "PROXY":
            out.append(Excess(f"PROXY on {obj}", f"REVOKE PROXY ON {obj} FROM {who}"))
        elif privs.upper() != "USAGE" and not _own(obj):
            out.append(Excess(f"{privs} on {obj}", f"REVOKE {privs} ON {obj} FROM {who}"))
    return out


def _own(obj: str) -> bool:
    """An object inside the loadgen's schemas: `cs\\_...`.* or a table or routine of one."""
    for kind in _ROUTINE:
        if obj.upper().startswith(kind):
            obj = obj[len(kind):]
            break
    if obj.startswith("*"):
        return False  # *.*: every schema
    schema = obj.split(".", 1)[0].strip("`'\"")
    if obj.endswith(".*"):
        return schema.startswith(OWN_PREFIX)
    # a table or routine names one schema literally: no wildcards there
    return schema.startswith("cs_")


def identity_error(cluster: Cluster, engine: str, label: str, wsrep_on: bool,
                   wsrep_name: str) -> str | None:
    """Why a target whose server says (`wsrep_on`, `wsrep_name`) is not a node of the
    described Galera `cluster`, or None."""
    if cluster.kind != "galera":
        return None
    if not wsrep_on:
        # engine innodb may load a plain InnoDB server listed as a node; galera needs wsrep
        return None if engine != "galera" else (
            f"{label} is not a Galera node (wsrep_on is OFF), so not a node of {cluster.name}")
    if wsrep_name != cluster.galera_name:
        return (f"{label} belongs to the Galera cluster {wsrep_name!r} (its"
                f" wsrep_cluster_name), not {cluster.galera_name!r}: point it at a node of"
                f" {cluster.name}, or, if {cluster.name}'s nodes name their cluster"
                f" {wsrep_name!r}, say `wsrep_cluster_name: {wsrep_name}` under it in the"
                " description")
    return None


def check_identity(target: Target, cluster: Cluster, engine: str) -> None:
    """Refuse a target whose server is not a node of the described Galera cluster."""
    if cluster.kind != "galera":
        return
    try:
        with connection(target) as conn, conn.cursor() as cur:
            try:
                cur.execute("SELECT @@wsrep_on, @@wsrep_cluster_name")
                on, name = cur.fetchone()
            except pymysql.MySQLError as exc:
                if exc.args[0] != UNKNOWN_SYSTEM_VARIABLE:
                    raise
                on, name = 0, ""  # a server without wsrep (MySQL): no Galera node
    except (pymysql.MySQLError, ssl.SSLError, OSError) as exc:
        raise TargetError(f"cannot connect to {target.label}: {_reason(exc, target)}"
                          ) from None
    why = identity_error(cluster, engine, target.label, bool(int(on)), str(name))
    if why:
        raise GuardError(why)


def check_account(target: Target) -> None:
    """Refuse an account holding more than the loadgen's schemas, naming each REVOKE."""
    try:
        with connection(target) as conn, conn.cursor() as cur:
            cur.execute("SHOW GRANTS")
            grants = [str(r[0]) for r in cur.fetchall()]
    except (pymysql.MySQLError, ssl.SSLError, OSError) as exc:
        raise TargetError(f"cannot connect to {target.label}: {_reason(exc, target)}"
                          ) from None
    found = excess(grants)
    if found:
        lines = "\n".join(f"  {e.revoke};   -- {e.what}" for e in found)
        raise GuardError(f"the account of {target.path} ({target.user}) holds privileges"
                         f" beyond the loadgen's cs_* schemas; it refuses to write with them."
                         f" Revoke them (or give the loadgen its own account, docs/deploy.md):"
                         f"\n{lines}")


def _reason(exc: Exception, target: Target) -> str:
    """The server's or driver's error, without connection parameters; a failed TLS
    handshake says so and which CA it was checked against."""
    text = (f"({exc.args[0]}) {exc.args[1]}" if isinstance(exc, pymysql.MySQLError)
            and len(exc.args) >= 2 else f"{type(exc).__name__}: {exc}")
    if "SSL" in text or isinstance(exc, ssl.SSLError):
        ca = target.client.ssl.get("ca") if target.client else None
        return (f"TLS handshake failed (ssl-mode {target.client.ssl_mode if target.client else '?'}"
                f", ssl-ca {ca}): {text}")
    return text


def check(description: str | None, name: str | None, engine: str, targets: list[Target],
          say=print) -> Cluster:  # noqa: ANN001 - a print-like callable
    """Every check, for every target; the cluster they belong to."""
    cluster = allowed_cluster(description, name, engine, targets)
    for t in targets:
        check_account(t)
        check_identity(t, cluster, engine)
        if not t.verified:
            say(f"loadgen: warning: {t.label}: not verified TLS (ssl-mode"
                f" {t.client.ssl_mode if t.client else 'socket'}); set ssl-ca, ssl-cert,"
                f" ssl-key and ssl-mode=VERIFY_IDENTITY in {t.path}")
    return cluster

