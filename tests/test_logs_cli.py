"""`clusterscope logs ...` without a lab: offline parsing, the LogQL export, and a clear
error when Loki cannot be reached."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from clusterscope.logs import logql

REPO = Path(__file__).resolve().parents[1]
PXC80 = REPO / "tests" / "fixtures" / "galera" / "pxc80-node3-ist.log"


def cs(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clusterscope.cli", "logs", *args],
                          input=stdin, text=True, capture_output=True, cwd=REPO, timeout=60)


def test_parse_reads_a_real_pxc_log():
    lines = [ln for ln in PXC80.read_text().splitlines() if ln and not ln.startswith("#")]
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


def test_logql_export_is_the_module_data():
    proc = cs("logql")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["queries"] == logql.QUERIES
    assert [a["name"] for a in data["annotations"]] == [a["name"] for a in logql.ANNOTATIONS]


def test_pipeline_export_carries_every_format():
    proc = cs("pipeline")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    stages = json.dumps(data["promtail_pipeline_stages"])
    for spec in data["formats"].values():
        assert json.dumps(spec["regex"])[1:-1] in stages


def test_unreachable_loki_is_a_clear_error():
    proc = cs("--loki-url", "http://127.0.0.1:9", "query", "errors", "--since", "5m")
    assert proc.returncode == 1
    assert "unreachable" in proc.stderr and "Traceback" not in proc.stderr
