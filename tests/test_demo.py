"""The main job, `clusterscope demo --short`, run to the end in the session's lab.

Marked `demo`, which conftest orders after the other lab tests: it reuses the lab they
brought up (as `make demo` reuses a lab that is already up) and plays the whole scenario
through the real CLI. What a user reads in its output is what is asserted: the FK overhead
with its interval, the restart regression alert that reached the webhook, the SIMULATED
mark, and a report that exists.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, render_in_chromium

pytestmark = [pytest.mark.lab, pytest.mark.demo]


@pytest.fixture(scope="module")
def demo(lab, artifacts: Path) -> tuple[subprocess.CompletedProcess, dict]:
    lab.ensure("ndb", "galera", "monitoring")
    lab.cli("loadgen", "stop", check=False)  # an earlier test's load would skew the windows
    proc = subprocess.run([sys.executable, "-m", "clusterscope.cli", "demo", "--short"],
                          env=lab.env, cwd=REPO, text=True, capture_output=True, timeout=1200)
    (artifacts / "demo-output.txt").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    assert proc.returncode == 0, f"demo failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    result = json.loads((lab.root / "demo-result.json").read_text())
    return proc, result


def test_demo_prints_the_fk_overhead_with_its_interval(demo) -> None:
    proc, result = demo
    line = next((ln for ln in proc.stdout.splitlines()
                 if re.match(r"\s+fk\s+fk2\s+vs nofk\s", ln)), None)
    assert line is not None, proc.stdout[-3000:]
    m = re.search(r"([+-]\d+\.\d)%\s+95% CI \[([+-]\d+\.\d)%, ([+-]\d+\.\d)%\]", line)
    assert m, f"no interval in: {line!r}"
    mean, low, high = (float(g) for g in m.groups())
    assert low <= mean <= high
    fk = [o for o in result["overheads"] if o["experiment"] == "fk" and o["variant"] == "fk2"]
    assert fk and fk[0]["low"] <= fk[0]["ratio"] <= fk[0]["high"]


def test_demo_shows_the_restart_regression_alert(demo) -> None:
    proc, result = demo
    fired = [a for a in result["alerts"]
             if a["labels"].get("alertname") == "NdbRestartTimeRegressed"]
    assert fired, f"alerts received: {[a['labels'].get('alertname') for a in result['alerts']]}"
    assert fired[0]["labels"]["node_id"] == "2"
    assert "ALERT NdbRestartTimeRegressed" in proc.stdout
    assert "runbooks/NdbRestartTimeRegressed.md" in proc.stdout


def test_demo_compares_simulated_restarts_and_writes_the_report(demo, artifacts: Path) -> None:
    proc, result = demo
    assert "SIMULATED" in proc.stdout
    lines = proc.stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if "Comparison: NDB restarts" in ln)
    end = next(i for i, ln in enumerate(lines) if "Writing the report" in ln)
    table = lines[start + 1:end]
    # the 7.5 profile's restarts are the slower ones, and the comparison says so; each
    # side's three restarts are three samples, even where a value repeats
    head = next(i for i, ln in enumerate(table) if ln.startswith("== NDB restarts: restart total"))
    total = table[head + 1]
    assert total.endswith("worse") and total.count("(n=3)") == 2, "\n".join(table)
    assert "nan" not in "\n".join(table).lower()
    assert max(len(ln) for ln in table) <= 120
    report = Path(result["report"])
    assert report.is_file() and str(report) in proc.stdout
    assert "simulated" in report.read_text().lower()
    assert "clusterscope lab down" in proc.stdout
    shutil.copy(report, artifacts / "demo-report.html")
    # what a person sees: the demo's own report rendered, the screenshot kept
    console = render_in_chromium(report, artifacts / "demo-report.png")
    assert any("clusterscope-report-rendered svg=" in ln for ln in console), console
    assert (artifacts / "demo-report.png").stat().st_size > 20_000
    # no axis of a non-negative quantity (seconds, tps, CPU, latency) goes below 0
    for chart in re.findall(r"<svg.*?</svg>", report.read_text(), re.S):
        title = re.search(r'class="title">([^<]*)<', chart).group(1)
        ticks = re.findall(r'class="tick" text-anchor="end">([^<]*)</text>', chart)
        if "overhead" not in title:
            assert not [t for t in ticks if t.startswith("-")], (title, ticks)
