"""Loadgen units: the DDL per engine, sysbench's argv and output, what voids a window,
the summary. Pure Python, no server."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from clusterscope_loadgen import config, ddl, sysbench, window
from clusterscope_loadgen.runner import summary
from clusterscope_loadgen.target import Health

FIXTURES = Path(__file__).with_name("test_loadgen_fixtures")


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
