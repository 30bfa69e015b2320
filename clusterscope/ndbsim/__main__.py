"""The model process: `python -m clusterscope.ndbsim --socket S --scenario X ...`.

Ticks at least once a second (10 times a second while a restart runs, so even a restart
played at a large --time-scale shows every status at least once), applies commands queued
by separate CLI calls, writes the tables, the state and the cluster log.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
import traceback
from pathlib import Path

import pymysql

from clusterscope.ndbsim import rows
from clusterscope.ndbsim import scenario as scenarios
from clusterscope.ndbsim.clusterlog import ClusterLog
from clusterscope.ndbsim.model import Model
from clusterscope.ndbsim.store import Mirror, Store
from clusterscope.ndbsim.workload import TABLE_ID0

FULL_EVERY = 1.0
FAST_TICK = 0.1


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.sc = scenarios.load(args.scenario)
        self.version = args.version or self.sc.version
        # the data nodes may run an older release than the SQL node (a rolling upgrade
        # upgrades the SQL nodes last... or first): the model plays the data nodes
        self.data_version = args.data_version or self.version
        self.model = Model(self.sc, self.data_version, sql_port=args.sql_port,
                           seed=args.seed)
        # the first SQL node holds the control tables; the others mirror ndbinfo
        self.store = Store(args.socket[0], self.version, self.data_version)
        self.mirrors = [Mirror(sock) for sock in args.socket[1:]]
        self.primary_down: str | None = None
        self.log = ClusterLog(Path(args.cluster_log))
        self.stop = False

    def command(self, cmd: dict) -> dict:
        m = self.model
        kind = cmd.get("cmd")
        if kind == "restart":
            run = m.start_restart(int(cmd["node"]), cmd.get("profile"),
                                  bool(cmd.get("initial")), float(cmd.get("time_scale") or 1))
            self.store.record_restart(run.id, run.node, run.profile, run.initial,
                                      run.time_scale, run.planned_total())
            return {"restart_id": run.id, "node": run.node, "profile": run.profile,
                    "planned_total_secs": run.planned_total(),
                    "planned_wall_secs": round(run.planned_total() / run.time_scale, 1)}
        if kind == "stop-node":
            run = m.stop_node(int(cmd["node"]))
            self.store.record_restart(run.id, run.node, run.profile, run.initial,
                                      run.time_scale, run.planned_total())
            return {"restart_id": run.id, "node": run.node}
        if kind in ("stop-all", "start-all"):
            m.stop_all() if kind == "stop-all" else m.start_all()
            self.store.apply_views(m.faults.offline, self.broken())
            return {"cluster_down": m.cluster_down}
        if kind == "start-node":
            run = m.start_node(int(cmd["node"]), float(cmd.get("time_scale") or 1))
            return {"restart_id": run.id, "node": run.node,
                    "planned_wall_secs": round(run.planned_total() / run.time_scale, 1)}
        if kind == "fault":
            return self.fault(cmd)
        if kind == "config":
            live = [n.id for n in m.live()]
            return m.config.set(str(cmd["param"]), str(cmd["value"]), bool(cmd.get("now")),
                                live)
        if kind == "version":
            self.version = cmd["version"]
            self.data_version = cmd.get("data_version") or self.version
            m.version = self.data_version
            self.store.version = self.version
            self.store.data_version = self.data_version
            self.store.ensure_schema(m.faults.offline, self.broken())
            self.store.set_null_columns(m.faults.null_columns)
            unserved, columns = self.store.not_served()
            return {"version": self.version, "data_version": self.data_version,
                    "not_served": sorted(unserved), "columns_not_served": columns}
        raise ValueError(f"unknown command {kind!r}")

    def tables(self, full: bool = True) -> dict[str, rows.Rows]:
        """Base-table name -> (columns, rows). `full=False`: only what a restart changes."""
        if full:
            self.model.membership_changed = False
        return rows.tables(self.model, full)

    def broken(self) -> set[str]:
        """Views whose scans fail: the view-error fault's, or all of them while every data
        node is stopped. An SQL node that lost the cluster answers a scan with an error,
        not rows (mysql/mysql-server storage/ndb/plugin/ha_ndbinfo.cc: 8.0 opens the table
        OFFLINE_DISCONNECTED and rnd_init returns HA_ERR_NO_CONNECTION; 7.x open() fails
        with err2mysql(ERR_ClusterFailure)), the same error as the view-error fault."""
        if self.model.cluster_down:
            from ndbinfo_exporter import schema
            return {v.name for v in schema.views_for(self.version)}
        return self.model.faults.view_error

    def fault(self, cmd: dict) -> dict:
        f = self.model.faults
        name, on = cmd["fault"], bool(cmd.get("on", True))
        if name in ("transporter-overload", "transporter-slowdown"):
            key = (int(cmd.get("node") or 0), int(cmd.get("remote") or 0))
            target = f.overload if name == "transporter-overload" else f.slowdown
            if on:
                target.add(key)
            else:
                target.difference_update({k for k in target if not cmd.get("node")
                                          or k == key})
        elif name == "lcp-stall":
            f.lcp_stall = on
        elif name == "arbitrator-lost":
            f.arbitrator_lost = on
        elif name == "long-transaction":
            node = int(cmd.get("node") or self.sc.data_nodes[0])
            if node not in self.model.nodes:
                raise ValueError(f"node {node} is not a data node of this cluster")
            f.long_transaction = node if on else None
        elif name == "lock-contention":
            table = int(cmd.get("table") or TABLE_ID0)
            if table not in self.model.work.table_weights:
                raise ValueError(f"table id {table} is not a user table of the scenario"
                                 f" ({TABLE_ID0}..{TABLE_ID0 + self.sc.tables - 1})")
            f.lock_contention = table if on else None
        elif name == "restart-stuck":
            f.restart_stuck = int(cmd["status"]) if on else None
        elif name == "null-columns":
            from ndbinfo_exporter import schema
            view = schema.view(cmd["view"])
            cols = cmd.get("columns") or []
            unknown = [c for c in cols if c not in {x.name for x in view.columns}]
            if unknown or not cols:
                raise ValueError(f"view {view.name} has no column(s) {', '.join(unknown)};"
                                 f" it has: {', '.join(x.name for x in view.columns)}")
            if on:
                f.null_columns[view.name] = cols
            else:
                f.null_columns.pop(view.name, None)
            self.store.set_null_columns(f.null_columns)
        elif name == "view-error":
            from ndbinfo_exporter import schema
            view = schema.view(cmd["view"]).name
            (f.view_error.add if on else f.view_error.discard)(view)
            self.store.apply_views(f.offline, self.broken())
        elif name == "ndbinfo-offline":
            f.offline = on
            self.store.apply_views(f.offline, self.broken())
        elif name == "clear":
            self.model.faults = type(f)()
            self.store.set_null_columns({})
            self.store.apply_views(False, self.broken())
        else:
            raise ValueError(f"unknown fault {name!r}")
        return {"faults": self.model.faults.as_dict()}

    def run(self) -> None:
        self.store.ensure_schema()
        for mirror in self.mirrors:
            mirror.write(self.store, self.tables(full=True), False, set(), {})
        self.log.write([("INFO", f"Node {self.sc.mgm_nodes[0]}: Simulated cluster"
                                 f" '{self.sc.name}' (version {self.version}, data nodes"
                                 f" {self.data_version}) model started")])
        last = time.monotonic()
        last_full = 0.0
        while not self.stop:
            try:
                last, last_full = self.step(last, last_full)
            except pymysql.OperationalError as exc:
                # the SQL node went away (restart, overload): keep the model, retry
                print(f"ndbsim: database unavailable ({exc}); retrying in 2 s", flush=True)
                self.store.last.clear()  # MEMORY tables come back empty after a restart
                time.sleep(2)
            except Exception:  # noqa: BLE001 - one bad tick must not end the cluster
                traceback.print_exc()
                print("ndbsim: the tick above failed; going on in 1 s", flush=True)
                self.store.last.clear()
                time.sleep(1)

    def step(self, last: float, last_full: float) -> tuple[float, float]:
        now = time.monotonic()
        try:
            for cid, cmd in self.store.pending_commands():
                try:
                    result, ok = self.command(cmd), True
                except (ValueError, KeyError) as exc:
                    result, ok = {"error": str(exc) or repr(exc)}, False
                # every SQL node serves the new schema, views and faults before the command
                # is reported done: the CLI returns to a cluster whose SQL nodes agree
                f = self.model.faults
                for mirror in self.mirrors:
                    mirror.resync()
                    mirror.write(self.store, self.tables(full=True), f.offline,
                                 self.broken(), f.null_columns)
                self.store.finish_command(cid, ok, result)
        except pymysql.MySQLError as exc:
            self._primary_lost(exc)
        self.model.tick(now - last)
        last = now
        full = (now - last_full >= FULL_EVERY) or self.model.membership_changed
        tables = self.tables(full=full)
        try:
            self.store.write(tables)
            if self.primary_down is not None:
                print("ndbsim: the first SQL node is back", flush=True)
                self.primary_down = None
        except pymysql.MySQLError as exc:
            self._primary_lost(exc)
        f = self.model.faults
        for mirror in self.mirrors:
            # a mirror that missed rows (it was away) gets every table again
            whole = full or mirror.store is None or mirror.dirty
            mirror.write(self.store, self.tables(full=True) if whole and not full
                         else tables, f.offline, self.broken(), f.null_columns)
        if full:
            last_full = now
        self.flush_events(full)
        busy = bool(self.model.restarts)
        step = FAST_TICK if busy else FULL_EVERY
        time.sleep(max(0.02, step - (time.monotonic() - now)))
        return last, last_full

    def _primary_lost(self, exc: Exception) -> None:
        """The first SQL node (control tables) went away: the model and the other SQL nodes
        go on; its tables are written whole when it answers again (MEMORY tables come back
        empty after a restart), and the events it missed wait for it."""
        if self.primary_down is None:
            self.primary_down = str(exc)
            print(f"ndbsim: the first SQL node is unavailable ({exc}); control commands wait"
                  " for it, the other SQL nodes go on", flush=True)
        self.store.last.clear()

    def flush_events(self, full: bool) -> None:
        m = self.model
        self.log.write(m.log)
        m.log.clear()
        if self.primary_down is not None:
            return  # status events and completions wait for the control tables
        try:
            while m.status_events:
                run_id, node, status, ctime = m.status_events[0]
                self.store.record_status(run_id, node, status, ctime)
                m.status_events.pop(0)
            while m.completed:
                run_id, _node, total = m.completed[0]
                self.store.finish_restart(run_id, total)
                m.completed.pop(0)
            if full or m.restarts:
                self.store.put_state("model", {**m.status(), "wall": time.time()})
        except pymysql.MySQLError as exc:
            self._primary_lost(exc)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m clusterscope.ndbsim",
                                description="NDB Cluster simulator model (SIMULATED data)")
    p.add_argument("--socket", required=True, action="append",
                   help="an SQL node's (MariaDB's) unix socket; repeat for each SQL node:"
                        " the first holds the control tables, every one serves ndbinfo")
    p.add_argument("--scenario", default="default", help="scenario name or YAML file")
    p.add_argument("--version", help="view profile (7.5, 7.6, 8.0, 8.4 or a release)")
    p.add_argument("--data-version", help="the data nodes' release when older than the SQL"
                   " node's (version skew during a rolling upgrade; default: --version)")
    p.add_argument("--cluster-log", required=True)
    p.add_argument("--sql-port", type=int, default=3306)
    p.add_argument("--seed", type=int)
    args = p.parse_args(argv)
    runner = Runner(args)

    def stop(*_: object) -> None:
        runner.stop = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        runner.run()
    except Exception:  # noqa: BLE001 - the log is the only place a daemon can say why
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
