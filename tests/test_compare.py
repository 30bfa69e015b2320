"""`compare` on series written to a real VictoriaMetrics with known values."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from clusterscope.analysis.baseline import sources
from clusterscope.analysis.compare import Quantity, collect, compare_samples, render_table
from clusterscope.analysis.periods import Period

pytestmark = pytest.mark.tools("python")

T0 = 1_700_000_000  # fixed: the series live in the past, in their own scratch database
WINDOW = 10  # seconds between two windows' values
SAMPLE = 5   # scrape interval: each window's value is seen twice


def _write(vm, metric: str, labels: str, start: float, values: list[float]) -> None:
    lines = []
    for i, v in enumerate(values):
        for k in range(WINDOW // SAMPLE):
            ts = int((start + i * WINDOW + k * SAMPLE) * 1000)
            lines.append(f"{metric}{{{labels}}} {v} {ts}")
    vm.import_prometheus("\n".join(lines) + "\n")


TPS = Quantity("tps", "throughput", "tps", 'test_window_tps{{experiment}}', "tps", "higher",
               ("experiment", "variant"), experiment_filter=True)
LAT = Quantity("lat", "latency", "p95", "test_window_latency_seconds", "s", "lower",
               ("variant",))


@pytest.fixture(scope="module")
def known_series(scratch_vm):
    rng = random.Random(7)
    before = [1000 + rng.gauss(0, 20) for _ in range(30)]
    after = [950 + rng.gauss(0, 20) for _ in range(30)]  # 5% slower, noise 2%
    lat_b = [0.010 + rng.gauss(0, 0.002) for _ in range(30)]
    lat_a = [0.0101 + rng.gauss(0, 0.002) for _ in range(30)]  # 1% change, 20% noise
    span = 30 * WINDOW
    _write(scratch_vm, "test_window_tps", 'experiment="fk",variant="fk2"', T0, before)
    _write(scratch_vm, "test_window_tps", 'experiment="fk",variant="fk2"', T0 + span, after)
    _write(scratch_vm, "test_window_tps", 'experiment="other",variant="x"', T0, before)
    _write(scratch_vm, "test_window_latency_seconds", 'variant="fk2"', T0, lat_b)
    _write(scratch_vm, "test_window_latency_seconds", 'variant="fk2"', T0 + span, lat_a)
    scratch_vm.flush()
    periods = (Period(T0, T0 + span - 1), Period(T0 + span, T0 + 2 * span - 1))
    return scratch_vm, periods, before, after


def test_a_known_difference_is_found_with_an_interval_that_holds_it(known_series) -> None:
    vm, (pb, pa), before, after = known_series
    rows = compare_samples([TPS], collect(vm, [TPS], pb, "fk"), collect(vm, [TPS], pa, "fk"))
    assert len(rows) == 1, "the experiment filter must drop the other experiment"
    row = rows[0]
    assert row.before.n == len(before) and row.after.n == len(after)
    assert row.before.mean == pytest.approx(sum(before) / len(before))
    true_diff = sum(after) / len(after) - sum(before) / len(before)
    assert row.difference.diff == pytest.approx(true_diff)
    assert row.difference.low < -50 + 15 and row.difference.high > -50 - 15
    assert row.difference.low < true_diff < row.difference.high
    assert row.verdict == "worse"


def test_a_change_smaller_than_the_noise_is_no_significant_change(known_series) -> None:
    vm, (pb, pa), _, _ = known_series
    rows = compare_samples([LAT], collect(vm, [LAT], pb), collect(vm, [LAT], pa))
    assert [r.verdict for r in rows] == ["no significant change"]
    assert rows[0].difference.low < 0 < rows[0].difference.high


def test_the_cli_prints_the_table_and_json(known_series) -> None:
    vm, (pb, pa), _, _ = known_series
    base = [sys.executable, "-m", "clusterscope.cli", "compare", "--vm", vm.url,
            "--before", f"{pb.start:.0f}..{pb.end:.0f}", "--after", f"{pa.start:.0f}..{pa.end:.0f}",
            "--quantities", "tests/fixtures/compare_quantities.json"]
    text = subprocess.run(base, capture_output=True, text=True, check=True).stdout
    assert "worse" in text and "no sig. change" in text
    data = json.loads(subprocess.run([*base, "--json"], capture_output=True, text=True,
                                     check=True).stdout)
    verdicts = {(r["key"], r["series"].get("experiment", "")): r["verdict"] for r in data["rows"]}
    assert verdicts[("tps", "fk")] == "worse"
    assert verdicts[("tps", "other")] == "only one period has data"
    assert verdicts[("lat", "")] == "no significant change"


def test_only_keeps_the_named_quantities_and_rejects_unknown_ones(known_series) -> None:
    vm, (pb, pa), _, _ = known_series
    base = [sys.executable, "-m", "clusterscope.cli", "compare", "--vm", vm.url,
            "--before", f"{pb.start:.0f}..{pb.end:.0f}", "--after", f"{pa.start:.0f}..{pa.end:.0f}",
            "--quantities", "tests/fixtures/compare_quantities.json", "--json"]
    data = json.loads(subprocess.run([*base, "--only", "lat"], capture_output=True, text=True,
                                     check=True).stdout)
    assert {r["key"] for r in data["rows"]} == {"lat"}
    bad = subprocess.run([*base, "--only", "lat,nope"], capture_output=True, text=True)
    assert bad.returncode == 1
    assert "unknown quantities ['nope']" in bad.stderr and "tps" in bad.stderr


def test_a_pinned_baseline_compares_later_and_feeds_the_rules(known_series, tmp_path) -> None:
    vm, (pb, pa), _, _ = known_series
    # what the rules consider the baseline at the end of the pinned period
    mean_ts = int((pb.end - 5) * 1000)
    # (the mean over the change alert's period, which a pin keeps)
    mean = sources()["clusterscope_pinned_overhead_ratio"][0]
    vm.import_prometheus(f'{mean}{{experiment="fk",variant="fk2",baseline="nofk",cluster="c"}}'
                         f' 0.18 {mean_ts}\n')
    vm.flush()
    common = ["--vm", vm.url, "--baselines-dir", str(tmp_path),
              "--quantities", "tests/fixtures/compare_quantities.json"]
    cs = [sys.executable, "-m", "clusterscope.cli"]
    pin = subprocess.run([*cs, "baseline", "pin", "before-change", "--period",
                          f"{pb.start:.0f}..{pb.end:.0f}", *common],
                         capture_output=True, text=True)
    assert pin.returncode == 0, pin.stderr
    assert (tmp_path / "before-change.json").is_file()
    pinned = vm.query('clusterscope_pinned_overhead_ratio{pin="before-change"}', pb.end + 60)
    assert [(r["metric"]["variant"], float(r["value"][1])) for r in pinned] == [("fk2", 0.18)]
    out = subprocess.run([*cs, "compare", "--before-baseline", "before-change", "--after",
                          f"{pa.start:.0f}..{pa.end:.0f}", "--json", *common],
                         capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    assert data["before"].startswith("baseline before-change (")
    verdicts = {(r["key"], r["series"].get("experiment", "")): r["verdict"] for r in data["rows"]}
    assert verdicts[("tps", "fk")] == "worse"
    missing = subprocess.run([*cs, "compare", "--before-baseline", "nope", "--after",
                              f"{pa.start:.0f}..{pa.end:.0f}", *common],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "no pinned baseline 'nope'" in missing.stderr


# -- events -------------------------------------------------------------------------------
T2 = 1_700_050_000
RESTART_T = Quantity("rt", "NDB restarts", "restart total", "test_ev_total_seconds", "s",
                     "lower", ("node_id",), event="test_ev_done_timestamp_seconds")
RESTART_P = Quantity("rp", "NDB restarts", "restart phase", "test_ev_phase_seconds", "s",
                     "lower", ("node_id", "phase"), event="test_ev_done_timestamp_seconds",
                     aggregate=("for_local_recovery",))


@pytest.fixture(scope="module")
def restarts(scratch_vm):
    """Three restarts per period, each seen by 12 scrapes; the first period's three take the
    same 400 s (the distinct-values sampling counted them once); a phase that took 0 s."""
    lines: list[str] = []
    totals = {0: [400, 400, 400], 1: [500, 520, 510]}
    for period, values in totals.items():
        for i, total in enumerate(values):
            done = T2 + period * 1000 + i * 200
            for k in range(12):
                ts = (done + 5 * k) * 1000
                lines.append(f'test_ev_done_timestamp_seconds{{node_id="2"}} {done} {ts}')
                lines.append(f'test_ev_total_seconds{{node_id="2"}} {total} {ts}')
                for phase, v in (("wait_lcp", total - 100), ("undo", 0),
                                 ("for_local_recovery", total)):
                    lines.append(f'test_ev_phase_seconds{{node_id="2",phase="{phase}"}} {v} {ts}')
    scratch_vm.import_prometheus("\n".join(lines) + "\n")
    scratch_vm.flush()
    return scratch_vm, (Period(T2, T2 + 999), Period(T2 + 1000, T2 + 1999))


def test_every_event_is_a_sample_even_when_values_repeat(restarts) -> None:
    vm, (pb, pa) = restarts
    qs = [RESTART_T, RESTART_P]
    rows = compare_samples(qs, collect(vm, qs, pb), collect(vm, qs, pa))
    by = {(r.key, r.series.get("phase", "")): r for r in rows}
    total = by[("rt", "")]
    assert (total.before.n, total.after.n) == (3, 3)
    assert total.before.mean == 400 and total.after.mean == pytest.approx(510)
    zero = by[("rp", "undo")]  # a phase of 0 s is a 0, not missing
    assert (zero.before.n, zero.after.n) == (3, 3) and zero.verdict == "no significant change"
    assert by[("rp", "for_local_recovery")].aggregate


def test_the_table_puts_changes_first_fits_120_columns_and_says_no_nan(restarts) -> None:
    vm, (pb, pa) = restarts
    qs = [RESTART_T, RESTART_P]
    rows = compare_samples(qs, collect(vm, qs, pb), collect(vm, qs, pa))
    text = render_table(rows, "a-very-long-before-label" * 3, "after")
    body = text.splitlines()
    assert max(len(line) for line in body) <= 120, text
    assert "nan" not in text.lower()
    # changed rows first: the phase that grew 37 % leads, the unchanged 0 s phase follows
    rows_text = [ln for ln in body if ln.startswith("node 2")]
    assert rows_text[0].startswith("node 2 wait_lcp") and rows_text[0].endswith("worse"), text
    assert rows_text.index(next(r for r in rows_text if "undo" in r)) == 1, text
    assert "for_local_recovery" not in text and "aggregate rows left out" in text
    assert "(sum) node 2 for_local_recovery" in render_table(rows, "b", "a", show_all=True)


# -- simulated or measured: the series says ------------------------------------------------------
T4 = 1_700_070_000


@pytest.fixture(scope="module")
def two_clusters(scratch_vm):
    """The same quantity from a simulated cluster and from a real one, three events each."""
    lines: list[str] = []
    for labels, totals in (('cluster="lab-ndb",simulated="true",node_id="2"', [400, 410, 405]),
                           ('cluster="staging-ndb",node_id="2"', [900, 950, 925])):
        for i, total in enumerate(totals):
            done = T4 + i * 200
            for k in range(12):
                ts = (done + 5 * k) * 1000
                lines.append(f"test_sim_done_timestamp_seconds{{{labels}}} {done} {ts}")
                lines.append(f"test_sim_total_seconds{{{labels}}} {total} {ts}")
    scratch_vm.import_prometheus("\n".join(lines) + "\n")
    scratch_vm.flush()
    return scratch_vm, Period(T4, T4 + 999)


def test_simulated_rows_are_marked_from_their_label_and_real_ones_are_not(two_clusters) -> None:
    vm, period = two_clusters
    q = Quantity("st", "NDB restarts", "restart total", "test_sim_total_seconds", "s", "lower",
                 ("cluster", "node_id"), event="test_sim_done_timestamp_seconds")
    samples = collect(vm, [q], period)
    rows = compare_samples([q], samples, samples)
    by = {r.series["cluster"]: r for r in rows}
    assert by["lab-ndb"].simulated and not by["staging-ndb"].simulated
    assert (by["lab-ndb"].before.n, by["staging-ndb"].before.n) == (3, 3)
    text = render_table(rows, "b", "a", source="http://vm:8428")
    lines = text.splitlines()
    assert "read   http://vm:8428" in lines and "clusters lab-ndb, staging-ndb" in lines
    assert "SIMULATED lab-ndb node 2" in text
    real = next(ln for ln in lines if "staging-ndb" in ln and "node 2" in ln)
    assert "SIMULATED" not in real
    only_real = render_table([by["staging-ndb"]], "b", "a")
    assert "SIMULATED" not in only_real and "cluster staging-ndb" in only_real
    only_sim = render_table([by["lab-ndb"]], "b", "a")
    assert "== NDB restarts: restart total (SIMULATED)" in only_sim


T5 = 1_700_090_000


def test_an_event_at_the_boundary_of_two_periods_counts_in_one(scratch_vm) -> None:
    """Periods that abut (the demo's before/after) must not both count the restart that
    completed just before the boundary: events fall on the query's step grid, and the
    grid's step after the event may lie past the boundary."""
    lines = []
    done = T5 + 100.7  # completes 0.3 s before the boundary, between two 1 s steps
    for k in range(-20, 40):
        ts = T5 + 100.7 + 5 * k
        if ts < done:
            continue
        lines.append(f'test_edge_done_timestamp_seconds{{node_id="2"}} {done} {int(ts * 1000)}')
        lines.append(f'test_edge_total_seconds{{node_id="2"}} 410 {int(ts * 1000)}')
    scratch_vm.import_prometheus("\n".join(lines) + "\n")
    scratch_vm.flush()
    q = Quantity("edge", "NDB restarts", "restart total", "test_edge_total_seconds", "s",
                 "lower", ("node_id",), event="test_edge_done_timestamp_seconds")
    boundary = T5 + 101.0
    before = collect(scratch_vm, [q], Period(T5, boundary))
    after = collect(scratch_vm, [q], Period(boundary, T5 + 200))
    counts = [sum(len(v) for v in s["edge"].values()) for s in (before, after)]
    assert counts == [1, 0], counts


def test_a_verdict_is_never_cut_to_fit_the_width() -> None:
    """The walkthrough's fk comparison as CI printed it: the latency blocks' cells
    (`0.00254 s ±0.000374 (n=7)`) widened every column until the throughput row's
    verdict read `no sig. cha~`. Every row keeps its whole verdict within 120 columns."""
    from clusterscope.analysis.quantities import default_quantities

    qs = [q for q in default_quantities() if q.key in ("loadgen_tps", "loadgen_p95")]
    key = (("cluster", "lab-galera"), ("experiment", "fk"), ("variant", "nofk"))
    before = {"loadgen_tps": {key: [2516 + d for d in (-400, -250, -100, 0, 100, 250, 400)]},
              "loadgen_p95": {key: [0.00254 + d for d in (-4e-4, -2e-4, 0, 0, 2e-4, 4e-4, 1e-5)]}}
    after = {"loadgen_tps": {key: [2234 + d for d in (-450, -300, -100, 0, 0, 100, 300, 450)]},
             "loadgen_p95": {key: [0.00336 + d for d in (-5e-4, -3e-4, 0, 0, 1e-4, 3e-4, 5e-4,
                                                         2e-5)]}}
    rows = compare_samples(qs, before, after)
    assert {r.verdict for r in rows} == {"no significant change", "worse"}
    text = render_table(rows, "before-flush (pinned)", "now-90s..now", source="https://vm:8427")
    assert max(len(line) for line in text.splitlines()) <= 120, text
    fk = [ln for ln in text.splitlines() if ln.startswith("fk nofk")]
    assert len(fk) == 2 and all(ln.endswith(("no sig. change", "worse")) for ln in fk), text
