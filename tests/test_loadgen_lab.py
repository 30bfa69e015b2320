"""Loadgen against the lab's real Galera cluster (short windows)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pymysql
import pytest
import yaml
from clusterscope_loadgen import config, designs, estimators, stats
from clusterscope_loadgen.metrics import Metrics
from clusterscope_loadgen.runner import RunError, Runner
from clusterscope_loadgen.target import Target, connect
from helpers import REPO, Samples, eventually, scrape_text, series

pytestmark = pytest.mark.lab


def _targets(lab) -> list[str]:
    return [lab.service(f"galera-node{n}")["client_config"] for n in (1, 2)]


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled experiments with small tables: the mechanism is under test, not the
    bundled sizes (whose pre-fill takes minutes on the lab)."""
    data = yaml.safe_load(config.DEFAULT_CONFIG.read_text())
    for name, rows in (("fk", (2000, 40000)), ("batching_pk", (2000, 50000))):
        data["experiments"][name]["table_rows"], data["experiments"][name]["max_rows"] = rows
    path = tmp_path_factory.mktemp("loadgen") / "small.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _windows(result: dict) -> list[stats.Window]:
    return [stats.Window(w["variant"], w["seq"], w["valid"], w["throughput"],
                         w["latency"].get("0.95", 0.0), w["end"],
                         tuple(stats.SlotMeasure(**x) for x in w["slots"]), w["k"])
            for w in result["windows"] if not w["warmup"]]


def _scrape(port: int) -> Samples | None:
    """The loadgen's samples, or None while (or once) it does not serve."""
    try:
        return Samples.of_text(scrape_text(port, timeout=2))
    except OSError:
        return None


def test_fk_run_with_a_killed_node(galera_lab, small: Path, tmp_path: Path) -> None:
    """Every variant gets windows (time-sliced, the default); a SIGKILLed node invalidates
    exactly the windows it touched; overheads come from the valid units, named with their
    estimand in the JSON and on /metrics; row counts verify; /metrics agrees."""
    n1, n2 = _targets(galera_lab)
    port = galera_lab.port("loadgen9")
    out = tmp_path / "fk.json"
    variants = [v.name for v in config.experiment("fk").variants]
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterscope.cli", "loadgen", "run", "--experiment", "fk",
         "--config", str(small), "--target", n1, "--target", n2, "--window", "4", "--slot",
         "1", "--washout", "0.25", "--warmup", "0", "--rounds", "6",
         "--metrics-port", str(port), "--json-out", str(out), "--linger", "60"],
        env=galera_lab.env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        deadline = time.monotonic() + 150
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
        t_kill_after = time.time()  # a loaded machine takes seconds to run the command
        time.sleep(2)
        t_sync_before = time.time()
        galera_lab.cli("lab", "galera", "start-node", "2")
        t_sync_after = time.time()
        deadline = time.monotonic() + 240
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
        assert len([w for w in windows if w["variant"] == v]) == 6, log

    # A window's interval is what its health snapshots bracket. One of the two-writer group
    # (node2 is one of its nodes) that holds any of node2's certain absence (from the kill
    # command's return to the start command's call) is invalid, and the group saw the kill;
    # the one-writer group's windows (the run's nodes are watched for every window) see node2
    # gone or the membership change as it leaves and returns, so some of them are invalid
    # too, each saying why; a window wholly before the kill or after the rejoin is valid.
    two = {"nofk_2w", "fk1_2w", "fk2_2w"}
    assert any(not w["valid"] for w in windows if w["variant"] in two), log
    touched = [w for w in windows if w["variant"] in two
               and w["start"] < t_sync_before and w["end"] > t_kill_after]
    untouched = [w for w in windows if w["end"] < t_kill_before or w["start"] > t_sync_after]
    assert untouched, log
    assert all(not w["valid"] and w["reasons"] for w in touched), log
    one = [w for w in windows if w["variant"] not in two and not w["valid"]]
    assert one and all(w["reasons"] for w in one), log
    assert all(w["valid"] for w in untouched), [(w["variant"], w["reasons"]) for w in untouched]

    # Overheads: recompute from the JSON's slots, compare with the run and with /metrics.
    assert result["design"] == designs.DEFAULT and result["estimator"] == estimators.DEFAULT
    assert result["estimands"] == ["whole_workload"]
    # a window that found a node of its group down ran nothing: no slots, and it says why
    assert all(w["design"] == "timesliced" for w in windows)
    assert all(w["slots"] or (not w["valid"] and w["reasons"]) for w in windows), log
    assert all(w["slots"] for w in windows if w["valid"])
    swins = _windows(result)
    exported = {lab["variant"]: (lab, v) for lab, v in series(samples, "loadgen_overhead_ratio")}
    for name, est in result["estimates"].items():
        us = designs.units(swins, name, est["baseline"])
        expect = estimators.ESTIMATORS[result["estimator"]](us, confidence=est["confidence"])
        assert est["overhead"]["n"] == expect.n == len(us) >= 4, log
        assert est["overhead"]["mean"] == pytest.approx(expect.mean)
        assert est["overhead"]["low"] == pytest.approx(expect.low)
        assert est["overhead"]["low"] <= est["overhead"]["mean"] <= est["overhead"]["high"]
        assert est["estimand"] == "whole_workload" and len(est["autocorrelation"]) == 10
        labels, value = exported[name]
        assert value == pytest.approx(est["overhead"]["mean"])
        assert labels["estimand"] == "whole_workload"
        assert set(est["estimators"]) == set(estimators.ESTIMATORS)
    # one primary at 95%, the two others simultaneous
    assert sorted(e["confidence"] for e in result["estimates"].values()) == pytest.approx(
        [0.95, 0.975, 0.975])
    assert result["estimates"]["fk2"]["primary"]
    info = [lab for lab, _ in series(samples, "loadgen_info")]
    assert [(i["design"], i["estimand"], i["estimator"]) for i in info] == [
        (designs.DEFAULT, "whole_workload", estimators.DEFAULT)]
    window_s = {v for _, v in series(samples, "loadgen_overhead_window_seconds")}
    assert window_s == {3600.0}
    assert {lab["variant"] for lab, _ in series(
        samples, "loadgen_overhead_min_detectable_difference_ratio")} == set(result["estimates"])

    invalid = sum(v for lab, v in series(samples, "loadgen_windows_total")
                  if lab["valid"] == "false")
    assert invalid == len([w for w in windows if not w["valid"]])
    tps = {lab["variant"] for lab, _ in series(samples, "loadgen_window_tps")}
    assert tps == set(variants)
    for lab, _ in series(samples, "loadgen_window_tps"):
        assert lab["engine"] == "galera" and lab["experiment"] == "fk"

    # Nothing written is lost: every child table's count matches what the run committed.
    checked = {v["table"]: v for v in result["verification"]}
    assert set(checked) == {"users_posts", "users_posts_fk", "users_posts_2w",
                            "users_posts_fk1", "users_posts_fk_2w"}
    assert all(v["ok"] is True for v in checked.values()), checked


def test_the_interleaved_reading_is_named_mixed_statement(galera_lab, small: Path) -> None:
    """`--design interleaved` stays available as the second reading, and says it estimates
    something else."""
    targets = [Target.from_cnf(p) for p in _targets(galera_lab)]
    m = Metrics()
    runner = Runner(config.experiment("fk", small), "galera", targets, only=["fk2"],
                    design="interleaved", window=2, warmup=0, metrics=m, out=lambda s: None)
    result = runner.run(rounds=3)
    est = result["estimates"]["fk2"]
    assert est["estimand"] == "mixed_statement" and result["estimands"] == ["mixed_statement"]
    assert all(w["estimand"] == "mixed_statement" and w["interleaved"]
               for w in result["windows"])
    labels = {**runner.labels("fk2"), "baseline": "nofk", "estimand": "mixed_statement"}
    assert m.registry.get_sample_value("loadgen_overhead_pairs", labels) == 3
    info = {**runner.label_base, "version": m.version, "design": "interleaved",
            "estimand": "mixed_statement", "estimator": estimators.DEFAULT}
    assert m.registry.get_sample_value("loadgen_info", info) == 1


@pytest.mark.parametrize("design", ["windows", "abba"])
def test_the_other_designs_run_by_name(galera_lab, small: Path, design: str) -> None:
    """`--design windows|abba`: one variant per window; pairs per round or mirrored block."""
    targets = [Target.from_cnf(p) for p in _targets(galera_lab)]
    runner = Runner(config.experiment("fk", small), "galera", targets, only=["fk2"],
                    design=design, window=2, warmup=0, out=lambda s: None)
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
    delay's share of the step, 1 - L / (L + D), to within the window noise. (Whether the
    intervals cover server-side costs is a statistical property: `clusterscope bench
    loadgen-calibration` measures it over many runs. A delay this large also slows the step
    that follows it, which interleaving charges to the other variants: found < truth.)"""
    from clusterscope.bench.loadgen_ab import calibration_experiment
    targets = [Target.from_cnf(p) for p in _targets(galera_lab)]
    runner = Runner(calibration_experiment(1000), "galera", targets, window=2, warmup=0,
                    threads=2, design="interleaved", out=lambda s: None)
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


def test_sigterm_mid_window_stops_after_it_with_exact_rows(galera_lab, small: Path) -> None:
    """`loadgen stop` sends SIGTERM: the window in progress finishes and books its rows, so
    the final check is exact (killing sysbench mid-window left unbooked rows: MISMATCH)."""
    n1, _ = _targets(galera_lab)
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterscope_loadgen", "run", "--experiment", "fk",
         "--config", str(small), "--variants", "fk2", "--target", n1, "--window", "4",
         "--warmup", "0", "--duration", "300",
         "--description", str(galera_lab.root / "clusterscope.yml"),
         "--cluster", "lab-galera"], env=galera_lab.env, cwd=REPO, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "round 1 fk2" in line:
                break
        # inside round 2's window: its sysbench runs (between rounds the loadgen trims and
        # estimates, seconds on a busy machine, and a SIGTERM then stops before a window)
        eventually(lambda: _sysbench_child(proc.pid), 60, "round 2's sysbench")
        time.sleep(1.5)
        t0 = time.monotonic()
        proc.terminate()
        out = "".join(lines) + proc.communicate(timeout=60)[0]
    finally:
        proc.kill()
    assert proc.returncode == 0 and time.monotonic() - t0 < 20, out
    assert "round 2 fk2" in out and "round 3" not in out and "loadgen: stopping" in out
    assert out.count(": OK") == 2 and "MISMATCH" not in out, out


def _sysbench_child(pid: int) -> bool:
    """Whether process `pid` has a sysbench child now (/proc: comm and parent pid)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:]
        if comm == "sysbench" and int(rest.split()[1]) == pid:
            return True
    return False


def test_fk_table_rejects_an_orphan_insert(galera_lab, small: Path) -> None:
    n1, n2 = _targets(galera_lab)
    t = Target.from_cnf(n1)
    runner = Runner(config.experiment("fk", small), "galera", [t, Target.from_cnf(n2)],
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


def test_every_experiment_exports_every_variant(galera_lab, small: Path) -> None:
    targets = [Target.from_cnf(p) for p in _targets(galera_lab)]
    for name in ("read_backup", "partitioning", "batching_pk"):
        m = Metrics()
        runner = Runner(config.experiment(name, small), "galera", targets, window=2, warmup=0,
                        slot=0.5, washout=0.1, metrics=m, out=lambda s: None)
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
                    "loadgen_overhead_pairs", {**labels, "baseline": v.baseline,
                                               "estimand": "whole_workload"}) is not None
        if name == "read_backup":
            # wsrep_sync_wait=1 makes the other node's read causal: never stale.
            assert wins["sync_wait_1"]["stale"] == 0
        assert all(v["ok"] is True for v in result["verification"])


def test_lab_start_and_stop(galera_lab) -> None:
    # no warm-up (10 s by default): the service, its scrape and its stop are under test
    galera_lab.cli("loadgen", "start", "--experiment", "read_backup", "--window", "1",
                   "--warmup", "0")
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


def test_lab_stop_lets_the_running_window_finish(galera_lab, small: Path,
                                                 tmp_path: Path) -> None:
    """`clusterscope loadgen stop` signals the loadgen alone: sysbench finishes the window
    in progress and its rows are booked. It used to stop the whole process group, sysbench
    too: the last window invalid ("sysbench exited -15"), found by the soak."""
    out = tmp_path / "windows.json"
    galera_lab.cli("loadgen", "start", "--experiment", "fk", "--variants", "fk2",
                   "--config", str(small), "--window", "4", "--warmup", "0",
                   "--json-out", str(out))
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


def test_cycle_runs_each_configured_experiment(galera_lab, small: Path) -> None:
    n1, _ = _targets(galera_lab)
    proc = galera_lab.cli("loadgen", "cycle", "--experiments", "read_backup,fk", "--target", n1,
                          "--config", str(small), "--window", "1", "--slot", "0.5",
                          "--washout", "0.1", "--warmup", "0", "--duration", "1",
                          "--threads", "2")
    assert "experiment read_backup (galera" in proc.stdout
    assert "experiment fk (galera" in proc.stdout
    assert "MISMATCH" not in proc.stdout
