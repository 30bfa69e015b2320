"""Loadgen units: statistics, pairing, config, DDL per engine, sysbench argv and output."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml
from clusterscope_loadgen import config, ddl, stats, sysbench, window
from clusterscope_loadgen.stats import Window
from clusterscope_loadgen.target import Health

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


def test_pairs_join_same_round_and_drop_invalid_windows() -> None:
    windows = [_w("a", 1, 100), _w("b", 1, 80),
               _w("b", 2, 90), _w("a", 2, 100, valid=False),  # baseline invalid: no pair
               _w("a", 3, 200), _w("b", 3, 150, valid=False),  # variant invalid: no pair
               _w("a", 4, 100), _w("b", 4, 85),
               _w("b", 5, 70)]  # no baseline window in round 5
    pl = stats.pairs(windows, "b", "a")
    assert [(b.seq, v.seq) for b, v in pl] == [(1, 1), (4, 4)]
    over = stats.overhead(pl)
    assert over.mean == pytest.approx((0.20 + 0.15) / 2)
    assert over.n == 2


def test_overhead_cancels_drift_shared_by_a_pair() -> None:
    # Throughput drifts 100 -> 300 over the run; the variant is always 10% slower.
    windows = []
    for seq, level in enumerate([100, 150, 200, 250, 300], start=1):
        windows += [_w("base", seq, level), _w("var", seq, level * 0.9)]
    over = stats.overhead(stats.pairs(windows, "var", "base"))
    assert over.mean == pytest.approx(0.10)
    assert over.low == pytest.approx(0.10) and over.high == pytest.approx(0.10)


def test_latency_ratio_from_pairs() -> None:
    pl = stats.pairs([_w("a", 1, 1, p95=0.002), _w("b", 1, 1, p95=0.003),
                      _w("a", 2, 1, p95=0.004), _w("b", 2, 1, p95=0.006)], "b", "a")
    assert stats.latency_ratio(pl).mean == pytest.approx(1.5)


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


# -- DDL -----------------------------------------------------------------------------------
def test_fk_ddl_innodb_and_ndb() -> None:
    inn, ndb_ = ddl.fk_tables("innodb"), ddl.fk_tables("ndb")
    assert list(inn) == ["users", "forum", "users_posts", "users_posts_fk1", "users_posts_fk"]
    assert inn["users_posts"].count("FOREIGN KEY") == 0
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
