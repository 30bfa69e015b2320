"""The README's before/after walkthrough, run as written on the lab's real Galera.

The two fenced blocks at the top of README's "Compare before and after" are
read from README.md: the first sets the variables (here: the lab's VictoriaMetrics, node 1's
root login over its socket and PERIOD=90s, in place of a staging cluster's), the second is
run by bash exactly as it stands. The loadgen runs along as the prose says for the lab.
"""

from __future__ import annotations

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

from clusterscope.lab.endpoints import lab_metrics

SECTION = "## Compare before and after"
PERIOD = "90s"


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


@pytest.mark.lab
def test_the_walkthrough_runs_as_written_on_the_labs_galera(lab, tmp_path: Path,
                                                            artifacts: Path) -> None:
    lab.ensure("ndb", "galera", "monitoring")
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
    during = ""
    try:
        # a PERIOD of the loadgen's windows before the pin
        eventually(lambda: time.time() - started >= 95 and vm.query(
            'count_over_time(loadgen_window_tps{experiment="fk",variant="nofk"}[90s]) >= 5'),
            timeout=300, what="a PERIOD of fk windows before the pin", interval=3)
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", steps], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=900)
        during = _flush_setting(admin)
    finally:
        subprocess.run(["mysql", f"--defaults-extra-file={admin}", "-e",
                        f"SET GLOBAL innodb_flush_log_at_trx_commit = {original}"], check=True)
        lab.cli("loadgen", "stop", check=False)
    (artifacts / "walkthrough-output.txt").write_text(proc.stdout + "\n--- stderr ---\n"
                                                     + proc.stderr)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (original, during) == ("2", "1")  # the change was made, and is undone
    out = proc.stdout
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
