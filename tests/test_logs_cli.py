"""`clusterscope logs ...` without a lab: offline parsing, the LogsQL export, the collector
configuration for a description, and a clear error when VictoriaLogs cannot be reached."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import shared_fixture
from logship import lines_of

from clusterscope.logs import logsql

pytestmark = pytest.mark.tools("python")

REPO = Path(__file__).resolve().parents[1]


def cs(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clusterscope.cli", "logs", *args],
                          input=stdin, text=True, capture_output=True, cwd=REPO, timeout=60)


def test_parse_reads_a_real_pxc_log():
    lines = lines_of(shared_fixture("galera", "pxc80-node3-ist.log"))
    proc = cs("parse", "--component", "mariadb", stdin="\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(ln) for ln in proc.stdout.splitlines()]
    assert len(out) == len(lines)
    entries = [o for o in out if o["format"]]
    continuation = [o for o in out if not o["format"]]
    assert all(o["line"].startswith("\t") for o in continuation) and len(continuation) == 2
    assert {o["format"] for o in entries} == {"mysql-iso"}
    joiner = next(o for o in entries if "PRIMARY -> JOINER" in o["message"])
    assert joiner["event"] == "galera_state_change" and joiner["ts_iso"].endswith("Z")


def test_logsql_export_is_the_module_data():
    proc = cs("logsql")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["log_queries"] == logsql.LOG_QUERIES
    assert data["stats_queries"] == logsql.STATS_QUERIES
    assert [a["name"] for a in data["annotations"]] == [a["name"] for a in logsql.ANNOTATIONS]


def test_pipeline_prints_the_collector_configuration_of_a_description(tmp_path):
    desc = tmp_path / "clusterscope.yml"
    desc.write_text("clusters:\n"
                    "  - name: g1\n    kind: galera\n    log_timezone: Europe/Berlin\n"
                    "    nodes:\n"
                    "      - {name: n1, address: 'h1:3306', log: /srv/logs/g1/n1.err}\n"
                    "      - {name: n2, address: 'h2:3306'}\n")
    proc = cs("pipeline", "--description", str(desc))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    [receiver] = data["otelcol"]["receivers"].values()
    assert receiver["include"] == ["/srv/logs/g1/n1.err"]
    assert receiver["resource"] == {"cluster": "g1", "component": "mariadb", "node": "n1"}
    assert "Europe/Berlin" in json.dumps(receiver["operators"])  # the node's local times
    stages = json.dumps(receiver["operators"])
    for fmt in data["component_formats"]["mariadb"]:  # every format a Galera log may hold
        assert json.dumps(data["formats"][fmt]["regex"])[1:-1] in stages
    bad = tmp_path / "bad.yml"
    bad.write_text("clusters: [{name: x, kind: nope}]\n")
    proc = cs("pipeline", "--description", str(bad))
    assert proc.returncode == 2 and "kind" in proc.stderr and "Traceback" not in proc.stderr


def test_unreachable_victorialogs_is_a_clear_error():
    proc = cs("--logs-url", "http://127.0.0.1:9", "query", "errors", "--since", "5m")
    assert proc.returncode == 1
    assert "unreachable" in proc.stderr and "Traceback" not in proc.stderr
