"""The HTML report: built from a real VictoriaMetrics, rendered by headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from clusterscope.analysis import report
from clusterscope.analysis.periods import Period

T1 = 1_700_100_000
CHROMIUM = shutil.which("chromium")


def _samples(name: str, labels: str, points: list[tuple[float, float]]) -> list[str]:
    return [f"{name}{{{labels}}} {v} {int(t * 1000)}" for t, v in points]


@pytest.fixture(scope="module")
def filled(scratch_vm):
    lines: list[str] = []
    ts = [T1 + 5 * i for i in range(120)]  # ten minutes at a 5 s scrape interval
    for var, base in (("fk0", 2000.0), ("fk2", 1700.0)):
        lines += _samples("loadgen_window_tps", f'experiment="fk",variant="{var}"',
                          [(t, base + (i // 2) % 7) for i, t in enumerate(ts)])
        lines += _samples("loadgen_window_latency_seconds",
                          f'experiment="fk",variant="{var}",quantile="0.95"',
                          [(t, 0.004) for t in ts])
    for suffix, v in (("", -0.15), ("_lower", -0.2), ("_upper", -0.1)):
        lines += _samples(f"loadgen_overhead_ratio{suffix}",
                          'experiment="fk",variant="fk2",baseline="fk0"',
                          [(t, v) for t in ts])
    # Two completed restarts of node 2: a 7.6-like one, then a 7.5-like one.
    sim = 'cluster="lab-ndb",simulated="true",node_id="2"'
    first, second = ts[:60], ts[60:]
    lines += _samples("ndb_restart_status", sim, [(t, 19) for t in ts])  # completed
    lines += _samples("ndb_restart_total_seconds", sim,
                      [(t, 409) for t in first] + [(t, 1151) for t in second])
    for phase, a, b in (("restore_fragments", 135, 111), ("exec_redo_log", 35, 51),
                        ("index_rebuild", 77, 124), ("wait_lcp_for_restart", 128, 828)):
        lines += _samples("ndb_restart_phase_seconds", f'{sim},phase="{phase}"',
                          [(t, a) for t in first] + [(t, b) for t in second])
    lines += _samples("ndb_thread_cpu_percent",
                      f'{sim},thr_no="1",thread_name="ldm",mode="exec"',
                      [(t, 40 + i % 5) for i, t in enumerate(ts)])
    rec = 'cluster="lab-galera",node="node3",kind="ist",method="ist",donor="node1"'
    lines += _samples("galera_recovery_last_duration_seconds", rec, [(t, 8.5) for t in ts[30:]])
    lines += _samples("galera_recovery_last_end_timestamp_seconds", rec,
                      [(t, ts[30]) for t in ts[30:]])
    lines += _samples("mysql_global_status_wsrep_cluster_size", 'cluster="lab-galera",node="node1"',
                      [(t, 3 if i < 20 or i > 30 else 2) for i, t in enumerate(ts)])
    scratch_vm.import_prometheus("\n".join(lines) + "\n")
    scratch_vm.flush()
    return scratch_vm, Period(T1, ts[-1])


def test_the_report_shows_each_section_and_marks_simulated_figures(filled) -> None:
    vm, period = filled
    page = report.build(vm, period)
    assert page.count("<svg") >= 6
    ndb = page[page.index("<h2>NDB restarts"):page.index("<h2>Galera")]
    assert "SIMULATED" in ndb.split("</h2>")[0], "the NDB heading must say it is simulated"
    # both completed restarts appear as phase breakdowns, with their totals
    assert len(re.findall(r"node 2 @ \d\d:\d\d:\d\d", ndb)) == 2
    assert "409 s" in ndb and "1,151 s" in ndb
    galera = page[page.index("<h2>Galera"):]
    assert "SIMULATED" not in galera.split("</h2>")[0]
    assert "<td>node3</td><td>ist</td><td>ist</td><td>node1</td><td>8.5 s</td>" in galera


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is installed by make setup")
def test_the_report_renders_in_headless_chromium(filled, artifacts: Path) -> None:
    vm, period = filled
    out = report.write(vm, period, artifacts / "report")
    shot = artifacts / "report.png"
    shot.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", "--enable-logging=stderr",
             "--v=0", "--window-size=1200,2600", f"--screenshot={shot}", out.as_uri()],
            capture_output=True, text=True, timeout=120)
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln]
    assert any("clusterscope-report-rendered svg=" in ln for ln in console), proc.stderr[-2000:]
    assert not [ln for ln in console if "Uncaught" in ln or "Error" in ln], console
    assert shot.exists() and shot.stat().st_size > 20_000
