"""What changed between two readings of a node: pure functions over plain dicts.

A reading of a mysqld is its global variables (name -> value, NULL as None). The server
version is the `version` variable (kind `version`), `wsrep_provider_options` is split into
its options (kind `provider_option`, one item per option that changed), every other
variable is kind `variable`. A reading of an NDB data node is its version (kind
`ndb_version`) and its configuration parameters (kind `ndb_config`).

A few globals move by themselves with every write (the GTID positions): they are never
changes. Values whose name says they hold a secret are compared but never written out.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

VARIABLE, VERSION, PROVIDER_OPTION = "variable", "version", "provider_option"
NDB_VERSION, NDB_CONFIG = "ndb_version", "ndb_config"
# the kind that names a change made of several items (an upgrade brings new variables)
KIND_RANK = (VERSION, NDB_VERSION, NDB_CONFIG, PROVIDER_OPTION, VARIABLE)
KINDS = KIND_RANK

PROVIDER_OPTIONS = "wsrep_provider_options"
# Globals the server rewrites on every commit or replicated event: GTID positions
# (MariaDB: gtid_binlog_pos, gtid_binlog_state, gtid_current_pos, gtid_slave_pos, read-only
# globals of the binary log and replication state; MySQL: gtid_executed, gtid_purged,
# gtid_owned). Reading them as changes would report every transaction.
# wsrep_start_position (MariaDB KB, "Galera Cluster System Variables": the UUID:seqno a
# node starts from) is set at each start from the recovered position (`mariadbd
# --wsrep-recover`, galera_recovery, the lab's start-node): a restart, not a setting.
MOVING = frozenset({"gtid_binlog_pos", "gtid_binlog_state", "gtid_current_pos",
                    "gtid_slave_pos", "gtid_executed", "gtid_purged", "gtid_owned",
                    "wsrep_start_position"})
# Galera rewrites these on every membership change while wsrep_auto_increment_control is
# ON (MariaDB KB, "Galera Cluster System Variables": wsrep_auto_increment_control
# "automatically adjusts auto_increment_increment and auto_increment_offset ... when the
# cluster membership changes"): a node joining is no configuration change.
AUTO_INCREMENT = frozenset({"auto_increment_increment", "auto_increment_offset"})
# A value is never written out when its name looks like a credential (MariaDB masks
# wsrep_sst_auth itself; a provider option like socket.ssl_password would not be).
SECRET = re.compile(r"password|passwd|secret|private|(^|_)auth($|_)", re.IGNORECASE)
HIDDEN = "(hidden)"
# Longer values are cut in events (optimizer_switch, a long list): head + digest
MAX_VALUE = 200


@dataclass(frozen=True)
class Item:
    """One thing that changed on one node: `old`/`new` None means absent (a variable a
    version added or removed)."""

    kind: str
    name: str
    old: str | None
    new: str | None

    @property
    def key(self) -> tuple[str, str, str | None]:
        """What makes two nodes' items the same change (the value they moved to)."""
        return (self.kind, self.name, self.new)

    def shown(self) -> tuple[str, str]:
        return shown(self.name, self.old), shown(self.name, self.new)

    def text(self) -> str:
        old, new = self.shown()
        return f"{self.name} {old} -> {new}"


def shown(name: str, value: str | None) -> str:
    """A value as events show it: absent, hidden, or cut to MAX_VALUE with a digest (so two
    long values that differ still look different)."""
    if value is None:
        return "(absent)"
    if SECRET.search(name):
        return HIDDEN
    if len(value) <= MAX_VALUE:
        return value
    digest = hashlib.sha256(value.encode()).hexdigest()[:12]
    return f"{value[:MAX_VALUE - 40]}...({len(value)} chars, sha256 {digest})"


def provider_options(text: str | None) -> dict[str, str]:
    """`wsrep_provider_options` as option -> value. The server prints `key = value; ...`
    (galera's gu::Config, read the same way by prometheus/mysqld_exporter
    collector/global_variables.go @007e9b6e1684, parseWsrepProviderOptions); a piece
    without ` = ` is kept whole as its own key so nothing is lost."""
    out: dict[str, str] = {}
    for part in (text or "").split(";"):
        part = part.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        out[key.strip() if sep else part] = value.strip() if sep else ""
    return out


def _dict_items(kind: str, old: dict[str, str | None], new: dict[str, str | None],
                skip: frozenset[str] = frozenset()) -> list[Item]:
    return [Item(kind, name, old.get(name), new.get(name))
            for name in sorted(set(old) | set(new))
            if name not in skip and old.get(name) != new.get(name)]


def server_items(old: dict[str, str | None], new: dict[str, str | None],
                 ignore: frozenset[str] = frozenset()) -> list[Item]:
    """The changes between two readings of a mysqld's global variables (names lower case).
    An empty reading (nothing read yet) has no changes."""
    if not old or not new:
        return []
    out: list[Item] = []
    if old.get("version") != new.get("version"):
        out.append(Item(VERSION, "version", old.get("version"), new.get("version")))
    if old.get(PROVIDER_OPTIONS) != new.get(PROVIDER_OPTIONS):
        out += _dict_items(PROVIDER_OPTION, provider_options(old.get(PROVIDER_OPTIONS)),
                           provider_options(new.get(PROVIDER_OPTIONS)))
    skip = MOVING | ignore | {"version", PROVIDER_OPTIONS}
    if (new.get("wsrep_auto_increment_control") or "").upper() == "ON":
        skip |= AUTO_INCREMENT
    out += _dict_items(VARIABLE, old, new, frozenset(skip))
    return out


def ndb_items(old: dict, new: dict) -> list[Item]:
    """The changes of one data node: `{"version": str, "config": {param: value}}` each.
    A part the reading lacks (a view this version does not serve) is not compared."""
    out: list[Item] = []
    upgraded = bool(old.get("version") and new.get("version")
                    and old["version"] != new["version"])
    if upgraded:
        out.append(Item(NDB_VERSION, "version", old["version"], new["version"]))
    if old.get("config") and new.get("config"):
        before, after = old["config"], new["config"]
        if not upgraded:
            # a parameter missing from one reading is unread (a NULL row), not removed;
            # across an upgrade, parameters do come and go
            both = before.keys() & after.keys()
            before = {k: before[k] for k in both}
            after = {k: after[k] for k in both}
        out += _dict_items(NDB_CONFIG, before, after)
    return out


def primary(items: list[Item]) -> Item:
    """The item that names a change: a version before configuration, then by name."""
    return min(items, key=lambda i: (KIND_RANK.index(i.kind), i.name))


def summary(items: list[Item]) -> str:
    """`innodb_flush_log_at_trx_commit 2 -> 1`, or `version 10.6.1 -> 10.11.6 (+34 more)`."""
    first = primary(items)
    more = len(items) - 1
    return first.text() + (f" (+{more} more)" if more else "")
