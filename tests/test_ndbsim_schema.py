"""The one table of ndbinfo views (ndbinfo_exporter.schema) against the recorded reference,
and the restart plans against the field facts. No database needed."""

from __future__ import annotations

import random
import statistics
from pathlib import Path

from helpers import shared_fixture
from ndbinfo_exporter import schema

from clusterscope.ndbsim import restart as rs
from clusterscope.ndbsim import scenario, view_ddl


def desc_blocks(path: Path) -> dict[str, list[tuple[str, str, bool]]]:
    """`desc X;` blocks of a mysqltest result file -> {X: [(field, type, nullable)]}."""
    out: dict[str, list[tuple[str, str, bool]]] = {}
    current: str | None = None
    for line in path.read_text().splitlines():
        if line.startswith("desc "):
            current = line[5:].rstrip(";").strip()
            out[current] = []
        elif current and line.startswith("Field\t"):
            continue
        elif current and "\t" in line and not line.startswith(("select", "count")):
            f = line.split("\t")
            if len(f) >= 3 and f[2] in ("YES", "NO"):
                out[current].append((f[0], f[1], f[2] == "YES"))
            else:
                current = None
        else:
            current = None
    return out


def recorded() -> dict[str, list[tuple[str, str, bool]]]:
    out: dict[str, list[tuple[str, str, bool]]] = {}
    for f in sorted(shared_fixture("ndbinfo").glob("*.result.txt")):
        out.update(desc_blocks(f))
    return out


def test_schema_equals_every_recorded_desc() -> None:
    rec = recorded()
    # the fixtures hold these DESC outputs; all must be checked (a parser bug must not pass)
    assert {"restart_info", "disk_write_speed_aggregate", "disk_write_speed_base",
            "table_distribution_status", "ndb$table_distribution_status_all",
            "table_fragments", "ndb$table_fragments_all", "table_replicas",
            "ndb$table_replicas_all"} <= set(rec)
    expected = view_ddl.expected_columns("7.6")  # the recording is of the 7.6 / early 8.0 era
    for name, cols in rec.items():
        ours = [(c, view_ddl.desc_type(t), n) for c, t, n in expected[name]]
        assert ours == cols, name


def test_logspaces_columns_match_the_recorded_output() -> None:
    text = shared_fixture("ndbinfo", "logspaces.result.txt").read_text().splitlines()
    header = next(line for line in text if line.startswith("| node_id"))
    names = [h.strip() for h in header.strip("|").split("|")]
    assert names == [c.name for c in schema.view("logspaces").columns_for("7.6")]
    rows = [line for line in text if line.startswith("|       ")]
    assert {r.split("|")[2].strip() for r in rows} <= set(
        schema.view("logspaces").column("log_type").decode_map().values())


def test_versions_have_the_views_and_columns_their_release_has() -> None:
    def views(v: str) -> set[str]:
        return {x.name for x in schema.views_for(v)}

    for v in ("7.5", "7.6", "8.0.36"):
        assert "transporter_details" not in views(v)
    for v in ("8.0.37", "8.0", "8.4"):
        assert "transporter_details" in views(v)
    required = {"nodes", "processes", "threads", "threadstat", "cpustat", "cpustat_1sec",
                "transporters", "memoryusage", "logspaces", "logbuffers", "counters",
                "resources", "restart_info", "table_distribution_status", "table_fragments",
                "table_replicas", "disk_write_speed_aggregate",
                "disk_write_speed_aggregate_node", "config_params", "config_values"}
    for v in schema.PROFILES:
        assert required <= views(v), v
    trp = schema.view("transporters")
    assert "encrypted" not in [c.name for c in trp.columns_for("8.0")]
    assert [c.name for c in trp.columns_for("8.4")][-1] == "encrypted"
    lb = schema.view("logbuffers")
    assert [c.type for c in lb.columns_for("7.5") if c.name == "log_type"] == ["VARCHAR(9)"]
    assert [c.type for c in lb.columns_for("7.6") if c.name == "log_type"] == ["VARCHAR(11)"]
    tds = schema.view("table_distribution_status")
    assert "ADD_TABLE_COORDINATOR" in tds.columns_for("8.0")[2].decode_map().values()
    assert "ADD_TABLE_MASTER" in tds.columns_for("7.6")[2].decode_map().values()
    # the workload views: all in 7.5/7.6 but the PGMAN histograms (NDB 8.0.19)
    workload = {"memory_per_fragment", "cluster_transactions", "cluster_locks",
                "tc_time_track_stats", "diskpagebuffer"}
    for v in schema.PROFILES:
        assert workload <= views(v), v
    assert "pgman_time_track_stats" not in views("7.6") | views("8.0.18")
    assert "pgman_time_track_stats" in views("8.0.19") & views("8.4")
    # the kernel's histogram bounds: 50 us x 1.5 in integers (Dbtc), 0, 16, x2 .. ~0 (Pgman)
    assert schema.tc_time_track_bounds()[:6] == [50, 75, 112, 168, 252, 378]
    assert len(schema.tc_time_track_bounds()) == 32
    pg = schema.pgman_time_track_bounds()
    assert pg[:4] == [0, 16, 32, 64] and len(pg) == 20 and pg[-1] == 2**32 - 1
    mem75 = view_ddl.ddl("7.5").views
    mem80 = view_ddl.ddl("8.0").views
    assert any("Index memory" in s for s in mem75)
    assert not any("Index memory" in s for s in mem80)


def test_enum_columns_are_as_wide_as_their_longest_literal() -> None:
    for v in schema.VIEWS:
        for c in v.columns:
            if c.decode:
                texts = [t for _, t in c.decode] + ([c.decode_else] if c.decode_else else [])
                assert c.type == f"VARCHAR({max(map(len, texts))})", (v.name, c.name)
                assert c.nullable == (c.decode_else is None)


def test_restart_plan_walks_the_kernel_states_and_truncates_like_it() -> None:
    """The master's walk 2 .. 18 then 19 (Dbdih's NodeRecoveryStatus), and the columns as
    fill_row_with_node_restart_status writes them: each phase truncated to whole seconds on
    its own, so the phases add up to less than the total (a real 7.5.4 row: 63 vs 66)."""
    sc = scenario.load("default")
    for profile in rs.PROFILES:
        for seed in range(20):
            steps = rs.plan(sc, profile, rng=random.Random(seed), lcp_remaining=seed / 20)
            assert [s.status for s in steps] + [19] == list(schema.RESTART_ORDER_MASTER)
            done = {s.column: s.secs for s in steps}
            secs = rs.filled(done, 19)
            parts = sum(secs[p] for p in schema.LOCAL_RECOVERY_PARTS)
            assert parts <= secs["for_local_recovery"] < parts + len(schema.LOCAL_RECOVERY_PARTS)
            top = sum(secs[p] for p in schema.TOP_LEVEL_PHASES)
            assert top <= rs.total(done) < top + len(schema.TOP_LEVEL_PHASES)


def test_a_restart_under_way_shows_only_the_phases_done() -> None:
    sc = scenario.load("default")
    steps = rs.plan(sc, "7.6", rng=random.Random(1))
    # status 13 (RESTORE_FRAG_COMPLETED, "Undo Disk data ongoing"): restore is done
    done = {s.column: s.secs for s in steps if s.status < 13}
    secs = rs.filled(done, 13)
    assert secs["restore_fragments"] == int(done["restore_fragments"]) > 0
    assert "exec_redo_log" not in secs and "for_local_recovery" not in secs
    # from COPY_FRAGMENTS_STARTED (16) on, the local recovery total is filled
    done16 = {s.column: s.secs for s in steps if s.status < 16}
    assert rs.filled(done16, 16)["for_local_recovery"] > 0


def test_restart_totals_follow_the_field_facts() -> None:
    sc = scenario.load("default")

    def totals(profile: str) -> list[int]:
        rng = random.Random(7)
        return [rs.total({s.column: s.secs for s in rs.plan(
            sc, profile, rng=rng, lcp_remaining=rng.random())})
            for _ in range(200)]

    t75, t76 = totals("7.5"), totals("7.6")
    lo75, hi75 = rs.EXPECTED_TOTAL_RANGE["7.5"]
    lo76, hi76 = rs.EXPECTED_TOTAL_RANGE["7.6"]
    assert all(lo75 <= t <= hi75 for t in t75) and all(lo76 <= t <= hi76 for t in t76)
    # field facts: 19 min 11 s vs 6 min 49 s; 7.5's variance is large, 7.6's small
    assert abs(statistics.median(t75) - 1151) < 120
    assert abs(statistics.median(t76) - 409) < 15
    assert statistics.stdev(t75) > 5 * statistics.stdev(t76)


def test_lcp_wait_grows_with_data_and_falls_with_write_speed_in_7_5_only() -> None:
    sc = scenario.load("default")
    big = scenario.load("default")
    big.data_gb_per_node *= 2
    fast = scenario.load("default")
    fast.disk_write_speed_per_ldm *= 2

    def wait(s: scenario.Scenario, profile: str) -> int:
        steps = rs.plan(s, profile, rng=random.Random(1), lcp_remaining=0.5)
        return next(x.secs for x in steps if x.column == "wait_lcp_for_restart")

    assert wait(big, "7.5") > 1.8 * wait(sc, "7.5") > 1.8 * wait(fast, "7.5")
    assert wait(big, "7.6") == wait(sc, "7.6") == wait(fast, "7.6")


def test_initial_restart_copies_instead_of_recovering_locally() -> None:
    sc = scenario.load("default")
    steps = {s.column: s.secs for s in rs.plan(sc, "7.6", initial=True, rng=random.Random(3))}
    normal = {s.column: s.secs for s in rs.plan(sc, "7.6", rng=random.Random(3))}
    assert steps["restore_fragments"] == steps["exec_redo_log"] == 0
    assert normal["restore_fragments"] > 0 and normal["exec_redo_log"] > 0
    # all data comes from the live node: ~60 GB at the modelled copy rate
    assert steps["to_synchronize_starting_node"] > 100 * max(1, normal[
        "to_synchronize_starting_node"])
