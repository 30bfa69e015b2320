"""`clusterscope bench soak --minutes N`: the always-on stack under load and a schedule of
faults, judged for leaks, lost counts, lost samples, wrong alerts and loadgen windows.

The lab's real Galera and the NDB simulator run under the loadgen (read_backup on Galera
node1 and node2) while a cycle of faults repeats until N minutes are up (the first cycle
always runs whole, so every fault is seen at least once): Galera node3 SIGKILLed and
rejoining by IST, then by SST (`--force-sst`); an NDB data node restart, a stopped data
node; the exporter's serving SQL node killed (the exporter fails over); mysqld_exporter,
ndbinfo_exporter, the tracker and the inventory SIGKILLed and started; VictoriaMetrics
restarted; a node's error log rotated and re-copied (a new inode with old lines: the
tracker's log-time watermark must skip them); ndbinfo_exporter SIGSTOPped (a target that
hangs). A full-length run holds each fault past the `for:` of the alert it should fire
(read from the running vmalert); a short one (CI) holds each a few seconds and judges
only the alerts that need no longer.

Every 5 s it samples the RSS and open fds of the lab's long-running processes. At the end
it reads VictoriaMetrics' raw samples, the webhook's notifications, vmalert's active
alerts and the loadgen's windows, and judges them.
The figures are returned for the bench table and written whole as JSON (`json_file`);
`ok` is false, and the bench exits 1, when a judgement fails.

It runs on the stack as users deploy it: every figure is read through the lab's door
(vmauth, TLS, the read role's credentials), as a user's toolkit reads compose's. Before its
snapshot it waits for a fresh lab to settle (no alert but the Watchdog pending or firing:
a node started minutes ago is "restarted" for 300 s), so what the lab's own start raises
is neither judged nor mistaken for the run's; a short run waits until nothing is pending
and the same alerts have fired a while, and carries those over (settle.py).

`CLUSTERSCOPE_SOAK_LAB_DIR`: run in that lab (brought up if needed and left up, as the
test suite's shared lab) instead of a lab of its own on CLUSTERSCOPE_BENCH_PORT_BASE.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from clusterscope.bench.cli_runner import run_cli
from clusterscope.bench.soak import expect
from clusterscope.bench.soak.faults import Faults
from clusterscope.bench.soak.judge import Fault
from clusterscope.bench.soak.record import (
    GaleraWatch,
    Sampler,
    alert_for,
    scrape_targets,
    use_door,
)
from clusterscope.bench.soak.settle import settle
from clusterscope.bench.soak.verdict import rejudge
from clusterscope.lab.core import Lab

EXPERIMENT = "read_backup"
SHORT_HOLD = 6.0  # a short soak's hold per fault: at least one scrape missed
HOLD_MARGIN = 45.0  # past the alert's `for:` in a full-length run
QUIET = 20.0  # between two faults of a full-length run, so their alerts do not overlap
SHORT_QUIET = 3.0
CYCLE = ("galera-ist", "kill-tracker", "ndb-restart", "log-rotate", "kill-mysqld-exporter",
         "ndb-sql-kill", "restart-vm", "galera-sst", "log-recopy", "kill-ndb-exporter",
         "ndb-stop", "kill-inventory", "hang-ndb-exporter")


def _cli(env: dict, *args: str, timeout: float = 1800) -> str:
    return run_cli(env, *args, timeout=timeout)


# -- the run ----------------------------------------------------------------------------------
def plan(minutes: float, rule_for: dict[str, float]) -> tuple[dict[str, float], bool]:
    """Each fault's hold: past its alert's `for:` when a whole cycle of such holds fits the
    run, else SHORT_HOLD. Returns (holds, full_length)."""
    full = {k: max([rule_for.get(a, 0.0) for a in expect.KINDS[k].hold_for] or [0.0])
            + (HOLD_MARGIN if expect.KINDS[k].hold_for else SHORT_HOLD) for k in CYCLE}
    # a rough cost per fault beyond its hold: Galera rejoins, NDB restarts, restarts
    cycle = sum(full.values()) + len(CYCLE) * QUIET + 240
    if cycle <= minutes * 60:
        return full, True
    return {k: SHORT_HOLD for k in CYCLE}, False


def run(minutes: float | None = None) -> dict:
    minutes = float(minutes or os.environ.get("CLUSTERSCOPE_BENCH_SOAK_MINUTES", "3"))
    shared = os.environ.get("CLUSTERSCOPE_SOAK_LAB_DIR")
    if shared:
        root = Path(shared)
        env = dict(os.environ, CLUSTERSCOPE_LAB_DIR=str(root))
    else:
        root = Path(tempfile.mkdtemp(prefix="cs-soak-"))
        root.chmod(0o755)  # the MariaDB servers run as `mysql`
        base = os.environ.get("CLUSTERSCOPE_BENCH_PORT_BASE", "26300")
        env = dict(os.environ, CLUSTERSCOPE_LAB_DIR=str(root), CLUSTERSCOPE_PORT_BASE=base)
    out_dir = Path(os.environ.get("CLUSTERSCOPE_SOAK_OUT")
                   or tempfile.mkdtemp(prefix="cs-soak-out-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        _cli(env, "lab", "up", "--ndb", "--galera", "--monitoring")
        return _soak(Lab(root), env, minutes, out_dir)
    finally:
        with contextlib.suppress(Exception):
            _cli(env, "loadgen", "stop", timeout=300)
        if not shared:
            subprocess.run([sys.executable, "-m", "clusterscope.cli", "lab", "down"], env=env,
                           capture_output=True, timeout=600)
            shutil.rmtree(root, ignore_errors=True)


def _soak(lab: Lab, env: dict, minutes: float, out_dir: Path) -> dict:
    from clusterscope.deploy.scrape import SCRAPE_INTERVAL, SCRAPE_TIMEOUT
    from clusterscope.lab import monitoring_part
    interval = float(SCRAPE_INTERVAL.rstrip("s"))
    timeout = float(SCRAPE_TIMEOUT.rstrip("s"))
    evaluation = float(monitoring_part.EVAL_INTERVAL.rstrip("s"))
    # detection slack: a scrape, the evaluation delay, two evaluations, the webhook's path
    grace = 2 * interval + 3 * evaluation
    from clusterscope.lab import door_service
    door = lab.running(door_service.NAME)
    if door:
        vm_url = door_service.url(lab)
        use_door(door_service.access(lab, "read"))
    else:
        vm_url = f"http://127.0.0.1:{lab.port(monitoring_part.VM)}"
        use_door(None)
    rule_for = alert_for(lab, vm_url if door else None)
    stale = expect.check_names(set(rule_for))
    if stale:
        raise RuntimeError(f"alerts of clusterscope/bench/soak/expect.py the rules do not"
                           f" define: {', '.join(stale)} (renamed? follow rules/config.yaml)")
    windows_file = out_dir / "loadgen-windows.json"
    windows_file.unlink(missing_ok=True)
    loadgen_started = time.time()  # a new loadgen: its counters start from 0
    _cli(env, "loadgen", "start", "--experiment", EXPERIMENT, "--threads", "2",
         "--window", "10", "--warmup", "10", "--json-out", str(windows_file.resolve()))
    holds, full_length = plan(minutes, rule_for)
    with contextlib.redirect_stdout(sys.stderr):
        # a short run (CI) waits for the lab's start to play out, not for a node's uptime
        # to pass 300 s: what still fires then is in the snapshot (carried over)
        settled = (settle(lab) if full_length else settle(lab, 360.0, steady=True))
    still = ", ".join(settled["still_active"])
    print(f"soak: {'settled' if settled['settled'] else 'did not settle'} after"
          f" {settled['waited_s']} s" + (f" (still active: {still})" if still else ""),
          file=sys.stderr, flush=True)
    # the loadgen started before the settle (at least SETTLE_QUIET ago): scraped with its
    # peers by now
    served, jobs_of = scrape_targets(vm_url, lab)
    sampler = Sampler(lab)
    sampler.start()
    watch = GaleraWatch(lab)
    watch.start()
    faults = Faults(lab, vm_url, jobs_of)
    faults.restarts["loadgen"] = [loadgen_started]
    t0 = time.time()
    # what fired before the run (a lab up minutes ago: GaleraNodeRestarted) may fire again
    # when a fault cuts its series; it is reported as carried over, not as a wrong alert
    before = monitoring_part.firing_now(lab)
    deadline = t0 + minutes * 60
    done: list[Fault] = []
    cycle = 0
    fits = True
    while fits and (cycle == 0 or time.time() < deadline):
        cycle += 1
        for kind in CYCLE:
            if cycle > 1 and time.time() + holds[kind] + QUIET > deadline:
                fits = False
                break
            with contextlib.redirect_stdout(sys.stderr):  # the lab's chatter; stdout is JSON
                f = faults.run(kind, holds[kind])
            done.append(f)
            print(f"soak: {time.time() - t0:6.0f} s  {kind} {f.target} held {f.hold:.0f} s"
                  f"{'  ERROR ' + f.error if f.error else ''}", file=sys.stderr, flush=True)
            time.sleep(QUIET if full_length else SHORT_QUIET)
    time.sleep(grace)  # the last fault's resolutions reach the webhook
    _cli(env, "loadgen", "stop", timeout=300)  # SIGTERM: it finishes its window, writes JSON
    t1 = time.time()
    for thread in (sampler, watch):
        thread.stop_event.set()
        thread.join()
    time.sleep(2 * interval)  # the last samples are searchable (1 s latency offset)
    # what was done, kept so the judgement can be run again on the same lab (rejudge)
    recording = {"span": [t0, t1], "served": [[*k, v] for k, v in served.items()],
                 "settle": settled, "door": bool(door),
                 "restarts": faults.restarts, "faults": [vars(f) for f in done],
                 "samples": sampler.samples, "load": sampler.load, "events": watch.events,
                 "unanswered": watch.unanswered,
                 "active_before": before,
                 "rule_for": rule_for,
                 "grace": grace, "interval": interval, "timeout": timeout,
                 "windows_file": str(windows_file), "vm_url": vm_url, "lab": str(lab.root)}
    (out_dir / "recording.json").write_text(json.dumps(recording))
    figures = rejudge(out_dir / "recording.json")
    figures.update(minutes=minutes, full_length=full_length, cycles=cycle,
                   lab=str(lab.root), settle=settled, through_the_door=bool(door))
    path = out_dir / "soak.json"
    path.write_text(json.dumps(figures, indent=1, default=str))
    figures["json_file"] = str(path)
    return figures


