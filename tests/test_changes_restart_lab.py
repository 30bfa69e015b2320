"""A restart slower after a simulated upgrade: the real vmalert fires the regression alert
and its description names the upgrade (both versions and the change the detector found);
the report's page for the change shows the restarts of the two versions side by side. The
restarts and versions are the NDB simulator's: SIMULATED."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from helpers import eventually
from test_changes_lab import wait_listed
from test_monitoring import _wait_notification

from clusterscope.ndbsim.restart import EXPECTED_TOTAL_RANGE

pytestmark = pytest.mark.lab
SCRAPE = 5.0
OLD, NEW = "8.0.41", "8.4.4"


WINDOW = 25.0  # past the lab's 20 s completion window: the next completion is a new event


def restart(lab, vm, profile: str, after: float) -> float:
    """Node 2 restarts with a profile, slowly enough that two scrapes see it under way,
    and the exporter has counted it before the next one (as the demo does). It completes
    at least WINDOW after `after` (the previous completion): the restart itself lasts at
    least two scrapes, so it starts 2 * SCRAPE earlier than that. Returns when it had
    completed."""
    def counted() -> float:
        rows = vm.query('max(ndb_restarts_completed_total{cluster="lab-ndb",node_id="2"})')
        return float(rows[0]["value"][1]) if rows else 0.0

    before = counted()
    time.sleep(max(0.0, after + WINDOW - 2 * SCRAPE - time.time()))
    scale = EXPECTED_TOTAL_RANGE[profile][0] / (2 * SCRAPE)
    lab.cli("lab", "ndb", "restart-node", "2", "--profile", profile, "--time-scale",
            f"{scale:g}", "--wait", timeout=600)
    done = time.time()
    eventually(lambda: counted() > before, 60, f"the exporter counting the {profile} restart")
    return done


def test_a_restart_slower_after_an_upgrade_names_the_upgrade(lab, tmp_path: Path,
                                                              artifacts: Path) -> None:
    from clusterscope.lab.endpoints import lab_metrics

    lab.ensure("ndb", "monitoring")
    vm = lab_metrics(lab.root).vm
    was = lab.service("ndb-model")["extra"]["version"]
    lab.cli("lab", "ndb", "fault", "clear")
    t0 = time.time()
    # releases no other test runs: their restart histories are this test's alone
    lab.cli("lab", "ndb", "set-version", OLD)
    try:
        done = 0.0
        for _ in range(3):  # the baseline: three restarts on OLD, 6m49s each (7.6 shape)
            done = restart(lab, vm, "7.6", done)
        # the last one's completion event is over before the version changes under it
        time.sleep(max(0.0, done + WINDOW - time.time()))
        t_up = time.time()
        lab.cli("lab", "ndb", "set-version", NEW)
        wait_listed(lab, lambda c: c["kind"] == "ndb_version" and c["start"] >= t_up - 1
                    and f"ndb-{NEW}" in c["steps"][0]["items"][0][3], "the upgrade", t_up)
        time.sleep(25)
        restart(lab, vm, "7.5", done)  # the first restart on NEW takes 19m11s (7.5 shape)
        got = _wait_notification(lab, "NdbRestartTimeRegressed", "firing", t_up, 120,
                                 node_id="2")
        report = tmp_path / "report"
        # the change's periods reach back to this test's first restart, not an earlier test's
        lab.cli("report", "--out", str(report), "--period", f"{t0 - 60:.0f}..{time.time():.0f}",
                "--change-period", f"{t_up - t0 + 20:.0f}s")
    finally:
        lab.cli("lab", "ndb", "set-version", was)
    text = got["annotations"]["description"]
    (artifacts / "restart-regression-after-upgrade.txt").write_text(text)
    assert (f"It ran mysql-{NEW} ndb-{NEW}-sim and is judged against the restarts on"
            f" mysql-{OLD} ndb-{OLD}-sim, the version before") in text, text
    assert "NDB changes before it" in text and "version (ndb_version) at " in text, text
    page = next(p for p in (report / "changes").glob("*.html")
                if f"ndb-{OLD}-sim -&gt; mysql-{NEW}" in p.read_text())
    html = page.read_text()
    assert "Restarts on the version before and after" in html
    row = re.search(r"<tr><td>total</td><td>([^<]*)</td><td>([^<]*)</td>", html)
    assert row, html[-3000:]
    n_old, n_new = (int(re.search(r"\(n=(\d+)\)", cell).group(1)) for cell in row.groups())
    assert (n_old, n_new) == (3, 1), row.groups()
    assert "SIMULATED" in html
