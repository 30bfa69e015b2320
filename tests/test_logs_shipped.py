"""The shipper's parsing through the real thing: the generated collector configuration,
run by the real OpenTelemetry Collector tailing files into a real VictoriaLogs, and the
collector's own validation of it. No lab needed.

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
from helpers import eventually
from lanes import starts
from logship import collector_ports, endpoint, lines_of, start_collector, store_and_shipper
from test_logs_formats import (
    EXPORTER_LINES,
    MARIADB_IST,
    NDB_MANUAL,
    PXC57,
    pxc80_ist,
    pxc80_json,
)

from clusterscope import gotools
from clusterscope.clients.vlogs import Entry


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
