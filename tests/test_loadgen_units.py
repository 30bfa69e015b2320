"""Loadgen units: statistics, pairing, estimators, groups, designs and config. Pure
Python, no server (the DDL per engine and sysbench: test_loadgen_sysbench.py)."""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path

import pytest
import yaml
from clusterscope_loadgen import config, designs, estimators, stats, variant
from clusterscope_loadgen.runner import RunError, Runner
from clusterscope_loadgen.stats import Window
from clusterscope_loadgen.target import Target

FIXTURES = Path(__file__).with_name("test_loadgen_fixtures")


# -- statistics ----------------------------------------------------------------------------
def test_paired_interval_on_known_values() -> None:
    # mean 0.2, sd 0.1, n 3: half width = t(0.975, 2) * 0.1 / sqrt(3) = 4.3027 * 0.057735
    est = stats.paired([0.1, 0.2, 0.3])
    assert est.n == 3
    assert est.mean == pytest.approx(0.2)
    assert est.low == pytest.approx(0.2 - 0.248418, abs=1e-4)
    assert est.high == pytest.approx(0.2 + 0.248418, abs=1e-4)
    # detectable change: (t(0.975,2) + t(0.8,2)) * se = (4.3027 + 1.0607) * 0.057735
    assert est.min_detectable == pytest.approx(0.30966, abs=1e-3)


def test_paired_needs_two_values_for_an_interval() -> None:
    assert math.isnan(stats.paired([0.3]).low)
    assert stats.paired([0.3]).mean == pytest.approx(0.3)
    assert stats.paired([]).n == 0


def _w(variant: str, seq: int, tput: float, valid: bool = True, p95: float = 0.01) -> Window:
    return Window(variant, seq, valid, tput, p95)


def test_units_join_same_round_and_drop_invalid_windows() -> None:
    windows = [_w("a", 1, 100), _w("b", 1, 80),
               _w("b", 2, 90), _w("a", 2, 100, valid=False),  # baseline invalid: no unit
               _w("a", 3, 200), _w("b", 3, 150, valid=False),  # variant invalid: no unit
               _w("a", 4, 100), _w("b", 4, 85),
               _w("b", 5, 70)]  # no baseline window in round 5
    us = designs.units(windows, "b", "a")
    assert [u.seq for u in us] == [1, 4]
    over = estimators.mean_t(us)
    assert over.mean == pytest.approx((0.20 + 0.15) / 2)
    assert over.n == 2


def test_overhead_cancels_drift_shared_by_a_pair() -> None:
    # Throughput drifts 100 -> 300 over the run; the variant is always 10% slower.
    windows = []
    for seq, level in enumerate([100, 150, 200, 250, 300], start=1):
        windows += [_w("base", seq, level), _w("var", seq, level * 0.9)]
    over = estimators.mean_t(designs.units(windows, "var", "base"))
    assert over.mean == pytest.approx(0.10)
    assert over.low == pytest.approx(0.10) and over.high == pytest.approx(0.10)


def test_abba_block_cancels_a_linear_drift_and_needs_all_four_windows() -> None:
    # Throughput falls linearly through each block; the variant (positions 2 and 3) is
    # 10% slower. Comparing single windows would mix the drift in; the block means do not.
    windows = []
    for block in (1, 2, 3):
        level = [400 - 30 * i - 50 * block for i in range(4)]
        windows += [_w("base", block, level[0]), _w("var", block, 0.9 * level[1]),
                    _w("var", block, 0.9 * level[2]), _w("base", block, level[3])]
    windows[-1] = _w("base", 3, 1.0, valid=False)  # one invalid window voids block 3
    us = designs.units(windows, "var", "base")
    assert [u.seq for u in us] == [1, 2]
    assert all(u.overhead == pytest.approx(0.10) for u in us)
    assert 1 - windows[1].throughput / windows[0].throughput != pytest.approx(0.10)


def test_latency_ratio_from_units() -> None:
    us = designs.units([_w("a", 1, 1, p95=0.002), _w("b", 1, 1, p95=0.003),
                        _w("a", 2, 1, p95=0.004), _w("b", 2, 1, p95=0.006)], "b", "a")
    assert estimators.latency_ratio(us).mean == pytest.approx(1.5)


def _units(overheads: list[float]) -> list[estimators.Unit]:
    return [estimators.Unit(i, 100.0, 100.0 * (1 - d)) for i, d in enumerate(overheads)]


def test_hodges_lehmann_point_and_its_robustness() -> None:
    # Overheads 1..10 (%): the median of the Walsh averages (i+j)/2 is 5.5.
    est = estimators.hodges_lehmann(_units([k / 100 for k in range(1, 11)]))
    assert est.n == 10
    assert est.mean == pytest.approx(0.055)
    assert est.low < est.mean < est.high
    # One wild unit moves the mean by 9 points, the estimate by half a point at most.
    wild = estimators.hodges_lehmann(_units([k / 100 for k in range(1, 10)] + [1.0]))
    assert abs(wild.mean - est.mean) <= 0.005
    assert estimators.mean_t(_units([k / 100 for k in range(1, 10)] + [1.0])).mean > 0.14
    assert math.isnan(estimators.hodges_lehmann(_units([0.1] * 5)).low)


def test_median_ratio_and_its_bootstrap_interval() -> None:
    us = [estimators.Unit(i, b, v) for i, (b, v) in enumerate(
        [(100, 90), (110, 100), (90, 80), (105, 95), (95, 88), (120, 100), (100, 91)])]
    est = estimators.median_ratio(us)
    assert est.mean == pytest.approx(1 - 91 / 100)
    assert est.low <= est.mean <= est.high
    assert est.low > 0  # every unit is slower
    assert estimators.median_ratio(us) == est  # fixed seed: the same units, the same interval
    assert math.isnan(estimators.median_ratio(us[:4]).low)


# -- designs -------------------------------------------------------------------------------
def _v(name: str, baseline: str | None = None, **kw: object) -> variant.Variant:
    return variant.Variant(name=name, table="t", baseline=baseline, **kw)  # type: ignore[arg-type]


def test_groups_put_each_baseline_with_its_variants() -> None:
    vs = [_v("a"), _v("b", "a"), _v("c"), _v("d", "c"), _v("e", "a")]
    assert [[v.name for v in g] for g in designs.groups(vs)] == [["a", "b", "e"], ["c", "d"]]
    assert designs.not_shareable([vs[0], vs[1]]) is None
    assert "thread counts" in designs.not_shareable([_v("a"), _v("b", "a", threads=1)])
    assert "nodes" in designs.not_shareable([_v("a"), _v("b", "a", writers=2)])


def _plan(vs: list[variant.Variant], design: str) -> list[tuple[list[variant.Variant], str]]:
    return [(g, design) for g in designs.groups(vs)]


def test_round_plans_of_each_design() -> None:
    vs = [_v("a"), _v("b", "a"), _v("c"), _v("d", "c")]
    rng = random.Random(1)
    names = lambda plan: [[v.name for v in w] for w, _ in plan]  # noqa: E731
    windows = _plan(vs, "windows")
    assert names(designs.round_plan(windows, 1, rng)) == [["a"], ["b"], ["c"], ["d"]]
    assert names(designs.round_plan(windows, 2, rng)) == [["d"], ["c"], ["b"], ["a"]]
    for shared in designs.SHARED:
        assert names(designs.round_plan(_plan(vs, shared), 1, rng)) == [["a", "b"], ["c", "d"]]
        assert names(designs.round_plan(_plan(vs, shared), 2, rng)) == [["c", "d"], ["a", "b"]]
    orders = set()
    one = [(vs, "abba")]
    for seq in range(1, 30):
        plan = [w[0].name for w, _ in designs.round_plan(one, seq, rng)]
        assert plan[:4] == plan[4:][::-1] and sorted(plan[:4]) == ["a", "b", "c", "d"]
        orders.add(tuple(plan[:4]))
    assert len(orders) > 5  # randomised, not a fixed order
    assert designs.window_seconds("abba", 10) == 5 and designs.window_seconds("windows", 10) == 10
    # groups keep their own design in one round
    mixed = [(designs.groups(vs)[0], "timesliced"), (designs.groups(vs)[1], "windows")]
    assert [([v.name for v in w], d) for w, d in designs.round_plan(mixed, 1, rng)] == [
        (["a", "b"], "timesliced"), (["c"], "windows"), (["d"], "windows")]


# -- config --------------------------------------------------------------------------------
def test_bundled_experiments_are_valid_and_have_scripts() -> None:
    exps = config.load()
    assert {"fk", "read_backup", "partitioning", "batching_pk"} <= set(exps)
    for e in exps.values():
        assert e.script.is_file()
        for v in e.variants:
            if v.baseline:
                assert not next(x for x in e.variants if x.name == v.baseline).baseline


def _cfg(tmp_path: Path, exp: dict) -> Path:
    p = tmp_path / "exp.yaml"
    p.write_text(yaml.safe_dump({"experiments": {"myexp": exp}}))
    return p


@pytest.mark.parametrize(("exp", "message"), [
    ({"kind": "fk", "variants": [{"name": "a", "table": "users_posts"}], "bogus": 1},
     "unknown key"),
    ({"kind": "nope", "variants": [{"name": "a", "table": "t"}]}, "kind 'nope'"),
    ({"kind": "fk", "variants": [{"name": "a", "table": "t", "baseline": "zz"}]},
     "baseline 'zz'"),
    ({"kind": "fk", "variants": [{"name": "a", "table": "t"},
                                 {"name": "b", "table": "t", "baseline": "a"},
                                 {"name": "c", "table": "t", "baseline": "b"}]},
     "has a baseline itself"),
    ({"kind": "fk", "variants": []}, "has no variants"),
    ({"kind": "fk", "window": 0.5, "variants": [{"name": "a", "table": "t"}]}, "window"),
    ({"kind": "fk", "variants": [{"name": "a", "table": "t", "threads": 0}]}, "threads"),
    ({"kind": "fk", "design": "alternate", "variants": [{"name": "a", "table": "t"}]},
     "design 'alternate' is not one of timesliced, interleaved, windows, abba"),
    ({"kind": "fk", "variants": [{"name": "a", "table": "t"},
                                 {"name": "b", "table": "t", "baseline": "a",
                                  "design": "windows"}]}, "design belongs on the baseline"),
    ({"kind": "fk", "table_rows": 500, "max_rows": 400,
      "variants": [{"name": "a", "table": "t"}]}, "table_rows (500) must be below max_rows"),
    ({"kind": "fk", "primary": "a", "variants": [{"name": "a", "table": "t"}]},
     "primary 'a' is not a variant compared"),
    ({"kind": "fk", "slot": 2, "washout": 2, "variants": [{"name": "a", "table": "t"}]},
     "washout below it"),
    ({"kind": "fk", "estimator": "mode", "variants": [{"name": "a", "table": "t"}]},
     "estimator 'mode'"),
    ({"kind": "fk", "variants": [{"name": "a b", "table": "t"}]}, "variant name 'a b'"),
    ({"kind": "fk", "variants": [{"name": "a", "table": "t", "options": {"mode": "x|y"}}]},
     "option mode='x|y'"),
])
def test_bad_config_names_the_experiment(tmp_path: Path, exp: dict, message: str) -> None:
    with pytest.raises(config.ConfigError) as err:
        config.load(_cfg(tmp_path, exp))
    assert "experiment myexp" in str(err.value)
    assert message in str(err.value)


def test_unknown_experiment_and_invalid_yaml(tmp_path: Path) -> None:
    with pytest.raises(config.ConfigError, match="no experiment 'nope'.*known: fk"):
        config.experiment("nope")
    bad = tmp_path / "bad.yaml"
    bad.write_text("experiments: [unclosed")
    with pytest.raises(config.ConfigError, match="not valid YAML"):
        config.load(bad)


def test_variant_subset_brings_its_baseline() -> None:
    e = config.experiment("fk")
    assert [v.name for v in e.variants_for("galera", ["fk2_2w"])] == ["nofk_2w", "fk2_2w"]
    assert [v.name for v in config.experiment("read_backup").variants_for("ndb")] == [
        "rb0", "rb1"]
    with pytest.raises(config.ConfigError, match="no variant"):
        e.variants_for("galera", ["missing"])


def test_design_and_estimator_from_the_config(tmp_path: Path) -> None:
    p = tmp_path / "exp.yaml"
    p.write_text(yaml.safe_dump({"defaults": {"design": "abba"}, "experiments": {
        "x": {"kind": "fk", "estimator": "hodges-lehmann",
              "variants": [{"name": "a", "table": "users_posts"}]}}}))
    e = config.experiment("x", p)
    assert (e.design, e.estimator) == ("abba", "hodges-lehmann")
    assert (config.experiment("fk").design, config.experiment("fk").estimator) == (None, None)


# -- the runner without a server: design choice and the Lua mix ---------------------------
def _runner(exp: config.Experiment, **kw: object) -> Runner:
    target = Target(path=Path("none.cnf"), user="app", password=None, host="127.0.0.1", port=9)
    return Runner(exp, "innodb", [target], out=kw.pop("out", print), **kw)  # type: ignore[arg-type]


def test_default_design_falls_back_to_windows_when_variants_cannot_share_a_window() -> None:
    said: list[str] = []
    exp = config.experiment("fk")
    assert _runner(exp, only=["fk2"]).design == designs.DEFAULT == "timesliced"
    mixed = dataclasses.replace(exp, primary=None, variants=(
        dataclasses.replace(_v("a"), table="users_posts"),
        dataclasses.replace(_v("b", "a", threads=1), table="users_posts_fk")))
    r = _runner(mixed, out=said.append)
    assert r.design == "windows" and "different thread counts" in said[0]
    for shared in designs.SHARED:
        with pytest.raises(RunError, match=f"design {shared} needs .* different thread counts"):
            _runner(mixed, design=shared)
    assert _runner(mixed, design="abba").design == "abba"
    assert _runner(exp, estimator="median-ratio").estimator == "median-ratio"


def test_every_bundled_group_is_whole_workload_by_default() -> None:
    """The user's question is the whole-workload one: every experiment's every group (the
    two-writer FK group and the batching groups too) runs a whole-workload design unless
    asked otherwise; the interleaved reading is there by name."""
    for exp in config.load().values():
        r = _runner(exp, out=lambda s: None) if exp.kind != "read_backup" else None
        if r is None:
            continue
        for group, design in r.plan:
            assert designs.ESTIMAND[design] == "whole_workload", (exp.name, group[0].name)
        assert all(designs.ESTIMAND[d] == "mixed_statement"
                   for _, d in _runner(exp, design="interleaved", out=lambda s: None).plan)


def test_a_group_carries_its_own_design(tmp_path: Path) -> None:
    p = tmp_path / "exp.yaml"
    p.write_text(yaml.safe_dump({"experiments": {"x": {"kind": "fk", "variants": [
        {"name": "a", "table": "users_posts", "design": "interleaved"},
        {"name": "b", "table": "users_posts_fk", "baseline": "a"},
        {"name": "c", "table": "users_posts_2w"},
        {"name": "d", "table": "users_posts_fk_2w", "baseline": "c"}]}}}))
    r = _runner(config.experiment("x", p), out=lambda s: None)
    assert [(g[0].name, d) for g, d in r.plan] == [("a", "interleaved"), ("c", "timesliced")]
    assert r.design == "interleaved+timesliced"
    assert r.design_of("b") == "interleaved" and r.design_of("d") == "timesliced"


def test_mix_carries_each_variants_own_options() -> None:
    r = _runner(config.experiment("batching_pk"), only=["single_pk_1t"])
    mix, flat = r._mix(designs.groups(r.variants)[0])
    assert mix == "batch_pk_1t;batch=100;table=bp_pk|single_pk_1t;batch=1;table=bp_pk"
    assert set(flat) == {"start_id"}
    r = _runner(config.experiment("fk"), only=["fk2"])
    mix, flat = r._mix(r.variants)
    assert mix == "nofk;table=users_posts|fk2;table=users_posts_fk"
    assert flat == {"users": 1000, "forums": 100}
