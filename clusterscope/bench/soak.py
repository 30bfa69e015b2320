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
alerts and the loadgen's windows, and judges them (clusterscope/bench/soak_judge.py).
The figures are returned for the bench table and written whole as JSON (`json_file`);
`ok` is false, and the bench exits 1, when a judgement fails.

`CLUSTERSCOPE_SOAK_LAB_DIR`: run in that lab (brought up if needed and left up, as the
test suite's shared lab) instead of a lab of its own on CLUSTERSCOPE_BENCH_PORT_BASE.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from clusterscope.bench import soak_faults
from clusterscope.bench import soak_judge as judge
from clusterscope.bench.cli_runner import run_cli
from clusterscope.bench.soak_judge import Fault
from clusterscope.lab.core import Lab, LabError, pid_alive

EXPERIMENT = "read_backup"
GALERA_NODE = 3  # the loadgen uses node1 and node2; node3 is the one that fails
LOADGEN_NODES = (1, 2)
NDB_NODE = 2
ROTATE_NODE, RECOPY_NODE = 2, 1
SHORT_HOLD = 6.0  # a short soak's hold per fault: at least one scrape missed
HOLD_MARGIN = 45.0  # past the alert's `for:` in a full-length run
QUIET = 20.0  # between two faults of a full-length run, so their alerts do not overlap
SHORT_QUIET = 3.0
NDB_TIME_SCALE = 30.0  # a 7.6 restart in ~15 wall seconds
SAMPLE_EVERY = 5.0
# processes whose growth is reported; ours are the products users run always-on
OURS = ("ndb-exporter", "galera-tracker", "inventory", "loadgen")
STACK = ("mysqld-exporter", "node-exporter", "otelcol", "victoria-metrics", "vmalert",
         "vmalert-logs", "alertmanager", "victoria-logs", "webhook", "ndb-model")
COUNTER_MATCH = ('{__name__=~"(galera_|ndb_exporter_|ndb_restarts_completed|loadgen_|'
                 'clusterscope_|process_cpu_seconds).*_total"}')
CYCLE = ("galera-ist", "kill-tracker", "ndb-restart", "log-rotate", "kill-mysqld-exporter",
         "ndb-sql-kill", "restart-vm", "galera-sst", "log-recopy", "kill-ndb-exporter",
         "ndb-stop", "kill-inventory", "hang-ndb-exporter")


def _cli(env: dict, *args: str, timeout: float = 1800) -> str:
    return run_cli(env, *args, timeout=timeout)


def _get(url: str, timeout: float = 30) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return resp.read()


# -- the process sampler ----------------------------------------------------------------------
class Sampler(threading.Thread):
    """RSS and open fds of each watched lab service, and the load average, every 5 s."""

    def __init__(self, lab: Lab) -> None:
        super().__init__(daemon=True)
        self.lab = lab
        self.samples: dict[str, list[tuple[float, int, float, float]]] = {}
        self.load: list[tuple[float, float]] = []
        self.stop_event = threading.Event()

    @staticmethod
    def group(name: str) -> str | None:
        if name.startswith("loadgen-"):
            return "loadgen"
        return name if name in OURS or name in STACK else None

    def run(self) -> None:
        while not self.stop_event.wait(SAMPLE_EVERY):
            now = time.time()
            with contextlib.suppress(OSError):
                self.load.append((now, float(Path("/proc/loadavg").read_text().split()[0])))
            try:
                services = self.lab.services()
            except LabError:
                continue
            for s in services:
                name = self.group(s.name)
                if name is None or not pid_alive(s.pid, s.start_time):
                    continue
                try:
                    status = Path(f"/proc/{s.pid}/status").read_text()
                    rss = next(int(line.split()[1]) * 1024 for line in status.splitlines()
                               if line.startswith("VmRSS:"))
                    fds = len(os.listdir(f"/proc/{s.pid}/fd"))
                except (OSError, StopIteration):
                    continue
                self.samples.setdefault(name, []).append((now, s.pid, rss, fds))


class GaleraWatch(threading.Thread):
    """What the loadgen's nodes went through, seen every second on their own: each change of
    the membership (wsrep_cluster_conf_id) and each look that found a node not Synced, as
    (from, to) intervals the event surely lies in. The loadgen judges a window by snapshots
    before and after it and polls during it; this is the independent account its windows
    are checked against.

    A look is read at some instant between asking and the answer, which on a busy machine
    can come seconds later: a change seen by a look lies after the previous look was asked
    and before this one was answered, and a state read lies within its own look. A look
    that gets no answer knows nothing: it is kept apart (`unanswered`), the membership is
    compared across it, and it is never called a change."""

    def __init__(self, lab: Lab, nodes: tuple[int, ...] = LOADGEN_NODES,
                 read: Callable[[int], dict[str, str]] | None = None) -> None:
        super().__init__(daemon=True)
        self.lab, self.nodes = lab, nodes
        self.read = read or self._status
        self.events: list[tuple[float, float, str]] = []
        self.unanswered: list[tuple[float, float, str]] = []
        self.stop_event = threading.Event()

    def _status(self, n: int) -> dict[str, str]:
        from clusterscope.lab import galera_nodes as gn
        return gn.status_vars(self.lab, n)

    def look(self, n: int, last: dict[int, tuple[float, str | None]]) -> None:
        asked = time.time()
        try:
            v = self.read(n)
        except Exception as exc:  # noqa: BLE001 - no answer is no evidence either way
            self.unanswered.append((asked, time.time(), f"node{n} no answer"
                                                         f" ({type(exc).__name__})"))
            return
        answered = time.time()
        conf, state = v.get("wsrep_cluster_conf_id"), v.get("wsrep_local_state_comment")
        before = last.get(n)
        if before is not None and before[1] != conf:
            self.events.append((before[0], answered,
                                f"node{n} membership {before[1]} -> {conf}"))
        if state != "Synced":
            self.events.append((asked, answered, f"node{n} {state}"))
        last[n] = (asked, conf)

    def run(self) -> None:
        last: dict[int, tuple[float, str | None]] = {}
        while not self.stop_event.wait(1.0):
            for n in self.nodes:
                self.look(n, last)


# -- faults ---------------------------------------------------------------------------------
class Faults:
    """Each fault kind: inject, hold, recover; records what it did in a Fault."""

    def __init__(self, lab: Lab, vm_url: str, jobs_of: dict[str, list[str]]) -> None:
        self.lab, self.vm_url, self.jobs_of = lab, vm_url, jobs_of
        self.restarts: dict[str, list[float]] = {}

    def run(self, kind: str, hold: float) -> Fault:
        f = Fault(kind, "", time.time(), hold=hold)
        try:
            getattr(self, kind.replace("-", "_"))(f, hold)
        except Exception as exc:  # noqa: BLE001 - one fault's failure is a finding, not the end
            f.error = f"{type(exc).__name__}: {exc}"
        f.end = time.time()
        return f

    # Galera ------------------------------------------------------------------------------
    def galera_ist(self, f: Fault, hold: float, sst: bool = False) -> None:
        from clusterscope.lab import galera_nodes as gn
        from clusterscope.lab import galera_part
        n = GALERA_NODE
        f.target = f"node{n}"
        gn.kill(self.lab, n)
        time.sleep(hold)
        f.hold = time.time() - f.start
        gn.write_config(self.lab, n, galera_part.sst_method(self.lab))
        galera_part.start_joiner(self.lab, n, force_sst=sst)

    def galera_sst(self, f: Fault, hold: float) -> None:
        self.galera_ist(f, hold, sst=True)

    def _rotate(self, f: Fault, n: int, copy: bool, hold: float) -> None:
        from clusterscope.lab import galera_nodes as gn
        from clusterscope.lab import mariadb
        f.target = f"node{n}"
        log = gn.error_log(self.lab, n)
        if copy:
            # as users copy logs to the monitoring host: a new file renamed over the old
            # one (rsync's default), its lines all read before
            tmp = log.with_name(f".{log.name}.copy")
            shutil.copy2(log, tmp)
            shutil.chown(tmp, mariadb.MYSQL_USER, mariadb.MYSQL_USER)
            tmp.replace(log)
        else:
            log.replace(log.with_name(f"{log.name}.{int(time.time())}"))
        # the server reopens its error log by name (MariaDB FLUSH ERROR LOGS)
        mariadb.execute(gn.base(self.lab, n) / "mysqld.sock", ["FLUSH ERROR LOGS"])
        time.sleep(hold)

    def log_rotate(self, f: Fault, hold: float) -> None:
        self._rotate(f, ROTATE_NODE, copy=False, hold=hold)

    def log_recopy(self, f: Fault, hold: float) -> None:
        self._rotate(f, RECOPY_NODE, copy=True, hold=hold)

    # NDB ----------------------------------------------------------------------------------
    def _ndb_sock(self) -> str:
        from clusterscope.lab import ndb_part
        svc = self.lab.service(ndb_part.MODEL)
        if svc is None:
            raise LabError("the NDB simulator is not up")
        return svc.extra["socket"]

    def ndb_restart(self, f: Fault, hold: float) -> None:
        from clusterscope.ndbsim import control
        f.target = str(NDB_NODE)
        sock = self._ndb_sock()
        res = control.send(sock, {"cmd": "restart", "node": NDB_NODE, "profile": None,
                                  "initial": False, "time_scale": NDB_TIME_SCALE})
        control.wait_restart(sock, res["restart_id"], res["planned_wall_secs"] * 3 + 60)
        f.hold = time.time() - f.start

    def ndb_stop(self, f: Fault, hold: float) -> None:
        from clusterscope.ndbsim import control
        f.target = str(NDB_NODE)
        sock = self._ndb_sock()
        control.send(sock, {"cmd": "stop-node", "node": NDB_NODE})
        time.sleep(hold)
        f.hold = time.time() - f.start
        res = control.send(sock, {"cmd": "start-node", "node": NDB_NODE,
                                  "time_scale": NDB_TIME_SCALE})
        control.wait_restart(sock, res["restart_id"], res["planned_wall_secs"] * 3 + 60)

    def ndb_sql_kill(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import ndb_part
        serving = _query(self.vm_url, 'ndb_sql_node_serving{cluster="lab-ndb"} == 1')
        name = serving[0]["metric"]["sql_node"] if serving else "sql1"
        i = int(name.removeprefix("sql"))
        f.target = name
        ndb_part.kill_sql(self.lab, i)
        time.sleep(hold)
        f.hold = time.time() - f.start
        ndb_part.start_sql(self.lab, i)

    # our processes ------------------------------------------------------------------------
    def _kill_and_start(self, f: Fault, service: str, start: Callable[[], object],
                        hold: float) -> None:
        svc = self.lab.service(service)
        if svc is None or not pid_alive(svc.pid, svc.start_time):
            raise LabError(f"{service} is not running")
        f.target = service
        f.jobs = self.jobs_of.get(service, [])
        f.restarted.append(service)
        self.restarts.setdefault(service, []).append(time.time())
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(svc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while pid_alive(svc.pid, svc.start_time) and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(svc.pid, os.WNOHANG)
            time.sleep(0.1)
        time.sleep(hold)
        f.hold = time.time() - f.start
        start()
        self.restarts[service].append(time.time())

    def kill_mysqld_exporter(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import exporters
        self._kill_and_start(f, exporters.MYSQLD_EXPORTER,
                             lambda: exporters.ensure_mysqld_exporter(self.lab), hold)

    def kill_ndb_exporter(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import ndb_exporter
        self._kill_and_start(f, ndb_exporter.NAME, lambda: ndb_exporter.up(self.lab), hold)

    def kill_tracker(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import galera_part
        self._kill_and_start(f, "galera-tracker", lambda: galera_part.start_tracker(self.lab), hold)

    def kill_inventory(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import monitoring_part
        self._kill_and_start(f, monitoring_part.INVENTORY,
                             lambda: monitoring_part.start_inventory(self.lab), hold)

    def restart_vm(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import monitoring_part
        f.target = monitoring_part.VM
        f.jobs = ["*"]
        self.restarts.setdefault(monitoring_part.VM, []).append(time.time())
        self.lab.stop(monitoring_part.VM)
        f.hold = time.time() - f.start
        monitoring_part.up(self.lab, argparse.Namespace(retention=None, logs_retention=None))
        self.restarts[monitoring_part.VM].append(time.time())
        time.sleep(min(hold, 5))

    def hang_ndb_exporter(self, f: Fault, hold: float) -> None:
        from clusterscope.lab import ndb_exporter
        svc = self.lab.service(ndb_exporter.NAME)
        if svc is None or not pid_alive(svc.pid, svc.start_time):
            raise LabError("ndb-exporter is not running")
        f.target = ndb_exporter.NAME
        f.jobs = self.jobs_of.get(ndb_exporter.NAME, [])
        os.kill(svc.pid, signal.SIGSTOP)
        try:
            time.sleep(hold)
        finally:
            f.hold = time.time() - f.start
            os.kill(svc.pid, signal.SIGCONT)


# -- VictoriaMetrics --------------------------------------------------------------------------
def _query(vm_url: str, expr: str) -> list[dict]:
    q = urllib.parse.urlencode({"query": expr})
    return json.loads(_get(f"{vm_url}/api/v1/query?{q}"))["data"]["result"]


def _export(vm_url: str, match: str, start: float, end: float) -> list[dict]:
    """Raw samples (VictoriaMetrics /api/v1/export: one JSON object per series and line)."""
    q = urllib.parse.urlencode({"match[]": match, "start": f"{start:.3f}",
                                "end": f"{end:.3f}"})
    rows = []
    for line in _get(f"{vm_url}/api/v1/export?{q}", timeout=120).splitlines():
        if line.strip():
            rows.append(json.loads(line))
    return rows


def _points(row: dict) -> list[tuple[float, float]]:
    # a null value is a staleness marker (the target stopped answering), not a sample
    return sorted((t / 1000, v) for t, v in zip(row["timestamps"], row["values"], strict=True)
                  if v is not None)


def _targets(vm_url: str, lab: Lab) -> tuple[dict[tuple[str, str], str], dict[str, list[str]]]:
    """(job, instance) -> the lab service that serves it (by the scrape URL's port), and
    service -> its jobs."""
    data = json.loads(_get(f"{vm_url}/api/v1/targets"))["data"]["activeTargets"]
    by_port = {s.port: s.name for s in lab.services() if s.port}
    served, jobs = {}, {}
    for t in data:
        port = urllib.parse.urlsplit(t["scrapeUrl"]).port
        name = by_port.get(port)
        if name is None:
            continue
        name = "loadgen" if name.startswith("loadgen-") else name
        key = (t["labels"].get("job", ""), t["labels"].get("instance", ""))
        served[key] = name
        jobs.setdefault(name, [])
        if key[0] not in jobs[name]:
            jobs[name].append(key[0])
    return served, jobs


def _rule_for(lab: Lab) -> dict[str, float]:
    from clusterscope.lab import monitoring_part
    out: dict[str, float] = {}
    for name in (monitoring_part.VMALERT, monitoring_part.VMALERT_LOGS):
        svc = lab.service(name)
        if svc is None:
            continue
        groups = json.loads(_get(f"http://127.0.0.1:{svc.port}/api/v1/rules"))["data"]["groups"]
        for g in groups:
            for r in g["rules"]:
                if r.get("type") == "alerting":
                    out[r["name"]] = float(r.get("duration") or 0)
    return out


# -- the run ----------------------------------------------------------------------------------
def plan(minutes: float, rule_for: dict[str, float]) -> tuple[dict[str, float], bool]:
    """Each fault's hold: past its alert's `for:` when a whole cycle of such holds fits the
    run, else SHORT_HOLD. Returns (holds, full_length)."""
    full = {k: max([rule_for.get(a, 0.0) for a in soak_faults.KINDS[k].hold_for] or [0.0])
            + (HOLD_MARGIN if soak_faults.KINDS[k].hold_for else SHORT_HOLD) for k in CYCLE}
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
    out_dir = Path(os.environ.get("CLUSTERSCOPE_SOAK_OUT", tempfile.mkdtemp(prefix="cs-soak-out-")))
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
    vm_url = f"http://127.0.0.1:{lab.port(monitoring_part.VM)}"
    rule_for = _rule_for(lab)
    stale = soak_faults.check_names(set(rule_for))
    if stale:
        raise RuntimeError(f"alerts of clusterscope/bench/soak_faults.py the rules do not"
                           f" define: {', '.join(stale)} (renamed? follow rules/config.yaml)")
    windows_file = out_dir / "loadgen-windows.json"
    windows_file.unlink(missing_ok=True)
    loadgen_started = time.time()  # a new loadgen: its counters start from 0
    _cli(env, "loadgen", "start", "--experiment", EXPERIMENT, "--threads", "2",
         "--window", "10", "--warmup", "10", "--json-out", str(windows_file.resolve()))
    time.sleep(2 * interval)  # scraped with its peers before the first fault
    served, jobs_of = _targets(vm_url, lab)
    holds, full_length = plan(minutes, rule_for)
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
                   lab=str(lab.root))
    path = out_dir / "soak.json"
    path.write_text(json.dumps(figures, indent=1, default=str))
    figures["json_file"] = str(path)
    return figures


def rejudge(recording: Path) -> dict:
    """The judgement of a soak from its recording (and the lab's VictoriaMetrics and
    webhook, which must still hold the run)."""
    r = json.loads(recording.read_text())
    served = {(job, inst): name for job, inst, name in r["served"]}
    faults = [Fault(**f) for f in r["faults"]]
    samples = {k: [tuple(x) for x in v] for k, v in r["samples"].items()}
    events = [tuple(e) for e in r["events"]]
    unanswered = [tuple(e) for e in r.get("unanswered", [])]
    return _judge(Lab(Path(r["lab"])), r["vm_url"], served, r["restarts"], faults, samples,
                  r["load"], (events, unanswered), Path(r["windows_file"]), tuple(r["span"]),
                  r["rule_for"], r["grace"], r["interval"], r["timeout"],
                  r.get("active_before", []))


def _judge(lab: Lab, vm_url: str, served: dict, restarts: dict[str, list[float]],
           done: list[Fault], samples: dict, load: list,
           seen: tuple[list, list],
           windows_file: Path,
           span: tuple[float, float], rule_for: dict[str, float], grace: float,
           interval: float, timeout: float, active_before: list[dict]) -> dict:
    from clusterscope.lab import monitoring_part
    t0, t1 = span
    failures: list[str] = []
    # processes
    growth = judge.growth(samples)
    full_length = max((r.get("minutes_observed", 0) for r in growth.values()), default=0) >= 30
    leaking = judge.leaks(growth, OURS) if full_length else []
    failures += [f"leak? {x}" for x in leaking]
    # counters
    counters, resets_bad = {}, []
    rows = _export(vm_url, COUNTER_MATCH, t0 - 120, t1)
    for row in rows:
        m = row["metric"]
        key = (m.get("job", ""), m.get("instance", ""))
        proc = served.get(key)
        if proc is None:
            continue
        pts = _points(row)
        _, bad = judge.counter_resets(pts, restarts.get(proc, []), 2 * interval)
        bad = [t for t in bad if t >= t0]  # what happened before the run is not its business
        if bad:
            resets_bad.append({"series": _series(m), "process": proc,
                               "at": [round(t - t0) for t in bad]})
    counters["series_checked"] = len(rows)
    counters["resets_without_restart"] = resets_bad
    if resets_bad:
        failures.append(f"{len(resets_bad)} counter(s) reset without their process restarting")
    counts = _counts(rows, done, t0)
    counters["counts_vs_schedule"] = counts
    for name, c in counts.items():
        if not c["ok"]:
            failures.append(f"{name}: counted {c['counted']}, scheduled {c['scheduled']}")
    # samples
    ups: dict[tuple[str, str], dict] = {}
    for metric, field_ in (("up", "up"), ("scrape_duration_seconds", "duration")):
        for row in _export(vm_url, metric, t0, t1):
            key = (row["metric"].get("job", ""), row["metric"].get("instance", ""))
            ups.setdefault(key, {})[field_] = _points(row)
    ups = {k: v for k, v in ups.items() if "up" in v}
    lost = judge.lost_samples(ups, interval, timeout, done, (t0 + interval, t1 - interval))
    lost_total = sum(r["lost"] for r in lost.values())
    if lost_total:
        failures.append(f"{lost_total} sample(s) lost outside the fault windows")
    # alerts
    instances = judge.alert_instances(monitoring_part.received(lab))
    alerts = judge.judge_alerts(instances, done, rule_for, grace, (t0, t1),
                                monitoring_part.firing_now(lab), active_before)
    missed = [r for r in alerts["expected"] if not r["ok"]]
    if missed:
        failures.append(f"{len(missed)} expected alert(s) missed or never resolved")
    if alerts["unexpected"]:
        failures.append(f"{len(alerts['unexpected'])} alert(s) fired that no fault explains")
    if alerts["explained_but_unresolved"]:
        failures.append(f"{len(alerts['explained_but_unresolved'])} alert(s) never resolved")
    # loadgen windows
    try:
        result = json.loads(windows_file.read_text())
        windows = result.get("windows", [])
    except (OSError, json.JSONDecodeError) as exc:
        windows = []
        failures.append(f"the loadgen wrote no windows ({exc})")
    events, unanswered = seen
    win = judge.judge_windows(windows, done, events, unanswered=unanswered)
    if not win["ok"]:
        failures.append("loadgen windows judged wrong (see windows)")
    errors = [f"{f.kind}: {f.error}" for f in done if f.error]
    failures += errors
    loads = [v for _, v in load]
    return {
        "ok": not failures, "failures": failures,
        "load_average": {"min": min(loads, default=0), "max": max(loads, default=0),
                         "mean": round(sum(loads) / max(len(loads), 1), 2)},
        "faults": {f"{i + 1:02d} {f.kind}": {"target": f.target, "at_s": round(f.start - t0),
                                             "held_s": round(f.hold, 1),
                                             "took_s": round(f.end - f.start, 1),
                                             "error": f.error or ""}
                   for i, f in enumerate(done)},
        "processes": growth,
        "counters": counters,
        "samples": {k: {kk: vv for kk, vv in v.items() if kk != "lost_at" or vv}
                    for k, v in lost.items()},
        "alerts_expected": {f"{r['fault']} @{r['at']}s {r['alert']}": {
            k: v for k, v in r.items() if k not in ("fault", "alert", "at")}
            for r in alerts["expected"]},
        "alerts_fired": len(alerts["fired"]),
        "alerts_unexpected": alerts["unexpected"],
        "alerts_ambient": alerts["ambient"],
        "alerts_carried_over": alerts["carried_over"],
        "galera_events": [[round(a - t0, 1), round(b - t0, 1), why] for a, b, why in events],
        "galera_unanswered": [[round(a - t0, 1), round(b - t0, 1), why]
                              for a, b, why in unanswered],
        "alerts_unresolved": alerts["explained_but_unresolved"],
        "alerts_active_at_end": [f"{a['alertname']} {a['state']}"
                                 for a in alerts["active_at_end"]],
        "windows": win,
    }


def _series(m: dict) -> str:
    labels = ",".join(f'{k}="{v}"' for k, v in sorted(m.items()) if k != "__name__")
    return f"{m.get('__name__')}{{{labels}}}"


def _counts(rows: list[dict], done: list[Fault], t0: float) -> dict[str, dict]:
    """Completed recoveries, restarts and failovers counted vs the schedule's."""
    ran = [f for f in done if f.error is None]

    def counted(name: str, **want: str) -> float:
        total = 0.0
        for row in rows:
            m = row["metric"]
            if m.get("__name__") == name and all(m.get(k) == v for k, v in want.items()):
                pts = _points(row)
                total += judge.increase(pts, t0, appeared_from_zero=pts[0][0] >= t0)
        return total

    out = {}

    def check(label: str, got: float, want: int) -> None:
        out[label] = {"counted": round(got), "scheduled": want, "ok": round(got) == want}

    node = f"node{GALERA_NODE}"
    check(f"galera_recoveries_total{{node={node},kind=ist}}",
          counted("galera_recoveries_total", node=node, kind="ist"),
          sum(f.kind == "galera-ist" for f in ran))
    check(f"galera_recoveries_total{{node={node},kind=sst}}",
          counted("galera_recoveries_total", node=node, kind="sst"),
          sum(f.kind == "galera-sst" for f in ran))
    check("galera_recoveries_aborted_total", counted("galera_recoveries_aborted_total"), 0)
    for n in (ROTATE_NODE, RECOPY_NODE):
        check(f"galera_tracker_log_reopens_total{{node=node{n}}}",
              counted("galera_tracker_log_reopens_total", node=f"node{n}"),
              sum(f.kind in ("log-rotate", "log-recopy") and f.target == f"node{n}"
                  for f in ran))
    check(f"ndb_restarts_completed_total{{node_id={NDB_NODE}}}",
          counted("ndb_restarts_completed_total", node_id=str(NDB_NODE), job="ndbinfo"),
          sum(f.kind in ("ndb-restart", "ndb-stop") for f in ran))
    check("ndb_exporter_sql_node_failovers_total",
          counted("ndb_exporter_sql_node_failovers_total", job="ndbinfo"),
          sum(f.kind == "ndb-sql-kill" for f in ran))
    return out


