"""The shipper's parsing on real log lines, in Python: the same regexes the generated
collector configuration holds, the LogsQL event patterns on the same lines, and the
collector configuration of the lab's description (test_logs_shipped.py runs the real
collector on them). No lab needed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from clusterscope_logs import collector
from clusterscope_logs import formats as lf
from helpers import shared_fixture
from logship import lines_of

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
