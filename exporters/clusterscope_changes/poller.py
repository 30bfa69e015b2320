"""One poll: read every node of every cluster of the description, compare with the last
reading, group what changed into changes and write them out.

Per cluster: each Galera node and each NDB SQL node is read with the `credentials` its
description names (the same option-file sections mysqld_exporter and ndbinfo_exporter
use); an NDB cluster's data nodes are read once, through the first SQL node that answers.
A node that does not answer keeps its last reading, so what changed while it was down
(a restart onto a new version) is found when it answers again, `since` its last reading.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import pymysql
from clusterscope_inventory.description import Cluster, Description, DescriptionError, load
from ndbinfo_exporter import mycnf
from ndbinfo_exporter.db import Unavailable, open_connection

from clusterscope_changes import diff, readers
from clusterscope_changes.detector_state import State
from clusterscope_changes.events import ChangesFile, event
from clusterscope_changes.grouping import Grouper

log = logging.getLogger("clusterscope_changes.poller")

Connect = Callable[[mycnf.ClientConfig], pymysql.connections.Connection]


@dataclass
class Options:
    description: str
    my_cnf: str
    query_timeout: float = 5.0
    ignore: frozenset[str] = frozenset()


class Detector:
    def __init__(self, opts: Options, state: State, changes: ChangesFile, grouper: Grouper,
                 connect: Connect | None = None) -> None:
        self.opts = opts
        self.state = state
        self.changes = changes
        self.grouper = grouper
        self.connect = connect or (lambda cfg: open_connection(cfg, opts.query_timeout))
        self.desc: Description | None = None
        self.desc_stamp: tuple | None = None
        self.desc_error = ""
        self.ndb_missing: dict[str, list[str]] = {}  # cluster -> views it could not read
        self.poll_seconds = 0.0
        self.polls = 0
        # (cluster, node) -> (what it logged in with, the open connection)
        self.conns: dict[tuple[str, str], tuple[tuple, pymysql.connections.Connection]] = {}

    # -- the description --------------------------------------------------------------
    def description(self) -> Description | None:
        """The description, re-read when its file changed; a broken edit keeps the last
        good one (and is reported)."""
        try:
            st = os.stat(self.opts.description)
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError as exc:
            self.desc_error = f"{self.opts.description}: {exc.strerror}"
            return self.desc
        if stamp != self.desc_stamp:
            try:
                self.desc = load(self.opts.description)
                self.desc_error = ""
            except DescriptionError as exc:
                self.desc_error = str(exc)
                log.error("%s; still watching the clusters of the last good description", exc)
            self.desc_stamp = stamp
        return self.desc

    # -- one poll ---------------------------------------------------------------------
    def poll(self, now: float | None = None) -> list[dict]:
        started = time.monotonic()
        desc = self.description()
        lines: list[dict] = []
        for cluster in desc.clusters if desc else []:
            lines += self._poll_cluster(cluster, now or time.time())
        described = {(c.name, n.name) for c in (desc.clusters if desc else [])
                     for n in c.nodes}
        for key in [k for k in self.conns if k not in described]:
            self._drop(key)  # a node no longer described
        # queued and saved before they are written: a crash in between writes a line twice
        # (readers drop the duplicate), never loses it
        with self.state.lock:
            self.changes.pending += lines
            self.state.groups = self.grouper.dump()
            self.state.pending = list(self.changes.pending)
        self._save(force=bool(lines))
        self.changes.flush()
        with self.state.lock:
            self.state.pending = list(self.changes.pending)
        if lines:
            self._save(force=True)
        self.poll_seconds = time.monotonic() - started
        self.polls += 1
        return lines

    def _save(self, force: bool) -> None:
        try:
            self.state.save(force=force)
        except OSError as exc:
            log.error("cannot save the state file %s: %s", self.state.path, exc)

    def _login(self, cluster: Cluster, node_name: str) -> mycnf.ClientConfig:
        node = next(n for n in cluster.nodes if n.name == node_name)
        path, sections = mycnf.read_sections(self.opts.my_cnf)
        cfg = mycnf.from_section(path, sections, node.credentials, dict(os.environ))
        return cfg.at(node.address or "")

    def _read(self, cluster: Cluster, node_name: str, reader: Callable) -> object:
        """reader(connection), or an Exception that says why the node was not read. The
        connection is kept for the next poll (logging in costs more than the reading:
        PyMySQL builds a TLS context per connection); a failed one is dropped and the
        next poll logs in again, with what the option file says then."""
        try:
            cfg = self._login(cluster, node_name)
        except (mycnf.ConfigError, OSError) as exc:
            return exc
        key = (cluster.name, node_name)
        ident = (cfg.host, cfg.port, cfg.socket, cfg.user, cfg.password, cfg.ssl_mode)
        for attempt in ("kept", "new"):
            kept = self.conns.get(key)
            if attempt == "kept" and not (kept and kept[0] == ident):
                continue
            if attempt == "new":
                self._drop(key)
                try:
                    self.conns[key] = (ident, self.connect(cfg))
                except (Unavailable, OSError) as exc:
                    return exc
            try:
                return reader(self.conns[key][1])
            except (pymysql.MySQLError, readers.ReadError, OSError) as exc:
                self._drop(key)
                if attempt == "new":  # a kept connection may just be stale: log in again
                    return exc
        return Unavailable("not read")  # not reached: the new attempt returns

    def _drop(self, key: tuple[str, str]) -> None:
        _, conn = self.conns.pop(key, (None, None))
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - a lost connection cannot be closed cleanly
                pass

    def _poll_cluster(self, cluster: Cluster, now: float) -> list[dict]:
        role = "galera" if cluster.kind == "galera" else "sql"
        nodes = cluster.mysqld_nodes
        lines: list[dict] = []
        for n in nodes:
            got = self._read(cluster, n.name, readers.read_variables)
            if isinstance(got, BaseException):
                self._failed(f"{cluster.name}/{n.name}", got)
                continue
            items, since = self._update(f"{cluster.name}/{n.name}", got, now,
                                        lambda old, new: diff.server_items(
                                            old, new, self.opts.ignore))
            if items:
                lines.append(self._line(cluster, n.name, role, items, len(nodes), now, since))
        if cluster.kind == "ndb":
            lines += self._poll_data_nodes(cluster, now)
        return lines

    def _poll_data_nodes(self, cluster: Cluster, now: float) -> list[dict]:
        got: object = Unavailable("the cluster has no SQL node to read ndbinfo through")
        for n in cluster.mysqld_nodes:  # the first that answers, as ndbinfo_exporter reads
            got = self._read(cluster, n.name, readers.read_ndb)
            if not isinstance(got, BaseException):
                break
        key = f"{cluster.name}/data"
        if isinstance(got, BaseException):
            self._failed(key, got)
            return []
        data, missing = got  # type: ignore[misc]
        if missing != self.ndb_missing.get(cluster.name):
            if missing:
                log.warning("%s: ndbinfo has no usable %s on this version: its changes are"
                            " not followed", cluster.name, ", ".join(missing))
            self.ndb_missing[cluster.name] = missing
        self.state.node(key).up, self.state.node(key).error = True, ""
        known = {k.split("/")[-1] for k in self.state.nodes if k.startswith(f"{key}/")}
        total = len(known | set(data))
        lines = []
        for node_id, reading in sorted(data.items(), key=lambda kv: int(kv[0])):
            items, since = self._update(f"{key}/{node_id}", reading, now, diff.ndb_items)
            if items:
                lines.append(self._line(cluster, node_id, "data", items, total, now, since,
                                        node_id=int(node_id)))
        return lines

    def _failed(self, key: str, exc: BaseException) -> None:
        st = self.state.node(key)
        text = str(exc) or type(exc).__name__
        if st.up or not st.error:
            log.warning("%s: not read (%s); its last reading is kept", key, text)
        st.up, st.error = False, text

    def _update(self, key: str, reading: dict, now: float, compare: Callable
                ) -> tuple[list[diff.Item], float]:
        """Compare with the node's last reading and keep the new one; (what changed, when
        the last reading was taken)."""
        with self.state.lock:
            st = self.state.node(key)
            if not st.up and st.error:
                log.info("%s: read again", key)
            items = compare(st.values, reading) if st.values else []
            if key.count("/") == 2 and st.values:  # a data node keeps what it did not show
                reading = {**st.values, **reading}
            since = st.read_at
            st.values, st.read_at, st.up, st.error = reading, now, True, ""
        return items, since

    def _line(self, cluster: Cluster, node: str, role: str, items: list[diff.Item],
              total: int, now: float, since: float, node_id: int | None = None) -> dict:
        group, step = self.grouper.assign(cluster.name, role, node, items, now)
        for i in items:
            self.state.count(cluster.name, node, i.kind, i.name, now)
        line = event(cluster=cluster.name, node=node, role=role, items=items, group=group,
                     step=step, nodes_total=total, since=since or None, now=now,
                     simulated=cluster.simulated, node_id=node_id)
        log.info("%s", line["msg"])
        return line
