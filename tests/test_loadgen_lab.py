"""Loadgen against the lab's real Galera cluster (short windows)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pymysql
import pytest
from clusterscope_loadgen import config, designs, estimators, stats
from clusterscope_loadgen.metrics import Metrics
from clusterscope_loadgen.runner import RunError, Runner
from clusterscope_loadgen.target import Target, connect
from helpers import REPO, Samples, scrape_text, series

pytestmark = pytest.mark.lab


def _targets(lab) -> list[str]:
    return [lab.service(f"galera-node{n}")["client_config"] for n in (1, 2)]


def _scrape(port: int) -> Samples | None:
    """The loadgen's samples, or None while (or once) it does not serve."""
    try:
        return Samples.of_text(scrape_text(port, timeout=2))
    except OSError:
        return None


def test_fk_run_with_a_killed_node(galera_lab, tmp_path: Path) -> None:
    """Every variant gets windows; a SIGKILLed node invalidates exactly the windows it
    touched; overheads come from the valid pairs; row counts verify; /metrics agrees."""
    n1, n2 = _targets(galera_lab)
    port = galera_lab.port("loadgen9")
    out = tmp_path / "fk.json"
    variants = [v.name for v in config.experiment("fk").variants]
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterscope.cli", "loadgen", "run", "--experiment", "fk",
         "--target", n1, "--target", n2, "--window", "3", "--warmup", "0", "--rounds", "8",
         "--metrics-port", str(port), "--json-out", str(out), "--linger", "60"],
        env=galera_lab.env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # until round 1 is complete for every variant
            samples = _scrape(port) or Samples()
            done = {lab["variant"] for lab, v in series(samples, "loadgen_window_seq") if v >= 1}
            if done >= set(variants):
                break
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.5)
        else:
            pytest.fail("round 1 did not finish")
        t_kill_before = time.time()
        galera_lab.cli("lab", "galera", "kill-node", "2")
        t_kill_after = time.time()
        time.sleep(2)
        t_sync_before = time.time()
        galera_lab.cli("lab", "galera", "start-node", "2")
        t_sync_after = time.time()
        deadline = time.monotonic() + 180
        while not out.exists() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.5)
        samples = _scrape(port)  # the run lingers, serving its final values
    finally:
        proc.terminate()
        log = proc.communicate(timeout=30)[0]
    assert samples, log
    result = json.loads(out.read_text())
    windows = [w for w in result["windows"] if not w["warmup"]]
    for v in variants:
        assert len([w for w in windows if w["variant"] == v]) == 8, log

    touched = [w for w in windows if w["start"] < t_sync_before and w["end"] > t_kill_after]
    untouched = [w for w in windows if w["end"] < t_kill_before or w["start"] > t_sync_after]
    assert touched and untouched, log
    assert all(not w["valid"] and w["reasons"] for w in touched), log
    assert all(w["valid"] for w in untouched), [(w["variant"], w["reasons"]) for w in untouched]

    # Overheads: recompute from the JSON windows, compare with the run and with /metrics.
    assert result["design"] == designs.DEFAULT and result["estimator"] == estimators.DEFAULT
    assert all(w["interleaved"] for w in windows)
    swins = [stats.Window(w["variant"], w["seq"], w["valid"], w["throughput"],
                          w["latency"].get("0.95", 0.0)) for w in windows]
    exported = {lab["variant"]: v for lab, v in series(samples, "loadgen_overhead_ratio")}
    for name, est in result["estimates"].items():
        us = designs.units(swins, name, est["baseline"])
        expect = estimators.ESTIMATORS[result["estimator"]](us)
        assert est["overhead"]["n"] == expect.n == len(us) >= 2, log
        assert est["overhead"]["mean"] == pytest.approx(expect.mean)
        assert est["overhead"]["low"] == pytest.approx(expect.low)
        assert est["overhead"]["low"] <= est["overhead"]["mean"] <= est["overhead"]["high"]
        assert exported[name] == pytest.approx(est["overhead"]["mean"])
        assert set(est["estimators"]) == set(estimators.ESTIMATORS)
    info = [lab for lab, _ in series(samples, "loadgen_info")]
    assert [(i["design"], i["estimator"]) for i in info] == [(designs.DEFAULT,
                                                              estimators.DEFAULT)]

    invalid = sum(v for lab, v in series(samples, "loadgen_windows_total")
                  if lab["valid"] == "false")
    assert invalid == len([w for w in windows if not w["valid"]])
    tps = {lab["variant"] for lab, _ in series(samples, "loadgen_window_tps")}
    assert tps == set(variants)
    for lab, _ in series(samples, "loadgen_window_tps"):
        assert lab["engine"] == "galera" and lab["experiment"] == "fk"

    # Nothing written is lost: every child table's count matches what the run committed.
    checked = {v["table"]: v for v in result["verification"]}
    assert set(checked) == {"users_posts", "users_posts_fk1", "users_posts_fk"}
    assert all(v["ok"] is True for v in checked.values()), checked


@pytest.mark.parametrize("design", ["windows", "abba"])
def test_the_other_designs_run_by_name(galera_lab, design: str) -> None:
    """`--design windows|abba`: one variant per window; pairs per round or mirrored block."""
    targets = [Target.from_cnf(p) for p in _targets(galera_lab)]
    runner = Runner(config.experiment("fk"), "galera", targets, only=["fk2"], design=design,
                    window=2, warmup=0, out=lambda s: None)
    result = runner.run(rounds=2)
    wins = result["windows"]
    assert result["design"] == design and not any(w["interleaved"] for w in wins)
    per_round = 2 if design == "windows" else 4  # abba: A B B A (or B A A B) per block
    assert len(wins) == 2 * per_round and all(w["valid"] for w in wins), wins
    for seq in (1, 2):
        order = [w["variant"] for w in wins if w["seq"] == seq]
        assert sorted(order) == sorted(["nofk", "fk2"] * (per_round // 2))
        if design == "abba":
            assert order == order[::-1]
    assert result["estimates"]["fk2"]["overhead"]["n"] == 2
    assert all(v["ok"] is True for v in result["verification"])


def test_an_injected_delay_is_measured_and_charged_to_its_variant(galera_lab) -> None:
    """A variant whose steps busy-wait 1 ms shares each window with two identical ones
    without: its measured delay is at least 1 ms a step, and the overhead found is the
    delay's share of the step, 1 - L / (L + D), to within the window noise. (The exact
    recovery of a small cost is a statistical property: `clusterscope bench
    loadgen-calibration` measures it over 20 runs. A delay this large also slows the step
    that follows it, which interleaving charges to the other variants: found < truth.)"""
    from clusterscope.bench.loadgen_ab import calibration_experiment
    targets = [Target.from_cnf(p) for p in _targets(galera_lab)]
    runner = Runner(calibration_experiment(1000), "galera", targets, window=2, warmup=0,
                    threads=2, out=lambda s: None)
    result = runner.run(rounds=4)
    wins = {(w["variant"], w["seq"]): w for w in result["windows"]}
    assert all(w["valid"] and w["interleaved"] for w in wins.values()), wins
    truths = []
    for seq in (1, 2, 3, 4):
        base, slow = wins["nofk", seq], wins["nofk_delay", seq]
        assert slow["delay_seconds"] >= 0.001 and base["delay_seconds"] == 0
        assert wins["nofk_aa", seq]["transactions"] == base["transactions"] > 0
        truths.append(1 - base["mean_latency"] / (base["mean_latency"]
                                                  + slow["delay_seconds"]))
    truth = sum(truths) / len(truths)
    found = result["estimates"]["nofk_delay"]["overhead"]["mean"]
    same = result["estimates"]["nofk_aa"]["overhead"]["mean"]
    assert truth > 0.2 and truth / 2 < found < truth + 0.1, (found, truth)
    assert abs(same) < found / 2, (same, found)
    assert all(v["ok"] is True for v in result["verification"])


def test_sigterm_mid_window_stops_after_it_with_exact_rows(galera_lab) -> None:
    """`loadgen stop` sends SIGTERM: the window in progress finishes and books its rows, so
    the final check is exact (killing sysbench mid-window left unbooked rows: MISMATCH)."""
    n1, _ = _targets(galera_lab)
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterscope_loadgen", "run", "--experiment", "fk",
         "--variants", "fk2", "--target", n1, "--window", "4", "--warmup", "0",
         "--duration", "300"], env=galera_lab.env, cwd=REPO, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "round 1 fk2" in line:
                break
        time.sleep(1.5)  # inside round 2's window
        t0 = time.monotonic()
        proc.terminate()
        out = "".join(lines) + proc.communicate(timeout=60)[0]
    finally:
        proc.kill()
    assert proc.returncode == 0 and time.monotonic() - t0 < 20, out
    assert "round 2 fk2" in out and "round 3" not in out and "loadgen: stopping" in out
    assert out.count(": OK") == 2 and "MISMATCH" not in out, out


def test_fk_table_rejects_an_orphan_insert(galera_lab) -> None:
    n1, n2 = _targets(galera_lab)
    t = Target.from_cnf(n1)
    runner = Runner(config.experiment("fk"), "galera", [t, Target.from_cnf(n2)],
                    out=lambda s: None)
    runner.prepare()
    conn = connect(t, database=runner.database)
    try:
        with conn.cursor() as cur:
            with pytest.raises(pymysql.IntegrityError) as err:
                cur.execute("INSERT INTO users_posts_fk (uid, fid, message) VALUES"
                            " (999999999, 1, 'orphan')")
            assert err.value.args[0] == 1452  # a foreign key constraint fails
            cur.execute("INSERT INTO users_posts (uid, fid, message) VALUES"
                        " (999999999, 1, 'no constraint')")
            cur.execute("DELETE FROM users_posts WHERE uid = 999999999")
    finally:
        conn.close()


def test_bad_experiment_and_refused_ddl_are_named(galera_lab) -> None:
    n1, _ = _targets(galera_lab)
    proc = galera_lab.cli("loadgen", "run", "--experiment", "nope", "--target", n1,
                          check=False)
    assert proc.returncode == 2 and "no experiment 'nope'" in proc.stderr
    runner = Runner(config.experiment("batching_pk"), "galera", [Target.from_cnf(n1)],
                    database="not_granted_db", out=lambda s: None)
    with pytest.raises(RunError, match="experiment batching_pk: target .* refused the DDL"):
        runner.prepare()


def test_every_experiment_exports_every_variant(galera_lab) -> None:
    targets = [Target.from_cnf(p) for p in _targets(galera_lab)]
    for name in ("read_backup", "partitioning", "batching_pk"):
        m = Metrics()
        # read_backup's threads open several connections first: give them 2 s windows.
        window = 2 if name == "read_backup" else 1
        runner = Runner(config.experiment(name), "galera", targets, window=window, warmup=0,
                        metrics=m, out=lambda s: None)
        result = runner.run(rounds=1)
        wins = {w["variant"]: w for w in result["windows"]}
        assert all(w["valid"] for w in wins.values()), [(w["variant"], w["reasons"])
                                                        for w in wins.values()]
        for v in runner.variants:
            labels = runner.labels(v.name)
            assert m.registry.get_sample_value("loadgen_window_tps", labels) > 0, (name, v)
            assert m.registry.get_sample_value(
                "loadgen_window_latency_seconds", {**labels, "quantile": "0.95"}) > 0
            if v.baseline:
                assert m.registry.get_sample_value(
                    "loadgen_overhead_pairs", {**labels, "baseline": v.baseline}) is not None
        if name == "read_backup":
            # wsrep_sync_wait=1 makes the other node's read causal: never stale.
            assert wins["sync_wait_1"]["stale"] == 0
        assert all(v["ok"] is True for v in result["verification"])


def test_lab_start_and_stop(galera_lab) -> None:
    galera_lab.cli("loadgen", "start", "--experiment", "read_backup", "--window", "1")
    try:
        svc = galera_lab.service("loadgen-read_backup")
        assert svc["running"] and svc["part"] == "loadgen"
        assert svc["extra"]["scrape"] == {"job": "loadgen", "path": "/metrics",
                                          "labels": {"cluster": "lab-galera"}}
        ports = {galera_lab.port(f"loadgen{i}") for i in range(10)}
        assert svc["port"] in ports
        deadline = time.monotonic() + 60
        seen: set[str] = set()
        while time.monotonic() < deadline and seen != {"sync_wait_0", "sync_wait_1"}:
            samples = _scrape(svc["port"]) or Samples()
            seen = {lab["variant"] for lab, _ in series(samples, "loadgen_window_tps")}
            time.sleep(0.5)
        assert seen == {"sync_wait_0", "sync_wait_1"}
    finally:
        galera_lab.cli("loadgen", "stop")
    names = [s["name"] for s in galera_lab.status()["services"]]
    assert "loadgen-read_backup" not in names
    assert _scrape(svc["port"]) is None


def test_lab_stop_lets_the_running_window_finish(galera_lab, tmp_path: Path) -> None:
    """`clusterscope loadgen stop` signals the loadgen alone: sysbench finishes the window
    in progress and its rows are booked. It used to stop the whole process group, sysbench
    too: the last window invalid ("sysbench exited -15"), found by the soak."""
    out = tmp_path / "windows.json"
    galera_lab.cli("loadgen", "start", "--experiment", "fk", "--variants", "fk2",
                   "--window", "4", "--warmup", "0", "--json-out", str(out))
    try:
        port = galera_lab.service("loadgen-fk")["port"]
        deadline = time.monotonic() + 90
        done = 0.0
        while time.monotonic() < deadline and done < 1:
            samples = _scrape(port) or Samples()
            done = sum(v for _, v in series(samples, "loadgen_windows_total"))
            time.sleep(0.3)
        assert done >= 1
        time.sleep(1.5)  # inside the next window
    finally:
        galera_lab.cli("loadgen", "stop", "--experiment", "fk")
    result = json.loads(out.read_text())
    last = result["windows"][-1]
    assert last["valid"], last["reasons"]
    assert result["verification"] and all(v["ok"] is True for v in result["verification"])


def test_cycle_runs_each_configured_experiment(galera_lab) -> None:
    n1, _ = _targets(galera_lab)
    proc = galera_lab.cli("loadgen", "cycle", "--experiments", "read_backup,fk", "--target", n1,
                          "--window", "1", "--warmup", "0", "--duration", "1", "--threads", "2")
    assert "experiment read_backup (galera" in proc.stdout
    assert "experiment fk (galera" in proc.stdout
    assert "MISMATCH" not in proc.stdout
