"""The change detector's pure parts: what counts as a change, rolling grouping, the lines
it writes and what it keeps across restarts (no database; the lab tests read real ones)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clusterscope_changes import diff
from clusterscope_changes.detector_state import State
from clusterscope_changes.events import ChangesFile, event
from clusterscope_changes.grouping import Grouper

BASE = {"version": "10.11.6-MariaDB-log", "innodb_flush_log_at_trx_commit": "2",
        "wsrep_start_position": "00000000-0000-0000-0000-000000000000:-1",
        "gtid_binlog_pos": "0-1-100", "wsrep_sst_auth": "********",
        # as MariaDB 10.11 prints it (SHOW GLOBAL VARIABLES in the lab)
        "wsrep_provider_options": "base_dir = /var/lib/mysql/; evs.suspect_timeout = PT3S;"
                                  " gcache.size = 128M; gcs.fc_limit = 16; ",
        "optimizer_switch": "index_merge=on," * 30}


def test_a_set_global_is_one_variable_change_and_gtid_positions_are_none():
    new = {**BASE, "innodb_flush_log_at_trx_commit": "1", "gtid_binlog_pos": "0-1-900",
           "wsrep_start_position": "85d9738f-ea89-11f1-82a5-2abd1a9604f5:218177"}
    items = diff.server_items(BASE, new)
    assert items == [diff.Item("variable", "innodb_flush_log_at_trx_commit", "2", "1")]
    assert diff.summary(items) == "innodb_flush_log_at_trx_commit 2 -> 1"


def test_provider_options_change_per_option_and_a_new_version_names_the_change():
    new = {**BASE, "version": "11.4.2-MariaDB-log", "new_variable": "ON",
           "wsrep_provider_options": BASE["wsrep_provider_options"].replace("128M", "256M")}
    items = diff.server_items(BASE, new)
    assert diff.Item("provider_option", "gcache.size", "128M", "256M") in items
    assert diff.Item("variable", "new_variable", None, "ON") in items
    assert diff.primary(items).kind == "version"
    assert diff.summary(items) == "version 10.11.6-MariaDB-log -> 11.4.2-MariaDB-log (+2 more)"
    assert diff.provider_options("a = 1; broken; b=2")["broken"] == ""


def test_secrets_are_never_shown_and_long_values_are_cut_with_a_digest():
    item = diff.Item("variable", "wsrep_sst_auth", "root:old", "root:new")
    assert item.shown() == (diff.HIDDEN, diff.HIDDEN)
    long_a, long_b = "x" * 500 + "a", "x" * 500 + "b"
    a, b = diff.Item("variable", "optimizer_switch", long_a, long_b).shown()
    assert len(a) < 250 and a != b and "501 chars" in a


def test_galeras_own_auto_increment_adjustment_is_no_change():
    base = {**BASE, "wsrep_auto_increment_control": "ON", "auto_increment_increment": "3"}
    assert diff.server_items(base, {**base, "auto_increment_increment": "2"}) == []
    off = {**base, "wsrep_auto_increment_control": "OFF"}
    assert diff.server_items(off, {**off, "auto_increment_increment": "2"}) == [
        diff.Item("variable", "auto_increment_increment", "3", "2")]


def test_first_reading_has_no_changes():
    assert diff.server_items({}, BASE) == []


def test_ndb_parameters_unread_are_not_removed_but_an_upgrade_may_drop_some():
    old = {"version": "8.0.40", "config": {"DataMemory": "100", "IndexMemory": "5"}}
    assert diff.ndb_items(old, {"version": "8.0.40", "config": {"DataMemory": "200"}}) == [
        diff.Item("ndb_config", "DataMemory", "100", "200")]
    items = diff.ndb_items(old, {"version": "8.4.3", "config": {"DataMemory": "100"}})
    assert [i.key for i in items] == [("ndb_version", "version", "8.4.3"),
                                      ("ndb_config", "IndexMemory", None)]
    # a reading without the version (the processes view missing) compares the rest only
    assert diff.ndb_items(old, {"config": {"DataMemory": "100", "IndexMemory": "5"}}) == []


def _items(value: str) -> list[diff.Item]:
    return [diff.Item("variable", "character_set_server", "latin1", value)]


def test_set_global_node_by_node_is_one_rolling_change():
    g = Grouper(window=1800)
    steps = [g.assign("lab-galera", "galera", f"node{n}", _items("utf8mb4"), 1000.0 + 40 * n)
             for n in (1, 2, 3)]
    ids = {grp.change_id for grp, _ in steps}
    assert len(ids) == 1 and [s for _, s in steps] == [1, 2, 3]
    grp = steps[-1][0]
    assert grp.nodes == ["node1", "node2", "node3"] and grp.start == 1040.0 and grp.last == 1120


def test_another_value_another_node_class_or_a_late_step_is_another_change():
    g = Grouper(window=600)
    first, _ = g.assign("c", "galera", "node1", _items("utf8mb4"), 0.0)
    assert g.assign("c", "galera", "node2", _items("utf8"), 10.0)[0] is not first
    assert g.assign("c", "sql", "sql1", _items("utf8mb4"), 20.0)[0] is not first
    assert g.assign("c", "galera", "node1", _items("utf8mb4"), 30.0)[0] is not first
    assert g.assign("c", "galera", "node3", _items("utf8mb4"), 700.0)[0].change_id != \
        first.change_id
    # the groups survive a restart of the detector (the state file holds them)
    again = Grouper(600, json.loads(json.dumps(g.dump())))
    assert [x.change_id for x in again.groups] == [x.change_id for x in g.groups]


def test_a_change_line_names_cluster_node_change_and_step(tmp_path: Path):
    g = Grouper(1800)
    items = [diff.Item("variable", "innodb_flush_log_at_trx_commit", "2", "1")]
    grp, step = g.assign("lab-galera", "galera", "node1", items, 1700000000.5)
    line = event(cluster="lab-galera", node="node1", role="galera", items=items, group=grp,
                 step=step, nodes_total=3, since=1699999970.0, now=1700000000.5,
                 simulated=False)
    assert line["kind"] == "variable" and line["old"] == "2" and line["new"] == "1"
    assert line["step"] == "1" and line["nodes_total"] == "3"
    assert line["change_id"].startswith("lab-galera.20231114T221320Z.")
    assert json.loads(line["details"]) == [["variable", "innodb_flush_log_at_trx_commit",
                                            "2", "1"]]
    assert "simulated" not in line and "step 1 of 3" in line["msg"]


def test_an_unwritable_changes_file_keeps_its_lines_until_it_works(tmp_path: Path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the directory should be\n")
    f = ChangesFile(blocker / "changes.jsonl")
    f.pending.append({"msg": "one"})
    f.flush()
    assert f.pending == [{"msg": "one"}] and f.error
    blocker.unlink()
    f.flush()
    assert f.pending == [] and f.error is None
    assert json.loads((blocker / "changes.jsonl").read_text()) == {"msg": "one"}


def test_state_round_trip_and_a_corrupt_file_is_refused(tmp_path: Path):
    path = tmp_path / "state.json"
    s = State(path)
    s.node("c/n1").values = {"version": "1"}
    s.count("c", "n1", "variable", "x", 5.0)
    s.pending.append({"msg": "queued"})
    s.save(force=True)
    again = State(path)
    assert again.nodes["c/n1"].values == {"version": "1"}
    assert again.counts == {"c\tn1\tvariable": 1.0} and again.pending == [{"msg": "queued"}]
    path.write_text("{not json")
    with pytest.raises(ValueError, match="unreadable state file"):
        State(path)
