"""`clusterscope demo` (`make demo`): the main job in one command.

Brings the lab up, runs the FK and partitioning experiments against the real Galera cluster,
crashes a Galera node and lets it rejoin by IST, plays simulated NDB restarts with the 7.6
release, switches the simulated data nodes to 7.5 and restarts them again, shows the alert
that fired and the changes found, prints the comparison and writes the report (with a page
for the version change: the restarts of both releases side by side). Ctrl-C (or a failed
step) stops the lab; a finished demo leaves it running to look at.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from clusterscope.clients.vm import VM
from clusterscope.deploy.scrape import SCRAPE_INTERVAL
from clusterscope.lab import endpoints
from clusterscope.lab.core import lab_dir_from_env
from clusterscope.ndbsim.restart import EXPECTED_TOTAL_RANGE


class DemoError(RuntimeError):
    pass


def _seconds(duration: str) -> float:
    """A Prometheus duration of one unit ("5s", "1m") in seconds."""
    return float(duration[:-1]) * {"s": 1, "m": 60, "h": 3600}[duration[-1]]


def _bar(done: float, total: float, width: int = 30) -> str:
    frac = 0.0 if total <= 0 else min(1.0, done / total)
    return "[" + "#" * int(frac * width) + "-" * (width - int(frac * width)) + f"] {frac:4.0%}"


class Demo:
    def __init__(self, args: argparse.Namespace) -> None:
        self.lab_dir = lab_dir_from_env(args.lab_dir)
        self.short = args.short
        self.time_scale = args.time_scale
        self.env = dict(os.environ, CLUSTERSCOPE_LAB_DIR=str(self.lab_dir))
        self.t_start = time.monotonic()
        self.step_no = 0

    # -- plumbing ------------------------------------------------------------------------
    def cs(self, *args: str, timeout: float = 900, check: bool = True) -> str:
        proc = subprocess.run([sys.executable, "-m", "clusterscope.cli", *args], env=self.env,
                              text=True, capture_output=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise DemoError(f"`clusterscope {' '.join(args)}` failed ({proc.returncode}):\n"
                            f"{(proc.stderr or proc.stdout)[-2500:]}")
        return proc.stdout

    def step(self, title: str) -> None:
        self.step_no += 1
        elapsed = time.monotonic() - self.t_start
        print(f"\n==> [{self.step_no}] {title}   (t+{elapsed:.0f}s)", flush=True)

    def wait(self, seconds: float, what: str,
             until: Callable[[], bool] | None = None) -> bool:
        """Wait with a progress bar; return True when `until` became true first."""
        t0 = time.monotonic()
        tty = sys.stdout.isatty()
        last_print = -10.0
        while (done := time.monotonic() - t0) < seconds:
            if until is not None and until():
                print(f"\r    {what} {_bar(1, 1)} done after {done:.0f}s" + " " * 10, flush=True)
                return True
            if tty or done - last_print >= 10:
                end = "\r" if tty else "\n"
                print(f"    {what} {_bar(done, seconds)} {done:.0f}/{seconds:.0f}s", end=end,
                      flush=True)
                last_print = done
            time.sleep(1.0)
        print(f"    {what} {_bar(1, 1)} {seconds:.0f}s" + " " * 10, flush=True)
        return until() if until is not None else True

    def in_background(self, *args: str) -> threading.Thread:
        errors: list[str] = []

        def target() -> None:
            try:
                self.cs(*args)
            except DemoError as exc:
                errors.append(str(exc))

        t = threading.Thread(target=target, daemon=True)
        t.errors = errors  # type: ignore[attr-defined]
        t.start()
        return t

    def vm(self) -> VM:
        return endpoints.lab_metrics(self.lab_dir).vm

    def alerts(self) -> list[dict]:
        """Notifications the webhook received from Alertmanager (the full alert path)."""
        out = self.cs("lab", "monitoring", "alerts", "--json", check=False)
        try:
            return list(json.loads(out).get("received", []))
        except (ValueError, AttributeError):
            return []

    # -- the scenario --------------------------------------------------------------------
    def run(self) -> dict:
        # Short mode keeps one variant pair per experiment so that even a short run has
        # enough A/B pairs for an interval; the full demo runs every variant.
        # The full demo (under 10 minutes) adds the two-writer FK pair and the range-scan
        # partitioning pair; `clusterscope loadgen run` without --variants runs them all.
        window = 5 if self.short else 8
        fk_seconds = 150 if self.short else 240
        part_seconds = 70 if self.short else 200
        fk_variants = ["--variants", "fk2" if self.short else "fk2,fk2_2w"]
        part_variants = ["--variants", "p8_point_1t" if self.short else "p8_point_1t,p8_range_1t"]
        restarts_76 = 3
        restarts_75 = 3  # 7.5 totals spread widely: fewer than 3 give no usable interval

        self.step("Bringing the lab up: Galera (real), NDB simulator, exporters, monitoring,"
                  " VictoriaLogs")
        print(self.cs("lab", "up", timeout=1800).strip())
        self.cs("lab", "ndb", "fault", "clear")  # a reused lab may carry injected faults
        self.cs("lab", "ndb", "set-version", "7.6")  # a reused lab may run the 7.5 release
        scenario_start = time.time()

        self.step(f"FK experiment on Galera node 1 ({fk_seconds}s, {window}s A/B windows)")
        self.cs("loadgen", "start", "--experiment", "fk", "--node", "galera-node1",
                "--window", str(window), "--warmup", str(window), "--duration",
                str(fk_seconds), *fk_variants)

        self.step(f"NDB simulator: {restarts_76} node restarts with the 7.6 profile"
                  f" (time-scale {self.restart_time_scale('7.6'):g}), SIMULATED")
        before_76 = time.time()
        for i in range(restarts_76):
            self._restart_node("7.6", 600)
            print(f"    7.6 restart {i + 1}/{restarts_76} completed", flush=True)

        self.step("Galera: SIGKILL node 3, then restart it (position recovered, IST rejoin)")
        self.cs("lab", "galera", "kill-node", "3")
        # Restarting before the group evicted the killed member makes it evict the old
        # identity first: start it once the others have formed a view without it.
        self.wait(30, "node 3 down", until=lambda: self._evicted(3))
        self.cs("lab", "galera", "start-node", "3", timeout=600)
        print("    node 3 is back and synced", flush=True)

        self.step("NDB simulator: the data nodes' release 7.6.6 -> 7.5.10 (the field facts'"
                  " other release; the change detector finds it), SIMULATED")
        self.cs("lab", "ndb", "set-version", "7.5")
        self.step(f"NDB simulator: {restarts_75} node restarts with the 7.5 profile"
                  f" (time-scale {self.restart_time_scale('7.5'):g}), SIMULATED")
        before_75 = time.time()
        for i in range(restarts_75):
            self._restart_node("7.5", 900)
            print(f"    7.5 restart {i + 1}/{restarts_75} completed", flush=True)
        after_75 = time.time()

        self.step("Waiting for the FK experiment's windows")
        fk_end = scenario_start + fk_seconds + 30
        self.wait(max(0.0, fk_end - time.time()), "fk windows",
                  until=lambda: not self._loadgen_running("fk"))

        self.step(f"Partitioning experiment on Galera node 1 ({part_seconds}s)")
        self.cs("loadgen", "start", "--experiment", "partitioning", "--node", "galera-node1",
                "--window", str(window), "--warmup", str(window), "--duration",
                str(part_seconds), *part_variants)
        self.wait(part_seconds + 30, "partitioning windows",
                  until=lambda: not self._loadgen_running("partitioning"))

        self.step("Alerts that fired (vmalert -> Alertmanager -> webhook)")
        alerts = self._wait_alert("NdbRestartTimeRegressed", 120, since=scenario_start)
        for a in alerts:
            labels, ann = a.get("labels", {}), a.get("annotations", {})
            print(f"    ALERT {labels.get('alertname')} [{labels.get('severity', '')}]"
                  f" {a.get('status', '')}: {ann.get('summary', '')}")
            if ann.get("runbook_url"):
                print(f"          runbook: {ann['runbook_url']}")

        self.step("Configuration and version changes found (each compared once its period"
                  " is over)")
        print(self.cs("changes", "--lab-dir", str(self.lab_dir), "--since",
                      f"{scenario_start - 60:.0f}"))

        self.step("Experiment overheads (95% intervals over paired windows)")
        # only this scenario's runs: a reused lab keeps earlier runs' estimates
        overheads = self._overheads(time.time() - scenario_start)
        for o in overheads:
            print(f"    {o['experiment']:<13} {o['variant']:<12} vs {o['baseline']:<10}"
                  f" {o['text']}")

        self.step("Comparison: NDB restarts with the 7.6 profile (before) vs 7.5 (after),"
                  " SIMULATED")
        # A completed restart's figures stay in restart_info until the next restart, so each
        # period runs until the next step began (the scrape after the last completion).
        before_p = f"{before_76:.0f}..{before_75:.0f}"
        after_p = f"{before_75:.0f}..{min(time.time(), after_75 + 30):.0f}"
        # --lab-dir: the lab's VictoriaMetrics even where $CLUSTERSCOPE_VM_URL names another
        table = self.cs("compare", "--lab-dir", str(self.lab_dir), "--before", before_p,
                        "--after", after_p, "--only", "ndb_restart_total,ndb_restart_phase")
        print(table)

        self.step("Writing the report")
        report_dir = self.lab_dir / "report"
        end = time.time()
        out = self.cs("report", "--lab-dir", str(self.lab_dir), "--out", str(report_dir),
                      "--period",
                      f"{scenario_start - 60:.0f}..{end:.0f}", "--compare", before_p, after_p,
                      "--only", "ndb_restart_total,ndb_restart_phase")
        print("    " + out.strip())
        return {"alerts": alerts, "overheads": overheads, "report": str(report_dir /
                                                                         "index.html")}

    def _completed_restarts(self) -> float:
        """Node 2's completed restarts as the exporter counted them; 0 before the exporter
        has seen any (the series exists once restart_info has a row for the node)."""
        rows = self.vm().query('max(ndb_restarts_completed_total{node_id="2"})')
        return float(rows[0]["value"][1]) if rows else 0.0

    def restart_time_scale(self, profile: str) -> float:
        """The time scale for one simulated restart: --time-scale, slowed down where the
        restart would be over within two scrapes. The exporter times a restart it saw under
        way and then completed; one that begins and ends between two scrapes is counted
        when first met but not timed, so `compare` (which samples completions) misses it:
        at x120 a 7.6 restart of ~400 cluster s lasts 3.5 s, less than a 5 s scrape."""
        shortest = EXPECTED_TOTAL_RANGE[profile][0]
        return min(self.time_scale, shortest / (2 * _seconds(SCRAPE_INTERVAL)))

    def _restart_node(self, profile: str, timeout: float) -> None:
        """Restart NDB node 2 and wait until the exporter's scrape counted the completion.

        The next restart must not start before this one was seen completed, or two
        restarts run between two scrapes and the exporter sees one."""
        before = self._completed_restarts()
        self.cs("lab", "ndb", "restart-node", "2", "--profile", profile, "--time-scale",
                f"{self.restart_time_scale(profile):g}", "--wait", timeout=timeout)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self._completed_restarts() > before:
                return
            time.sleep(1.0)
        print("    NOTE: the exporter has not counted this restart within 60 s", flush=True)

    def _evicted(self, killed: int) -> bool:
        """Every running Galera node is in a view without `killed` (their cluster size is
        the count of running nodes)."""
        try:
            rows = json.loads(self.cs("lab", "galera", "status", "--json", check=False))
        except ValueError:
            return False
        up = [r for r in rows if r["running"] and r["node"] != f"node{killed}"]
        return bool(up) and all(r.get("cluster_size") == len(up) for r in up)

    def _loadgen_running(self, experiment: str) -> bool:
        status = json.loads(self.cs("lab", "status", "--json"))
        return any(s["name"] == f"loadgen-{experiment}" and s["running"]
                   for s in status["services"])

    def _wait_alert(self, name: str, timeout: float, since: float) -> list[dict]:
        """The distinct alerts received since `since` (latest notification of each)."""
        found: list[dict] = []

        def fired() -> bool:
            nonlocal found
            latest: dict[tuple, dict] = {}
            for a in self.alerts():
                if a.get("received_at", 0) >= since:
                    latest[tuple(sorted(a.get("labels", {}).items()))] = a
            found = list(latest.values())
            return any(a.get("labels", {}).get("alertname") == name for a in found)

        self.wait(timeout, f"waiting for {name}", until=fired)
        if not any(a.get("labels", {}).get("alertname") == name for a in found):
            print(f"    NOTE: {name} did not reach the webhook within {timeout:.0f}s")
        return found

    def _overheads(self, age: float) -> list[dict]:
        """Each experiment's final estimate (its loadgen has ended: look back over the run),
        with the estimand it estimates and its interval's level."""
        vm = self.vm()
        out = []
        rng = f"[{int(age)}s]"

        def last(name: str, sel: str) -> float:
            rows = vm.query(f"last_over_time({name}{{{sel}}}{rng})")
            return float(rows[0]["value"][1]) if rows else math.nan

        for r in vm.query(f"last_over_time(loadgen_overhead_ratio{rng})"):
            m = r["metric"]
            sel = ",".join(f'{k}="{m[k]}"' for k in ("experiment", "variant", "baseline",
                                                      "estimand") if k in m)
            low, high = last("loadgen_overhead_ratio_lower", sel), last(
                "loadgen_overhead_ratio_upper", sel)
            level = last("loadgen_overhead_confidence_ratio", sel)
            units = last("loadgen_overhead_pairs", sel)
            n = 0 if math.isnan(units) else int(units)
            v = float(r["value"][1])
            level_text = "95%" if math.isnan(level) else f"{level * 100:.4g}%"
            text = f"{v * 100:+.1f}%" + ("  (too few units: no interval yet)" if math.isnan(low)
                                         else f"  {level_text} CI [{low * 100:+.1f}%,"
                                              f" {high * 100:+.1f}%]")
            text += (f"  over {n} units, estimand {m.get('estimand', '?')}"
                     " (positive = variant slower)")
            out.append({"experiment": m.get("experiment", "?"), "variant": m.get("variant", "?"),
                        "baseline": m.get("baseline", "?"), "estimand": m.get("estimand", "?"),
                        "ratio": v, "low": low, "high": high, "text": text})
        return sorted(out, key=lambda o: (o["experiment"], o["variant"]))


