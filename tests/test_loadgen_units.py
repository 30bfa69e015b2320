"""Loadgen units: statistics, pairing, config, DDL per engine, sysbench argv and output.
Pure Python, no server."""

from __future__ import annotations

import dataclasses
import math
import random
import re
from pathlib import Path

import pytest
import yaml
from clusterscope_loadgen import config, ddl, designs, estimators, stats, sysbench, variant, window
from clusterscope_loadgen.runner import RunError, Runner, summary
from clusterscope_loadgen.stats import Window
from clusterscope_loadgen.target import Health, Target

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


# -- DDL -----------------------------------------------------------------------------------
def test_fk_ddl_innodb_and_ndb() -> None:
    inn, ndb_ = ddl.fk_tables("innodb"), ddl.fk_tables("ndb")
    assert list(inn) == ["users", "forum", "users_posts", "users_posts_fk1", "users_posts_fk",
                         "users_posts_2w", "users_posts_fk_2w"]
    assert inn["users_posts"].count("FOREIGN KEY") == 0
    assert inn["users_posts_2w"].count("FOREIGN KEY") == 0
    assert inn["users_posts_fk_2w"].count("FOREIGN KEY") == 2
    assert inn["users_posts_fk1"].count("FOREIGN KEY") == 1
    assert "REFERENCES forum (fid)" in inn["users_posts_fk1"]
    assert inn["users_posts_fk"].count("FOREIGN KEY") == 2
    for stmt in inn.values():
        assert stmt.endswith("ENGINE=InnoDB")
    for stmt in ndb_.values():
        assert stmt.endswith("ENGINE=NDBCLUSTER") and "InnoDB" not in stmt
    # The field-facts key layout; InnoDB needs the extra key on the auto-increment column.
    assert "PRIMARY KEY (uid, fid, pid)" in ndb_["users_posts_fk"]
    assert "KEY pid (pid)" in inn["users_posts"] and "KEY pid" not in ndb_["users_posts"]


def test_read_backup_ddl_per_engine() -> None:
    ndb_ = ddl.read_backup_tables("ndb")
    assert 'COMMENT="NDB_TABLE=READ_BACKUP=0"' in ndb_["rb_rb0"]
    assert 'COMMENT="NDB_TABLE=READ_BACKUP=1"' in ndb_["rb_rb1"]
    assert all("ENGINE=NDBCLUSTER" in s for s in ndb_.values())
    assert list(ddl.read_backup_tables("galera")) == ["rb"]
    with pytest.raises(ddl.DDLError, match="needs a cluster"):
        ddl.read_backup_tables("innodb")


def test_partitioning_ddl_per_engine() -> None:
    inn = ddl.partitioning_tables("innodb")
    assert inn["part_p1"].endswith("PARTITION BY KEY (id) PARTITIONS 1")
    assert inn["part_p8"].endswith("PARTITION BY KEY (id) PARTITIONS 8")
    ndb_ = ddl.partitioning_tables("ndb", ndb_partition_balance="FOR_RP_BY_LDM")
    assert "ENGINE=NDBCLUSTER" in ndb_["part_p8"]
    assert 'NDB_TABLE=PARTITION_BALANCE=FOR_RP_BY_LDM' in ndb_["part_p8"]
    assert "PARTITIONS 1" in ndb_["part_p1"]
    assert "PARTITIONS 8" in ddl.partitioning_tables("ndb")["part_p8"]


def test_batching_ddl_and_unknown_kinds() -> None:
    b = ddl.batching_tables("ndb")
    assert "PRIMARY KEY" in b["bp_pk"] and "PRIMARY KEY" not in b["bp_nopk"]
    with pytest.raises(ddl.DDLError):
        ddl.tables_for("nope", "innodb")
    with pytest.raises(ddl.DDLError, match="unknown engine"):
        ddl.fk_tables("myisam")


# -- sysbench ------------------------------------------------------------------------------
def test_parse_real_sysbench_output() -> None:
    text = (FIXTURES / "sysbench_fk_1.0.20.txt").read_text()
    r = sysbench.parse(text)
    assert r.transactions == 1823 and r.tps == pytest.approx(1819.11)
    assert r.queries == 1823 and r.writes == 1823
    assert r.errors == 0 and r.reconnects == 0
    assert r.committed == 1823 and r.threads_reported == 2
    assert r.total_time == pytest.approx(1.0017)
    # Our p95 from the histogram must agree with sysbench's own 95th percentile line.
    own = float(re.search(r"95th percentile:\s+([0-9.]+)", text).group(1)) / 1000
    assert r.latency[0.95] == pytest.approx(own, rel=0.02)
    assert r.latency[0.5] <= r.latency[0.95] <= r.latency[0.99]


def test_parse_an_interleaved_window() -> None:
    """Real output of cs_fk.lua with a three-variant --mix (2 threads, 1 s, 200 us delay on
    nofk_delay): each variant's steps, rows, time and histogram summed over the threads."""
    r = sysbench.parse((FIXTURES / "sysbench_fk_mix_1.0.20.txt").read_text())
    assert set(r.variants) == {"nofk", "fk2", "nofk_delay"} and r.threads_reported == 2
    assert r.transactions == 421  # sysbench's events: each ran every variant once
    for vr in r.variants.values():
        assert vr.threads == 2 and vr.steps == 194 + 227 == sum(vr.histogram.values())
        assert vr.rows == vr.attempted == vr.steps and vr.queries == vr.steps
    assert r.committed == 582 + 681 == sum(v.rows for v in r.variants.values())
    nofk, slow = r.variants["nofk"], r.variants["nofk_delay"]
    assert nofk.seconds == pytest.approx(0.360390 + 0.331554)
    assert nofk.delay_seconds == 0 and slow.delay_seconds == pytest.approx(0.050158 + 0.045452)
    assert slow.delay_seconds / slow.steps >= 200e-6  # the spin lasts at least its delay
    assert nofk.rate(2) == pytest.approx(2 * 421 / (0.360390 + 0.331554))
    q = nofk.latency
    assert q[0.5] <= q[0.95] <= q[0.99]
    assert q[0.5] < nofk.mean_latency * 3 and q[0.99] > nofk.mean_latency / 3


def test_parse_errors_reconnects_and_fatal() -> None:
    text = ("FATAL: mysql_drv_query() returned error 2013 (Lost connection)\n"
            "    transactions:  10 (5.00 per sec.)\n    ignored errors:  3 (1.5 per sec.)\n"
            "    reconnects:   2 (1.0 per sec.)\n")
    r = sysbench.parse(text)
    assert (r.transactions, r.errors, r.reconnects) == (10, 3, 2)
    assert r.fatal and "2013" in r.fatal[0]
    assert r.latency == {}


def test_percentiles_from_histogram() -> None:
    hist = [(1.0, 50), (2.0, 45), (3.0, 4), (10.0, 1)]
    q = sysbench.percentiles(hist)
    assert q == {0.5: 0.001, 0.95: 0.002, 0.99: 0.003}


def test_password_never_in_argv() -> None:
    args = sysbench.argv(config.experiment("fk").script,
                         [sysbench.Endpoint("127.0.0.1", 3306), sysbench.Endpoint("h2", 3307)],
                         "app", "cs_fk", 4, 10, {"table": "users_posts"})
    joined = " ".join(args)
    assert "password" not in joined
    assert "--mysql-host=127.0.0.1,h2" in args and "--mysql-port=3306,3307" in args
    assert args[-1] == "run"
    env = sysbench.environment("s3cret")
    assert env["MYSQL_PWD"] == "s3cret" and "lua" in env["LUA_PATH"]


# -- window validity (window.judge): what makes a window a clean measurement ----------------
N1, N2 = sysbench.Endpoint("127.0.0.1", 3306), sysbench.Endpoint("127.0.0.1", 3307)


def _h(node: sysbench.Endpoint, up: bool = True, uptime: int = 100, conf: str = "7",
       state: str | None = "Synced") -> Health:
    return Health(node, up, uptime=uptime, conf_id=conf, state=state)


def _ok_run(**kw: object) -> sysbench.Result:
    base = {"transactions": 50, "tps": 10.0, "threads_reported": 4}
    return sysbench.Result(**{**base, **kw})  # type: ignore[arg-type]


def test_a_quiet_window_is_clean() -> None:
    before = [_h(N1), _h(N2)]
    after = [_h(N1, uptime=110), _h(N2, uptime=110)]
    assert window.judge(before, after, _ok_run(), threads=4, lua_counts=True) == []


@pytest.mark.parametrize(("before", "after", "reason"), [
    (_h(N1), _h(N1, up=False), "node 127.0.0.1:3306 unreachable"),
    (_h(N1, up=False), _h(N1), "node 127.0.0.1:3306 unreachable"),
    (_h(N1, uptime=500), _h(N1, uptime=3), "node 127.0.0.1:3306 restarted"),
    (_h(N1, conf="7"), _h(N1, conf="8"), "cluster membership changed (seen from 127.0.0.1:3306)"),
    (_h(N1, state="Donor/Desynced"), _h(N1), "node 127.0.0.1:3306 not Synced (Donor/Desynced)"),
    (_h(N1), _h(N1, state="Joined"), "node 127.0.0.1:3306 not Synced (Joined)"),
])
def test_each_cluster_event_invalidates_the_window(before: Health, after: Health,
                                                   reason: str) -> None:
    assert window.judge([before], [after], _ok_run(), threads=4, lua_counts=True) == [reason]


def test_innodb_nodes_have_no_galera_state_and_stay_clean() -> None:
    before, after = [_h(N1, conf=None, state=None)], [_h(N1, conf=None, state=None)]
    assert window.judge(before, after, _ok_run(), threads=4, lua_counts=True) == []


@pytest.mark.parametrize(("run", "lua_counts", "reason"), [
    (_ok_run(exit_code=1, fatal=["FATAL: error 2013"]), True, "sysbench failed: FATAL: error 2013"),
    (_ok_run(exit_code=-1), True, "sysbench failed: ?"),
    (_ok_run(transactions=0), True, "no transaction completed in the window"),
    (_ok_run(errors=3), True, "3 SQL errors"),
    (_ok_run(reconnects=1), True, "1 reconnects"),
    (_ok_run(threads_reported=3), True, "only 3/4 threads reported"),
])
def test_each_sysbench_problem_invalidates_the_window(run: sysbench.Result, lua_counts: bool,
                                                      reason: str) -> None:
    assert reason in window.judge([_h(N1)], [_h(N1)], run, threads=4, lua_counts=lua_counts)


def test_missing_thread_counts_matter_only_where_the_scripts_report_them() -> None:
    run = _ok_run(threads_reported=0)
    assert window.judge([_h(N1)], [_h(N1)], run, threads=4, lua_counts=False) == []


def test_an_interleaved_variant_without_steps_voids_the_window() -> None:
    run = _ok_run(variants={"a": sysbench.VariantRun(steps=10, seconds=0.1),
                            "b": sysbench.VariantRun(steps=0)})
    assert window.judge([_h(N1)], [_h(N1)], run, threads=4, lua_counts=True,
                        variants=["a", "b", "c"]) == ["variant b completed no step",
                                                      "variant c completed no step"]
    assert window.judge([_h(N1)], [_h(N1)], run, threads=4, lua_counts=True,
                        variants=["a"]) == []


def test_percentiles_from_the_lua_buckets() -> None:
    # bucket b holds latencies in [e^(b/40), e^((b+1)/40)) microseconds; its midpoint
    # e^((b+0.5)/40) stands for them.
    hist = {276: 50, 280: 45, 300: 4, 400: 1}
    q = sysbench.bucket_percentiles(hist)
    assert q[0.5] == pytest.approx(math.exp(276.5 / 40) / 1e6)
    assert q[0.95] == pytest.approx(math.exp(280.5 / 40) / 1e6)
    assert q[0.99] == pytest.approx(math.exp(300.5 / 40) / 1e6)
    assert sysbench.bucket_percentiles({}) == {}


def test_summary_counts_the_row_checks_made_before_truncations() -> None:
    ok = {"table": "t", "ok": True, "found": 5, "expected_low": 5, "expected_high": 5}
    bad = {**ok, "ok": False, "found": 4, "before_truncate": True}
    result = {"experiment": "fk", "engine": "galera", "target": "n1", "design": "interleaved",
              "estimator": "mean-t", "windows": [], "estimates": {},
              "verification": [{**ok, "before_truncate": True}] * 2 + [ok]}
    text = summary(result)
    assert "checked before each of 2 truncations (trims back to the pre-fill) at max_rows: all OK" \
        in text
    assert text.count("found 5, expected 5..5: OK") == 1
    text = summary({**result, "verification": [bad, ok]})
    assert "found 4, expected 5..5: MISMATCH" in text and "all OK" not in text


def test_the_client_cpu_of_the_steps_is_read_where_the_scripts_print_it() -> None:
    line = ("CSVAR tid=0 name=fk2 steps=10 rows=10 attempted=10 stale=0 queries=10"
            " time=0.020000 delay=0.000000 hist=280:10 cpu=0.004000")
    r = sysbench.parse(line + "\n" + line.replace("tid=0", "tid=1"))
    assert r.variants["fk2"].cpu_seconds == pytest.approx(0.008)
    old = sysbench.parse(line.rsplit(" cpu=", 1)[0])  # a script without it
    assert old.variants["fk2"].cpu_seconds == 0.0 and old.variants["fk2"].steps == 10
