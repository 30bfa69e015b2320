"""The README's before/after walkthrough, run as written on the lab's real Galera, and the
change detector's verdict on the very change it makes.

The two fenced blocks at the top of README's "Compare before and after" are
read from README.md: the first sets the variables (here: the lab's VictoriaMetrics, node 1's
root login over its socket and PERIOD=90s, in place of a staging cluster's), the second is
run by bash exactly as it stands. The loadgen runs along as the prose says for the lab.
The walkthrough's `SET GLOBAL innodb_flush_log_at_trx_commit = 1` is a change like any
other: the real detector lists it and `clusterscope changes` judges it on the fk experiment
(one scenario, `flush_change`, serves both tests: each needs a loaded period on both sides).
Every dashboard's changes annotation is checked after it, when the loadgen's series give
the experiments dashboard its clusters.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, eventually
from test_changes_lab import listed, read_once, root_sql, wait_listed
from test_monitoring import _wait_notification

from clusterscope.lab.endpoints import lab_metrics

SECTION = "## Compare before and after"
PERIOD = "90s"
# the change detector's periods: as short as the walkthrough's (the loadgen's 5 s windows
# give ~8 per variant), after a settle of 15 s
PERIOD_S, SETTLE_S = 90, 15


def walkthrough() -> tuple[str, str, str]:
    """(the lab's loadgen command from the prose, the variables block, the steps block)."""
    text = (REPO / "README.md").read_text()
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ", 1)] if "\n## " in section[1:] else section
    fences = re.findall(r"```sh\n(.*?)```", section, re.S)
    loadgen = re.search(r"in the lab: `(clusterscope loadgen start[^`]*)`", section, re.S)
    assert loadgen and len(fences) >= 2, "the walkthrough is not first in its section"
    return " ".join(loadgen.group(1).split()), fences[0], fences[1]


def test_the_walkthrough_blocks_use_the_variables_they_declare() -> None:
    _, variables, steps = walkthrough()
    for name in ("CLUSTERSCOPE_VM_URL", "CLUSTERSCOPE_VM_CREDENTIALS", "CLUSTERSCOPE_VM_CA",
                 "ADMIN_CNF", "PERIOD"):
        assert re.search(rf"\b{name}=", variables), name
    for name in ("ADMIN_CNF", "PERIOD"):
        assert f"${name}" in steps, name
    commands = [ln for ln in steps.splitlines() if ln.strip() and not ln.startswith("#")]
    assert [c.split()[:2] for c in commands] == [
        ["clusterscope", "baseline"], ["mysql", "--defaults-extra-file=\"$ADMIN_CNF\""],
        ["sleep", '"$PERIOD"'], ["clusterscope", "compare"], ["clusterscope", "report"]]


def _flush_setting(admin: Path) -> str:
    return subprocess.run(["mysql", f"--defaults-extra-file={admin}", "-N", "-e",
                           "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit"],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def flush_change(lab, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The walkthrough's steps run as written under the README's loadgen, and the change
    they make held until the detector's period after it has passed; then undone. What both
    tests read: the steps' output and the change as `clusterscope changes` judged it."""
    lab.ensure("ndb", "galera", "monitoring")
    tmp_path = tmp_path_factory.mktemp("walkthrough")
    vm = lab_metrics(lab.root).vm
    loadgen, _, steps = walkthrough()
    admin = tmp_path / "node1-admin.cnf"  # the lab's root login to node 1, over its socket
    admin.write_text(f"[client]\nuser=root\nsocket={lab.root / 'galera/node1/mysqld.sock'}\n")
    admin.chmod(0o600)
    original = _flush_setting(admin)
    lab.cli("loadgen", "stop", check=False)  # an earlier test's load would mix in
    argv = shlex.split(loadgen)
    assert argv[:3] == ["clusterscope", "loadgen", "start"]
    lab.cli(*argv[1:])
    started = time.time()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLUSTERSCOPE_")}
    # the lab's door, as the variables block points at a deployment's (write role: pins)
    from clusterscope.lab import door_service
    from clusterscope.lab.core import Lab
    door = Lab(lab.root, lab.port_base)
    env.update(CLUSTERSCOPE_VM_URL=vm.url,
               CLUSTERSCOPE_VM_CREDENTIALS=str(door_service.credentials_file(door, "write")),
               CLUSTERSCOPE_VM_CA=str(door_service.ca_file(door)), ADMIN_CNF=str(admin),
               PERIOD=PERIOD,
               XDG_DATA_HOME=str(tmp_path / "data"),
               PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    periods = ["--period", f"{PERIOD_S}s", "--settle", f"{SETTLE_S}s"]
    got: dict = {"vm": vm, "tmp": tmp_path, "original": original, "periods": periods}
    proc = None
    try:
        # a PERIOD of the loadgen's windows before the pin
        eventually(lambda: time.time() - started >= 95 and vm.query(
            'count_over_time(loadgen_window_tps{experiment="fk",variant="nofk"}[90s]) >= 5'),
            timeout=300, what="a PERIOD of fk windows before the pin", interval=3)
        t0 = time.time()
        proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", steps], env=env,
                                cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        # the detector lists the change while the steps' `sleep "$PERIOD"` runs: pending
        change, _ = wait_listed(
            lab, lambda c: c["name"] == "innodb_flush_log_at_trx_commit"
            and c["start"] >= t0 - 1, "the walkthrough's change", t0)
        got["pending"] = next(c for c in listed(lab, *periods)
                              if c["change_id"] == change["change_id"])["pending"]
        got["stdout"], got["stderr"] = proc.communicate(timeout=900)
        got["returncode"], got["during"] = proc.returncode, _flush_setting(admin)
        got["change"], got["t0"] = change, t0
        # the change held until the detector's period after it is over
        time.sleep(max(0.0, change["end"] + SETTLE_S + PERIOD_S + 5 - time.time()))
        got["json"] = lab.cli("changes", "--since", "30m", "--json", "--experiment", "fk",
                              "--notify", *periods).stdout
        got["text"] = lab.cli("changes", "--since", "30m", "--experiment", "fk",
                              *periods).stdout
        got["report"] = tmp_path / "report"
        lab.cli("report", "--out", str(got["report"]), "--period", "now-15m..now",
                "--change-period", f"{PERIOD_S}s", "--change-settle", f"{SETTLE_S}s")
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        subprocess.run(["mysql", f"--defaults-extra-file={admin}", "-e",
                        f"SET GLOBAL innodb_flush_log_at_trx_commit = {original}"], check=True)
        lab.cli("loadgen", "stop", check=False)
    return got


@pytest.mark.lab
def test_the_walkthrough_runs_as_written_on_the_labs_galera(flush_change: dict,
                                                            artifacts: Path) -> None:
    got, vm, tmp_path = flush_change, flush_change["vm"], flush_change["tmp"]
    (artifacts / "walkthrough-output.txt").write_text(got["stdout"] + "\n--- stderr ---\n"
                                                     + got["stderr"])
    assert got["returncode"] == 0, got["stdout"][-3000:] + got["stderr"][-3000:]
    assert (got["original"], got["during"]) == ("2", "1")  # the change was made
    out = got["stdout"]
    assert "baseline before-flush: pinned for the alerting rules" in out
    assert f"read   {vm.url}" in out
    # the verdict on the fk throughput, from enough windows on both sides
    lines = out.splitlines()
    head = lines.index(next(ln for ln in lines if ln.startswith("== experiments: throughput")))
    assert "SIMULATED" not in lines[head]
    block = lines[head + 1:next(i for i in range(head + 1, len(lines))
                                if lines[i].startswith("==") or not lines[i].strip())]
    rows = {r.split()[1]: r for r in block if r.split()[:1] == ["fk"]}
    assert {"nofk", "fk2"} <= set(rows), block
    for row in rows.values():
        ns = [int(n) for n in re.findall(r"\(n=(\d+)\)", row)]
        assert len(ns) == 2 and min(ns) >= 3, row
        assert row.rstrip().endswith(("better", "worse", "no sig. change")), row
    # the simulated NDB figures keep their mark, the real Galera ones have none
    ldm = next(ln for ln in lines if ln.startswith("== NDB LDM CPU"))
    assert ldm.endswith("(SIMULATED)")
    assert not [ln for ln in lines if "SIMULATED" in ln and "lab-galera" in ln]
    page = (tmp_path / "report-flush" / "index.html").read_text()
    shutil.copy(tmp_path / "report-flush" / "index.html", artifacts / "walkthrough-report.html")
    heads = dict(re.findall(r"<h2>(Experiments|Galera recoveries|NDB LDM CPU|Before / after)"
                            r"(.*?)</h2>", page))
    assert "measured on lab-galera" in heads["Experiments"]
    assert "SIMULATED" not in heads["Experiments"] + heads["Galera recoveries"]
    assert "SIMULATED" in heads["NDB LDM CPU"]
    assert "Before / after" in heads and f"read from VictoriaMetrics at {vm.url}" in page


@pytest.mark.lab
def test_the_walkthroughs_change_gets_its_own_verdict_on_the_fk_experiment(
        lab, flush_change: dict, artifacts: Path) -> None:
    got, change = flush_change, flush_change["change"]
    assert got["pending"], "a change is pending until its period after has passed"
    (artifacts / "changes-verdict.txt").write_text(got["text"])
    judged = next(c for c in json.loads(got["json"])["changes"]
                  if c["change_id"] == change["change_id"])
    assert not judged["pending"] and judged["verdict"] != "no data in both periods"
    tps = {r["series"]["variant"]: r for r in judged["rows"] if r["key"] == "loadgen_tps"
           and r["series"].get("experiment") == "fk"}
    assert {"nofk", "fk2"} <= set(tps), judged["rows"]
    for row in tps.values():
        # each side's windows, the difference with its 95% interval, and the verdict
        assert min(row["before"]["n"], row["after"]["n"]) >= 3, row
        d = row["difference"]
        assert d["low"] is not None and d["low"] <= d["diff"] <= d["high"], row
        assert row["verdict"] in ("better", "worse", "no significant change"), row
    # the significant rows are notified (info, the same Alertmanager routes), effect in text
    worse = [r for r in tps.values() if r["verdict"] == "worse"]
    assert worse, "innodb_flush_log_at_trx_commit=1 (a flush per commit) costs throughput"
    note = _wait_notification(lab, "ChangeEffectSignificant", "firing", got["t0"], 120,
                              change_name="innodb_flush_log_at_trx_commit",
                              quantity="loadgen_tps", variant=worse[0]["series"]["variant"])
    assert note["path"] == "/info" and note["labels"]["severity"] == "info"
    effect = f"{worse[0]['relative'] * 100:.4g}%"  # humanizePercentage: Go's %.4g
    assert f"by {effect}" in note["annotations"]["summary"], (effect, note["annotations"])
    assert re.search(r"95% interval -[0-9.]+% to -[0-9.]+%: worse",
                     note["annotations"]["description"]), note["annotations"]["description"]
    block = got["text"][got["text"].index(change["change_id"]):]
    assert "verdict " in block and "throughput (per window) fk" in block
    assert re.search(r"throughput \(per window\) fk (nofk|fk2): .*\[[-+0-9.,]+, [-+0-9.,]+\]",
                     block), block
    index = (got["report"] / "index.html").read_text()
    page = got["report"] / "changes" / f"{change['change_id']}.html"
    assert f'href="changes/{page.name}"' in index and page.exists()
    html_page = page.read_text()
    assert "innodb_flush_log_at_trx_commit" in html_page and "95% CI" in html_page
    assert judged["verdict"] in index


@pytest.mark.lab
def test_every_dashboards_changes_annotation_returns_the_labs_changes(
        lab, flush_change: dict) -> None:
    """`dashboards verify` runs each dashboard's annotation query as Grafana's plugin
    would, for each value of the dashboard's cluster variable: every dashboard's changes
    mark must return the lab's change lines (a Galera and a simulated NDB change here).
    After the flush scenario: the experiments dashboard takes its clusters from the
    loadgen's series, so without a loadgen run in the last 10 minutes it has none."""
    lab.ensure("galera", "ndb", "monitoring")
    read_once(lab, "lab-galera")
    read_once(lab, "lab-ndb")
    t0 = time.time()
    before = root_sql(lab, 1, "SELECT @@GLOBAL.max_connections")
    root_sql(lab, 1, f"SET GLOBAL max_connections = {int(before) + 1}")
    lab.cli("lab", "ndb", "set-config", "MaxNoOfConcurrentTransactions", "4097", "--now")
    try:
        for cluster in ("lab-galera", "lab-ndb"):
            wait_listed(lab, lambda c, cl=cluster: c["cluster"] == cl and c["start"] >= t0 - 1,
                        f"a change on {cluster}", t0)
        proc = lab.cli("dashboards", "verify", "--json", "--minutes", "10", check=False)
    finally:
        root_sql(lab, 1, f"SET GLOBAL max_connections = {before}")
        lab.cli("lab", "ndb", "set-config", "MaxNoOfConcurrentTransactions", "4096", "--now")
    marks = [r for r in json.loads(proc.stdout)
             if r["panel"] == "annotation: Configuration and version changes"]
    from clusterscope.dashboards import uids

    assert sorted(r["dashboard"] for r in marks) == sorted(uids.ALL)
    assert all(r["ok"] and r["series"] > 0 for r in marks), marks
