"""VictoriaLogs and the OpenTelemetry Collector in the real lab: lines reach VictoriaLogs with
their fields, a Galera IST recovery and a simulated NDB restart show up through the
dashboards' LogsQL, a service that comes later is shipped without a restart, and
VictoriaLogs going down stops no exporter and loses no line."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
import urllib.request
import uuid
from datetime import datetime
from pathlib import Path

import pytest
from helpers import eventually, scrape, series

from clusterscope.clients.vlogs import VLogs
from clusterscope.lab import logs_stack
from clusterscope.lab.core import Lab, Service, pid_alive
from clusterscope.lab.mariadb import connect
from clusterscope.logs import logsql

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def logs_lab(lab):
    lab.ensure("ndb", "galera", "monitoring")
    real = Lab(lab.root, lab.port_base)
    logs_stack.refresh(real)
    return lab


@pytest.fixture(scope="module")
def vlogs(logs_lab) -> VLogs:
    return VLogs(f"http://127.0.0.1:{logs_lab.port('victoria-logs')}")


def _append(path: str, line: str) -> None:
    with open(path, "a") as f:
        f.write(line + "\n")


def _mariadb_line(severity: str, text: str) -> str:
    # MariaDB's own format: local time, hour padded with a space
    now = datetime.now()
    return f"{now:%Y-%m-%d} {now.hour:2d}:{now:%M:%S} 0 [{severity}] {text}"


def _has(marker: str) -> str:
    """A LogsQL substring filter on the message (a phrase filter would match whole words)."""
    return f"~{logsql.quote(marker.replace('.', '[.]'))}"


def test_a_galera_log_line_reaches_victorialogs_with_its_fields(logs_lab, vlogs):
    node = logs_lab.service("galera-node2")
    marker = f"clusterscope-logs-test {uuid.uuid4()}"
    line = _mariadb_line("Warning", marker)
    # two more lines of the same second, written at once after it
    _append(node["extra"]["error_log"], "\n".join(
        [line, line.replace(marker, f"{marker} second"), line.replace(marker, f"{marker} third")]))
    second = datetime.strptime(line[:19].replace("  ", " 0"), "%Y-%m-%d %H:%M:%S").timestamp()
    found = vlogs.wait_for(f'{{cluster="lab-galera", node="node2"}} {_has(marker)}', second - 5,
                           timeout=30, min_count=3)
    assert len(found) == 3
    labels = found[0].labels
    assert (labels["cluster"], labels["node"], labels["component"], labels["level"]) == (
        "lab-galera", "node2", "mariadb", "warning")
    # each entry carries the line's own second, not the time it was read ...
    assert {int(e.ts_ns // 1_000_000_000) for e in found} == {int(second)}
    # ... and lines of one second keep the order they were written in (VictoriaLogs orders
    # equal timestamps its own way): increasing, or all read > 1 s late (capped, equal)
    by_line = {e.line: e.ts_ns for e in found}
    stamps = [by_line[ln] for ln in sorted(by_line, key=lambda t: ("second" in t) + 2 * (
        "third" in t))]
    capped = all(ts % 1_000_000_000 == 999_999_999 for ts in stamps)
    assert capped or stamps[0] < stamps[1] < stamps[2], stamps


def test_errors_by_node_counts_an_error_line(logs_lab, vlogs):
    node = logs_lab.service("galera-node1")
    marker = f"clusterscope-logs-test error {uuid.uuid4()}"
    t0 = time.time()
    _append(node["extra"]["error_log"], _mariadb_line("ERROR", marker))
    vlogs.wait_for(f'{{cluster="lab-galera"}} {_has(marker)}', t0 - 5, timeout=30)
    expr = logsql.within(logsql.render(logsql.QUERIES["errors_by_node"], cluster="lab-galera"),
                         "10m")
    series = {(r["metric"].get("node"), r["metric"].get("component")): float(r["value"][1])
              for r in vlogs.stats(expr)}
    assert series.get(("node1", "mariadb"), 0) >= 1
    errors = vlogs.entries(logsql.render(logsql.QUERIES["errors"], cluster="lab-galera"),
                           t0 - 5)
    assert any(marker in e.line for e in errors)


def test_exporter_logs_are_shipped(logs_lab, vlogs):
    t0 = time.time() - 3600
    # one mysqld_exporter probes every node of every cluster: it belongs to no one cluster
    found = vlogs.wait_for('{component="mysqld-exporter"}', t0, timeout=30)
    assert {(e.labels["cluster"], e.labels["service"]) for e in found} == {
        ("lab", "mysqld-exporter")}
    assert all(e.labels.get("level") for e in found)  # its logfmt severity
    tracker = vlogs.wait_for('{component="galera-tracker"}', t0, timeout=30)
    assert {e.labels["cluster"] for e in tracker} == {"lab-galera"}


def test_galera_ist_recovery_appears_as_events(logs_lab, vlogs):
    t0 = time.time()
    logs_lab.cli("lab", "galera", "kill-node", "3")
    # writes node3 misses, so its rejoin needs an IST (no gap: it just rejoins)
    conn = connect(logs_lab.service("galera-node1")["client_config"])
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS cs_logs_test")
            cur.execute("CREATE TABLE IF NOT EXISTS cs_logs_test.t"
                        " (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
            for i in range(20):
                cur.execute("INSERT INTO cs_logs_test.t (v) VALUES (%s)", (i,))
    finally:
        conn.close()
    logs_lab.cli("lab", "galera", "start-node", "3", timeout=400)
    expr = logsql.render(logsql.QUERIES["galera_recovery_events"], cluster="lab-galera",
                         node="node3")

    def synced(entries):
        return any(e.labels.get("to_state") == "SYNCED" for e in entries)

    deadline = time.monotonic() + 30
    while True:
        entries = vlogs.entries(expr, t0 - 1)
        if synced(entries) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    shifts = [(e.labels.get("from_state"), e.labels.get("to_state")) for e in entries
              if e.labels.get("to_state")]
    assert ("PRIMARY", "JOINER") in shifts and ("JOINED", "SYNCED") in shifts, shifts
    assert shifts.index(("PRIMARY", "JOINER")) < shifts.index(("JOINED", "SYNCED"))
    kinds = {logsql.classify(e.line) for e in entries}
    assert "galera_ist_received" in kinds, [e.line for e in entries]
    assert all(e.labels["node"] == "node3" for e in entries)
    # the annotation's query finds the same state changes, its title in the message
    anno = next(a for a in logsql.ANNOTATIONS if a["name"] == "Galera state changes")
    anno_entries = vlogs.entries(logsql.render(anno["expr"], cluster="lab-galera",
                                               node="node3"), t0 - 1)
    assert {(e.labels.get("node"), e.labels.get("to_state")) for e in anno_entries} >= {
        ("node3", "JOINER"), ("node3", "SYNCED")}
    assert any(e.line.startswith("node3: PRIMARY -> JOINER  ") for e in anno_entries)
    transfers = next(a for a in logsql.ANNOTATIONS if a["name"].startswith("Galera state tr"))
    lines = [e.line for e in vlogs.entries(logsql.render(transfers["expr"], cluster="lab-galera",
                                                         node="node3"), t0 - 1)]
    assert any("IST received" in ln for ln in lines), lines


def test_simulated_ndb_restart_appears_as_events(logs_lab, vlogs):
    t0 = time.time()
    logs_lab.cli("lab", "ndb", "restart-node", "2", "--profile", "7.6", "--time-scale", "120",
                 "--wait", timeout=300)
    expr = logsql.render(logsql.QUERIES["ndb_restart_phases"], cluster="lab-ndb")
    want = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101}

    def every_phase_and_started() -> bool:
        got = vlogs.entries(expr, t0 - 1)
        mine = [e for e in got if e.labels.get("node") == "2"]
        return (want <= {int(e.labels["phase"]) for e in mine if e.labels.get("phase")}
                and any(logsql.classify(e.line) == "ndb_started" for e in mine))

    # the store makes each shipped batch searchable on its own flush, so "Started" can be
    # visible a moment before the batch that held phases 6-9: wait for all of them
    eventually(every_phase_and_started, 30, "every start phase and Started of node 2")
    entries = vlogs.entries(expr, t0 - 1)
    node2 = [e for e in entries if e.labels.get("node") == "2"]
    phases = {int(e.labels["phase"]): e.ts_ns for e in node2 if e.labels.get("phase")}
    # every start phase of a node restart, each stamped with the cluster log's own time
    # (whole seconds: at --time-scale 120 several phases share one, so only "not after
    # Started" is an order the store can keep)
    assert set(phases) >= want, sorted(phases)
    started = [e.ts_ns for e in node2 if logsql.classify(e.line) == "ndb_started"]
    assert started and max(phases.values()) <= max(started)
    # in the cluster log's order (the phases' order here), never before their second
    order = [phases[p] for p in sorted(phases)]
    assert order == sorted(order)
    anno = next(a for a in logsql.ANNOTATIONS if a["name"].startswith("NDB restarts"))
    anno_lines = [e.line for e in vlogs.entries(logsql.render(anno["expr"], cluster="lab-ndb"),
                                                t0 - 1)]
    assert any(ln.startswith("NDB node 2: ") and "Node 2: Started (" in ln
               for ln in anno_lines), anno_lines
    # the same events through the CLI, marked simulated
    out = logs_lab.cli("logs", "events", "--json", "--since", "10m", "--cluster", "lab-ndb")
    events = [json.loads(ln) for ln in out.stdout.splitlines()]
    started = [ev for ev in events if ev["kind"] == "ndb_started" and ev["node"] == "2"]
    assert started and all(ev["simulated"] for ev in events)
    assert all(e.labels.get("simulated") == "true" for e in entries)


def test_a_service_that_comes_later_is_shipped_after_refresh(logs_lab, vlogs):
    real = Lab(logs_lab.root, logs_lab.port_base)
    name = f"logs-test-{uuid.uuid4().hex[:8]}"
    log = real.log_path(name)
    marker = f"clusterscope-logs-test late service {uuid.uuid4()}"
    t0 = time.time()
    log.write_text(f"level=error msg=\"{marker}\"\n")
    real.register(Service(name=name, part="galera", what="a test's stand-in service",
                          host="127.0.0.1", port=None, pid=None, log=str(log)))
    try:
        collector_pid = real.service("otelcol").pid
        assert logs_stack.refresh(real)  # what monitoring's after_lab_change() does: a SIGHUP
        found = vlogs.wait_for(f'{{component="{name}"}} {_has(marker)}', t0 - 5, timeout=60)
        assert found[0].labels["cluster"] == "lab-galera"
        assert found[0].labels["level"] == "error"
        assert real.service("otelcol").pid == collector_pid  # no restart needed
        assert real.running("otelcol")
    finally:
        real.unregister(name)
        logs_stack.refresh(real)


def _metrics_ok(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            return r.status == 200 and len(r.read()) > 0
    except OSError:
        return False


def test_victorialogs_down_stops_no_exporter_and_loses_no_line(logs_lab, vlogs):
    """Runs last in this module: it kills VictoriaLogs and brings it back."""
    real = Lab(logs_lab.root, logs_lab.port_base)
    exporters = [s for s in real.services() if (s.extra or {}).get("scrape")
                 and s.name not in (logs_stack.VLOGS, logs_stack.OTELCOL) and s.port]
    assert exporters
    svc = real.service(logs_stack.VLOGS)
    otelcol_port = real.port(logs_stack.OTELCOL)
    try:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(svc.pid, signal.SIGKILL)
        eventually(lambda: not pid_alive(svc.pid, svc.start_time), 10, "VictoriaLogs gone")
        marker = f"clusterscope-logs-test while-vlogs-down {uuid.uuid4()}"
        t0 = time.time()
        error_log = logs_lab.service("galera-node3")["extra"]["error_log"]

        def read_by_collector() -> float:
            # the counter as prometheus_client parses it (a counter sample is *_total)
            return sum(v for lb, v in series(scrape(otelcol_port),
                                             "otelcol_receiver_accepted_log_records_total")
                       if ".node3.mariadb." in lb.get("receiver", ""))
        before = read_by_collector()
        _append(error_log, _mariadb_line("Note", marker))
        # the collector reads the line and queues it (on disk) while the store is down
        eventually(lambda: read_by_collector() > before, 30,
                   "the collector reading the line written while VictoriaLogs is down")
        eventually(lambda: sum(v for _, v in series(scrape(otelcol_port),
                                                    "otelcol_exporter_queue_size")) > 0,
                   30, "the line waiting in the collector's queue")
        down = {s.name: _metrics_ok(s.port) for s in exporters}
        assert all(down.values()), down
        assert real.running(logs_stack.OTELCOL)
    finally:
        logs_stack.up(real)  # VictoriaLogs back for whatever runs next
    # the collector's retries deliver the line written while VictoriaLogs was down
    found = vlogs.wait_for(f'{{cluster="lab-galera", node="node3"}} {_has(marker)}', t0 - 5,
                           timeout=90)
    assert len(found) == 1
    assert Path(real.service(logs_stack.VLOGS).extra["data"]).is_dir()
