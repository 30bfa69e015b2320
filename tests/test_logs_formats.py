"""The shipper's parsing on real log lines: the generated collector configuration, run by the
real OpenTelemetry Collector tailing files into a real VictoriaLogs, and the same regexes in
Python; the LogsQL event patterns on the same lines. No lab needed.

Each recorded log arrives with the fields and times promtail gave it in Loki: cluster, node,
component and level (the stream fields), the line's own time (whole-second formats: its
second), multi-line entries joined, CRI and JSON-wrapped lines unwrapped.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from clusterscope_inventory.description import LogSource
from clusterscope_logs import collector
from clusterscope_logs import formats as lf
from helpers import eventually, shared_fixture
from lanes import starts
from logship import collector_ports, endpoint, lines_of, start_collector, store_and_shipper

from clusterscope import gotools
from clusterscope.clients.vlogs import Entry
from clusterscope.lab import galera_nodes as gn
from clusterscope.lab import logs_stack
from clusterscope.lab.core import Lab, Service
from clusterscope.logs import logsql

HERE = Path(__file__).parent / "fixtures"
# recorded in this project's lab
MARIADB_IST = HERE / "galera" / "restart-node3-ist-recover1-down20.log"
MARIADB_SST = HERE / "galera" / "restart-node3-sst-wipe-recover0.log"
# from the MySQL Reference Manual and "Pro MySQL NDB Cluster" (see the file's header)
NDB_MANUAL = HERE / "logs" / "ndb-cluster-log-manual.log"


def pxc80_ist() -> Path:
    """A PXC 8.0 error log (percona-toolkit's recording, read in shared/fixtures)."""
    return shared_fixture("galera", "pxc80-node3-ist.log")


def pxc80_json() -> Path:
    """PXC 8.0 lines as the Percona Operator's log collector ships them (JSON)."""
    return shared_fixture("galera", "pxc80-operator-split-node2-sst.json.log")


# A PXC 5.7 error log (log_timestamps=UTC), lines as PXC 5.7.x writes them around an IST.
PXC57 = [
    "2019-05-15T10:31:20.123456Z 0 [Note] WSREP: Shifting PRIMARY -> JOINER (TO: 1234)",
    "2019-05-15T10:31:22.004000Z 0 [Warning] WSREP: Gap in state sequence. Need state transfer.",
    "2019-05-15T10:31:25.500000Z 2 [ERROR] WSREP: Failed to prepare for incremental state"
    " transfer: Local state UUID (00000000-0000-0000-0000-000000000000) does not match group"
    " state UUID",
    "2019-05-15T10:31:40.750000+02:00 0 [Note] WSREP: Shifting JOINED -> SYNCED (TO: 1300)",
]

EXPORTER_LINES = [
    "2026-11-22 09:00:00,123 WARNING ndbinfo_exporter.scrape: collector lcp: timeout",
    'time=2026-11-22T09:00:01.000Z level=ERROR source=exporter.go:1 msg="Error pinging'
    ' mysqld"',
    "level=info ts=2026-11-22T09:00:02Z caller=main.go:1 msg=Listening",
    # mysqld_exporter v0.19.0's MySQL driver, as the lab's wrote it when a node was killed
    "[mysql] 2026/11/26 11:34:41 packets.go:58 read tcp 127.0.0.1:44550->127.0.0.1:21313:"
    " read: connection reset by peer",
]


# -- the regexes in Python -----------------------------------------------------------------
def parse_any(component: str, line: str) -> tuple[str, dict] | None:
    for fmt in lf.COMPONENT_FORMATS[component]:
        fields = lf.parse_line(fmt, line)
        if fields is not None:
            return fmt, fields
    return None


@pytest.mark.parametrize("name", ["ist", "sst", "pxc80"])
def test_every_entry_of_a_real_galera_log_parses(name: str):
    path = {"ist": MARIADB_IST, "sst": MARIADB_SST}.get(name) or pxc80_ist()
    for line in lines_of(path):
        if line[0].isspace():  # a continuation line of the entry above (multiline)
            continue
        parsed = parse_any(lf.MARIADB, line)
        assert parsed is not None, line
        fmt, fields = parsed
        assert fields["level"] in ("info", "warning", "error", "critical"), line
        assert fields["message"], line


def test_mariadb_fields_and_levels():
    fmt, f = parse_any(lf.MARIADB, "2026-11-22  3:59:38 0 [Note] WSREP: Shifting PRIMARY ->"
                                   " JOINER (TO: 265192)")
    assert (fmt, f["date"], f["time"], f["level"]) == ("mariadb", "2026-11-22", "3:59:38", "info")
    fmt, f = parse_any(lf.MARIADB, "2023-03-12T12:48:43.293802Z 0 [System] [MY-010116] [Server]"
                                   " /usr/sbin/mysqld (mysqld 8.0.28-19.1) starting")
    assert (fmt, f["subsystem"], f["level"]) == ("mysql-iso", "Server", "info")
    fmt, f = parse_any(lf.MARIADB, PXC57[2])
    assert (fmt, f["level"], f.get("subsystem")) == ("mysql-iso", "error", None)
    fmt, f = parse_any(lf.MARIADB, "WSREP_SST: [INFO] rsync SST started on joiner"
                                   " (20261122 03:59:37.889)")
    assert (fmt, f["sst_date"], f["sst_time"]) == ("wsrep-sst", "20261122", "03:59:37.889")


def test_ndb_cluster_log_fields():
    seen_nodes = set()
    for line in lines_of(NDB_MANUAL):
        fmt, f = parse_any(lf.NDB_MGMD, line)
        assert fmt == "ndb-cluster-log" and f["source"] == "MgmtSrvr", line
        seen_nodes.add(f.get("ndb_node"))
    assert {"1", "5", "6", None} <= seen_nodes  # `Alloc node id ...` names no node
    _, f = parse_any(lf.NDB_MGMD, lines_of(NDB_MANUAL)[-1])
    assert f["level"] == "critical" and f["severity"] == "ALERT"


# -- the real collector into a real VictoriaLogs -------------------------------------------
def inner_lines(lines: list[str]) -> list[str]:
    """The error-log lines inside JSON (`log` field) or CRI wrappers (partial `P` pieces
    joined), read independently of the pipeline under test."""
    out, partial = [], ""
    for line in lines:
        m = re.match(r"^\S+ (?:stdout|stderr) ([FP]) (.*)$", line)
        if m:
            partial += m.group(2)
            if m.group(1) == "F":
                out.append(partial)
                partial = ""
        elif line.startswith("{"):
            # one object may carry several lines (the collector joins what it read at once)
            out.extend(json.loads(line)["log"].rstrip("\n").split("\n"))
        else:
            out.append(line)
    return out


def cri(line: str) -> list[str]:
    """A line as the kubelet writes it to a pod log (CRI format), split into a partial and
    a final piece when long: the pipeline must join them."""
    stamp = "2026-11-24T10:00:00.000000001Z"
    if len(line) > 80:
        return [f"{stamp} stderr P {line[:60]}", f"{stamp} stderr F {line[60:]}"]
    return [f"{stamp} stderr F {line}"]


def ship(tmp_path: Path, inputs: dict[str, tuple[str, list[str], str | None]]
         ) -> dict[str, list[Entry]]:
    """Write each input (component, lines, node) to a file, ship them all in one collector
    run (cluster = the input's name, times in UTC) and return each input's entries. A
    component no description names (an exporter's) is shipped as the lab ships its own
    services' logs: the `daemon` format."""
    sources, daemons, last = [], [], {}
    for name, (component, lines, node) in inputs.items():
        log = tmp_path / f"{name}.log"
        log.write_text("\n".join(lines) + "\n")
        if component in lf.COMPONENT_FORMATS or component in lf.UNPARSED:
            sources.append(LogSource(name, node or "-", component, str(log), "Etc/UTC", False))
        else:
            daemons.append(collector.Stream(str(log), component, {
                "cluster": name, "component": component, "node": node or "-"}, "Etc/UTC",
                daemon=True))
        last[name] = next(ln for ln in reversed(inner_lines(lines)) if not ln[0].isspace())
    with store_and_shipper(tmp_path) as (lab, vlogs):
        start_collector(lab, collector.shipper_config(
            sources, endpoint=endpoint(lab), storage_dir=str(tmp_path / "storage"),
            extra=daemons, **collector_ports(lab)))

        def arrived() -> bool:
            return all(any(e.line.split("\n")[0] == last[name] for e in
                           vlogs.entries(f'{{cluster="{name}"}}', 0)) for name in inputs)
        eventually(arrived, 60, "the last line of every input in VictoriaLogs")
        time.sleep(1.5)  # a multi-line entry still open is flushed within 1 s
        return {name: vlogs.entries(f'{{cluster="{name}"}}', 0) for name in inputs}


@pytest.fixture(scope="module")
@starts("otelcol", "victoria-logs")
def shipped(tmp_path_factory) -> dict[str, list[Entry]]:
    pxc, pxc_json = lines_of(pxc80_ist()), lines_of(pxc80_json())
    return ship(tmp_path_factory.mktemp("shipped"), {
        "mariadb": (lf.MARIADB, lines_of(MARIADB_IST), "node3"),
        "pxc": (lf.MARIADB, pxc + PXC57, "pxc3"),
        "ndb": (lf.NDB_MGMD, lines_of(NDB_MANUAL), None),
        "exporter": ("mysqld-exporter", EXPORTER_LINES, "node1"),
        "json": (lf.MARIADB, pxc_json, "node2"),
        "cri": (lf.MARIADB, [p for line in pxc for p in cri(line)], "node3"),
        # an NDB SQL node writes MySQL 8's error-log format (the PXC 8.0 sample's)
        "sqlnode": (lf.MYSQLD, pxc, "sql1"),
    })


def _entry_time(ts_ns: int, line: str) -> datetime:
    """The entry's time at the precision of the line: whole-second formats get a sub-second
    part that keeps their order (formats.ORDERED_SECOND), always below one second."""
    ts = datetime.fromtimestamp(ts_ns // 1000 / 1e6, UTC)
    if re.match(r"\d{4}-\d{2}-\d{2}\s+\d{1,2}:\d{2}:\d{2} ", line):
        return ts.replace(microsecond=0)
    return ts


def _line_time(line: str) -> datetime:
    m = re.match(r"(\d{4}-\d{2}-\d{2})\s+(\d{1,2}):(\d{2}):(\d{2})", line)
    if m:
        return datetime.strptime(f"{m.group(1)} {int(m.group(2)):02d}:{m.group(3)}:{m.group(4)}",
                                 "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    m = re.search(r"\((\d{8}) (\d{2}:\d{2}:\d{2}\.\d{3})\)$", line)
    if m:
        return datetime.strptime(f"{m.group(1)} {m.group(2)}", "%Y%m%d %H:%M:%S.%f"
                                 ).replace(tzinfo=UTC)
    return datetime.fromisoformat(line.split()[0].replace("Z", "+00:00"))


def test_mariadb_lines_keep_their_time_level_and_node(shipped):
    lines = lines_of(MARIADB_IST)
    entries = shipped["mariadb"]
    assert sorted(e.line for e in entries) == sorted(lines)
    for e in entries:
        assert _entry_time(e.ts_ns, e.line) == _line_time(e.line), e.line  # the log's time
        assert (e.labels["level"], e.labels["node"], e.labels["component"]) == (
            "info", "node3", "mariadb"), e.line
        # the stream is what LogsQL's {...} selects on: these fields, no others
        assert e.labels["_stream"] == ('{cluster="mariadb",component="mariadb",level="info",'
                                       'node="node3"}')


def test_pxc_lines_and_multiline_entries(shipped):
    lines = lines_of(pxc80_ist()) + PXC57
    entries = shipped["pxc"]
    # PXC 8.0's "State transfer required:" carries two tab-indented lines: one entry
    block = [e.line for e in entries if "State transfer required" in e.line]
    assert len(block) == 1 and "\n\tGroup state:" in block[0] and "\n\tLocal state:" in block[0]
    assert len(entries) == len([ln for ln in lines if not ln[0].isspace()])
    for e in entries:
        first = e.line.splitlines()[0]
        assert _entry_time(e.ts_ns, first) == _line_time(first), first
    levels = {e.line: e.labels.get("level") for e in entries}
    assert levels[PXC57[1]] == "warning" and levels[PXC57[2]] == "error"
    assert levels[lines_of(pxc80_ist())[0]] == "info"  # [System]
    # the OTLP record's own severity too (VictoriaLogs keeps it as severity_text)
    error = next(e for e in entries if e.line == PXC57[2])
    assert (error.labels["severity_text"], error.labels["severity_number"]) == ("ERROR", "17")


def test_ndb_cluster_log_names_the_reporting_node(shipped):
    lines = lines_of(NDB_MANUAL)
    entries = shipped["ndb"]
    assert sorted(e.line for e in entries) == sorted(lines)
    for e in entries:
        assert _entry_time(e.ts_ns, e.line) == _line_time(e.line), e.line
        m = re.search(r"-- Node (\d+): ", e.line)
        assert e.labels.get("node") == (m.group(1) if m else None), e.line
    alert = next(e for e in entries if "has been aborted" in e.line)
    assert alert.labels["level"] == "critical"


def test_exporter_logs_get_their_level(shipped):
    levels = {e.line: e.labels.get("level") for e in shipped["exporter"]}
    assert [levels[ln] for ln in EXPORTER_LINES] == ["warning", "error", "info", "error"]


def test_sql_node_log_is_parsed_as_mysql(shipped):
    entries = shipped["sqlnode"]
    assert {e.labels["component"] for e in entries} == {"mysqld"}
    assert all(e.labels.get("level") for e in entries)
    assert any("State transfer required" in e.line and "\n\t" in e.line for e in entries)


@pytest.mark.parametrize("name", ["json", "cri"])
def test_wrapped_lines_arrive_as_the_inner_line(shipped, name: str):
    """Kubernetes-shipped lines (the Percona Operator's JSON, the kubelet's CRI with a
    partial piece) arrive as the error-log line itself, with its own time and level."""
    source = pxc80_json() if name == "json" else pxc80_ist()
    expected = inner_lines(lines_of(source))
    entries = shipped[name]
    # every inner line with its own time is an entry (a line without one, such as the SST
    # script's "---- Starting the MySQL server ..." banner, joins the entry before)
    assert sorted(e.line.split("\n")[0] for e in entries) == sorted(
        ln for ln in expected if re.match(r"\d{4}-\d{2}-\d{2}", ln))
    for e in entries:
        first = e.line.splitlines()[0]
        assert _entry_time(e.ts_ns, first) == _line_time(first), first
        assert e.labels["level"] in ("info", "warning", "error"), (e.labels, first)
        assert e.labels["component"] == "mariadb"
        assert not e.line.endswith("\n") and "logtag" not in e.labels


# -- LogsQL event patterns on real lines ---------------------------------------------------
def test_event_patterns_find_a_real_ist_recovery():
    kinds = [(logsql.classify(ln, "mariadb"), ln) for ln in lines_of(MARIADB_IST)]
    shifts = [re.search(r"Shifting (\S+ -> \S+)", ln).group(1)
              for k, ln in kinds if k == "galera_state_change"]
    assert shifts == ["CLOSED -> OPEN", "OPEN -> PRIMARY", "PRIMARY -> JOINER",
                      "JOINER -> JOINED", "JOINED -> SYNCED"]
    found = {k for k, _ in kinds}
    assert {"galera_ist_received", "galera_transfer_completed",
            "galera_transfer_requested"} <= found
    # the recovery query's line filter is the same alternation
    pattern = re.search(r'\} ~"((?:[^"\\]|\\.)*)"', logsql.QUERIES["galera_recovery_events"])
    alternation = pattern.group(1).encode().decode("unicode_escape")
    assert sum(bool(re.search(alternation, ln)) for ln in lines_of(MARIADB_IST)) == \
        sum(k is not None for k, _ in kinds)


def test_event_patterns_on_ndb_wording():
    kinds = {ln.split("-- ", 1)[1]: logsql.classify(ln, "ndb_mgmd")
             for ln in lines_of(NDB_MANUAL)}
    assert kinds["Node 5: Start phase 5 completed (system restart)"] == "ndb_start_phase"
    assert kinds["Node 5: Started (mysql-9.5.0 ndb-9.5.0)"] == "ndb_started"
    assert kinds["Node 5: Started arbitrator node 50 [ticket=75fd00010fa8b608]"] is None
    assert kinds["Node 5: Node 100 Connected"] is None
    # 7.6 wording
    assert logsql.classify("Node 2: Started (version 7.6.34)", "ndb_mgmd") == "ndb_started"
    assert logsql.classify("Node 1: Node 2 Disconnected", "ndb_mgmd") == "ndb_disconnected"


def test_render_fills_grafana_variables():
    q = logsql.render(logsql.QUERIES["errors_by_node"], cluster="lab-galera")
    assert "$" not in q and '{cluster=~"lab-galera"' in q
    assert logsql.within(q, "10m").startswith("_time:10m ")
    for a in logsql.annotations("vl-uid"):
        assert a["datasource"] == {"type": logsql.DATASOURCE_TYPE, "uid": "vl-uid"}
        assert a["target"]["refId"] == "Anno" and a["target"]["expr"]


# -- the collector's configuration from the lab's description and services ----------------
def test_every_lab_log_is_shipped_with_its_fields(tmp_path):
    lab = Lab(tmp_path / "lab", 23300)
    lab.save_settings("galera", {"nodes": 2, "garbd": True})
    lab.save_settings("ndb", {"sql_nodes": 1})
    node1 = str(gn.error_log(lab, 1))
    services = [
        Service("galera-node1", "galera", "node", "127.0.0.1", 1, 1, node1,
                extra={"error_log": node1, "node": "node1"}),
        Service("mysqld-exporter", "galera", "exp", "127.0.0.1", 2, 2,
                "/l/logs/mysqld-exporter.log",
                extra={"scrape": {"labels": {"cluster": "lab-galera"}}}),
        Service("ndb-model", "ndb", "sim", "127.0.0.1", None, 3, "/l/logs/ndb-model.log",
                simulated=True),
        Service("victoria-metrics", "monitoring", "vm", "127.0.0.1", 4, 4,
                "/l/logs/victoria-metrics.log"),
        # a stand-in node the description does not list (as tests register them)
        Service("logs-test-x", "galera", "stand-in", "127.0.0.1", None, None, "/l/x.log",
                extra={"error_log": "/l/x.log", "node": "logs-test-x"}),
    ]
    cfg = collector.shipper_config(
        logs_stack.lab_sources(lab, services), endpoint="http://127.0.0.1:9/", storage_dir="/s",
        health_endpoint="127.0.0.1:1", metrics_host="127.0.0.1", metrics_port=2,
        extra=logs_stack.service_streams(services))
    got = {r["include"][0]: r["resource"] for r in cfg["receivers"].values()}
    # the description's logs: both nodes (running or not), garbd, the NDB cluster log
    assert got[node1] == {"cluster": "lab-galera", "component": "mariadb", "node": "node1"}
    assert got[str(gn.error_log(lab, 2))]["node"] == "node2"
    assert got[str(gn.garbd_log(lab))] == {"cluster": "lab-galera", "component": "garbd",
                                           "node": "garbd"}
    clog = got[str(lab.path("ndb") / "cluster.log")]
    assert clog == {"cluster": "lab-ndb", "component": "ndb_mgmd", "simulated": "true"}
    # the lab's own services, the stand-in node
    assert got["/l/logs/mysqld-exporter.log"] == {
        "cluster": "lab-galera", "component": "mysqld-exporter", "service": "mysqld-exporter"}
    assert got["/l/logs/ndb-model.log"]["simulated"] == "true"
    assert got["/l/logs/victoria-metrics.log"]["cluster"] == "lab"
    assert got["/l/x.log"] == {"cluster": "lab-galera", "component": "mariadb",
                               "node": "logs-test-x"}
    assert len(got) == 8  # node1's log and error log are one file
    # local times in the machine's zone, as the lab's servers write them: the lab's
    # description says which (log_timezone), by its IANA name
    from clusterscope.lab.lab_description import machine_timezone
    zone = machine_timezone()
    assert all(zone in json.dumps(r["operators"]) for r in cfg["receivers"].values()
               if r["resource"]["component"] in ("mariadb", "ndb_mgmd"))
    # the receivers' ids (where the read offsets are kept) do not change between renders
    again = collector.shipper_config(logs_stack.lab_sources(lab, services), endpoint="x",
                                     storage_dir="/s", health_endpoint="h", metrics_host="m",
                                     metrics_port=2)
    assert set(again["receivers"]) <= set(cfg["receivers"])


@pytest.mark.tools("otelcol")
def test_the_configuration_passes_the_collectors_own_validation(tmp_path):
    cfg = collector.shipper_config(
        [LogSource("c", "n", comp, f"/logs/{comp}.log", "Europe/Berlin", False)
         for comp in (lf.MARIADB, lf.NDB_MGMD, lf.MYSQLD, lf.NDBMTD, lf.GARBD)],
        endpoint="http://127.0.0.1:9428/insert/opentelemetry/v1/logs",
        storage_dir=str(tmp_path), health_endpoint="127.0.0.1:13133",
        metrics_host="127.0.0.1", metrics_port=8888)
    path = tmp_path / "otelcol.yaml"
    path.write_text(collector.render(cfg))
    otelcol = str(gotools.build(gotools.TOOLS["otelcol"]))
    ok = subprocess.run([otelcol, "validate", f"--config={path}"], capture_output=True,
                        text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr[-2000:]
    # and the validation can fail: an operator the distribution does not know
    bad = yaml.safe_load(path.read_text())
    next(iter(bad["receivers"].values()))["operators"][0]["type"] = "no_such_operator"
    path.write_text(yaml.safe_dump(bad))
    no = subprocess.run([otelcol, "validate", f"--config={path}"], capture_output=True,
                        text=True, timeout=60)
    assert no.returncode != 0 and "no_such_operator" in no.stderr


@pytest.mark.tools("otelcol", "victoria-logs")
def test_a_collector_restart_ships_nothing_twice(tmp_path):
    """The read offsets are kept in file_storage: after a restart the collector goes on
    where it stopped (promtail's positions file did the same)."""
    log = tmp_path / "node.log"
    now = datetime.now()
    stamp = f"{now:%Y-%m-%d} {now.hour:2d}:{now:%M:%S} 0"
    log.write_text("".join(f"{stamp} [Note] restart-test first {i}\n" for i in range(5)))
    source = LogSource("restart", "n1", lf.MARIADB, str(log), "Local", False)
    with store_and_shipper(tmp_path) as (lab, vlogs):
        cfg = collector.shipper_config([source], endpoint=endpoint(lab),
                                       storage_dir=str(tmp_path / "storage"),
                                       **collector_ports(lab))
        start_collector(lab, cfg)
        eventually(lambda: len(vlogs.entries('{cluster="restart"}', 0)) == 5, 30,
                   "the first 5 lines")
        lab.stop("scratch-otelcol")
        with open(log, "a") as f:  # written while the collector is down
            f.write("".join(f"{stamp} [Note] restart-test second {i}\n" for i in range(3)))
        start_collector(lab, cfg)
        eventually(lambda: len(vlogs.entries('{cluster="restart"}', 0)) >= 8, 30,
                   "the 3 lines written while it was down")
        time.sleep(3)  # anything shipped twice would arrive by now
        lines = [e.line for e in vlogs.entries('{cluster="restart"}', 0)]
        assert len(lines) == 8 and len(set(lines)) == 8, lines


@pytest.mark.tools("victoria-logs")
def test_victorialogs_takes_the_loki_push_protocol(tmp_path):
    """A user's existing Loki client (promtail, Alloy, Fluent Bit's `loki` output) can push
    to VictoriaLogs: its Loki push endpoint takes Loki's JSON, and the stream's labels
    become the stream fields the dashboards select on (VictoriaLogs v1.52.1
    app/vlinsert/loki/loki_json.go)."""
    line = "2026-11-26  9:00:00 0 [Warning] WSREP: pushed the Loki way"
    body = json.dumps({"streams": [{"stream": {"cluster": "loki-push", "node": "n1",
                                               "component": "mariadb", "level": "warning"},
                                    "values": [[str(time.time_ns()), line]]}]}).encode()
    with store_and_shipper(tmp_path) as (lab, vlogs):
        req = urllib.request.Request(
            f"http://127.0.0.1:{lab.port('scratch-vlogs')}/insert/loki/api/v1/push",
            data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status in (200, 204)
        [entry] = vlogs.wait_for('{cluster="loki-push", level="warning"}', 0, timeout=30)
    assert entry.line == line
    assert entry.labels["_stream"] == ('{cluster="loki-push",component="mariadb",'
                                       'level="warning",node="n1"}')
