"""The node collectors (`nodes`, `processes`, `membership`) on rows given in the test."""

from __future__ import annotations

from fake_context import collect
from helpers import series, val
from ndbinfo_exporter import schema

NODES = [{"node_id": 1, "uptime": 500, "status": "STARTED", "start_phase": 0,
          "config_generation": 3},
         {"node_id": 2, "uptime": 20, "status": "starting", "start_phase": 4,
          "config_generation": 3}]


def test_status_is_a_state_set_that_flips_values_not_series() -> None:
    ss = collect("nodes", {"nodes": NODES})
    statuses = {lbl["status"] for lbl, _ in series(ss, "ndb_node_status")
                if lbl["node_id"] == "1"}
    assert statuses == {text for _, text in schema.NODE_STATUS}
    assert val(ss, "ndb_node_status", node_id=1, status="STARTED") == 1
    assert val(ss, "ndb_node_status", node_id=1, status="STARTING") == 0
    # the view's text is upper-cased, so a lower-case status is the same series
    assert val(ss, "ndb_node_status", node_id=2, status="STARTING") == 1
    assert val(ss, "ndb_node_start_phase", node_id=2) == 4
    assert val(ss, "ndb_node_uptime_seconds", node_id=1) == 500
    assert val(ss, "ndb_node_config_generation", node_id=1) == 3


def test_a_status_the_exporter_does_not_know_is_still_exported() -> None:
    ss = collect("nodes", {"nodes": [{**NODES[0], "status": "NEW_STATE"}]})
    assert val(ss, "ndb_node_status", node_id=1, status="NEW_STATE") == 1
    assert val(ss, "ndb_node_status", node_id=1, status="STARTED") == 0


def test_a_configured_data_node_without_a_row_is_down_not_gone() -> None:
    config = [{"node_id": n, "node_type": t, "node_hostname": "h"}
              for n, t in ((1, "NDB"), (2, "NDB"), (3, "NDB"), (49, "MGM"), (51, "API"))]
    ss = collect("nodes", {"nodes": NODES, "config_nodes": config})
    assert {lbl["node_id"]: v for lbl, v in series(ss, "ndb_data_node_running")} == {
        "1": 1, "2": 1, "3": 0}
    # a down node has no status series to go stale: only `running` says it
    assert not [lbl for lbl, _ in series(ss, "ndb_node_status") if lbl["node_id"] == "3"]


def test_without_config_nodes_the_running_nodes_are_all_it_knows() -> None:
    ss = collect("nodes", {"nodes": NODES}, absent=("config_nodes",))
    assert {lbl["node_id"] for lbl, _ in series(ss, "ndb_data_node_running")} == {"1", "2"}


def test_a_null_column_omits_its_sample_only() -> None:
    ss = collect("nodes", {"nodes": [{**NODES[0], "uptime": None}]})
    assert val(ss, "ndb_node_uptime_seconds", node_id=1) is None
    assert val(ss, "ndb_node_start_phase", node_id=1) == 0


def test_processes_carry_type_version_and_the_configured_host() -> None:
    rows = {"processes": [{"node_id": 1, "node_type": "NDB", "node_version": "8.0.40"},
                          {"node_id": 51, "node_type": "API", "node_version": "8.0.40"}],
            "config_nodes": [{"node_id": 1, "node_type": "NDB", "node_hostname": "db-1"}]}
    ss = collect("processes", rows)
    assert val(ss, "ndb_node_info", node_id=1, type="NDB", version="8.0.40",
               hostname="db-1") == 1
    # a process the configuration does not list keeps its series, with no host
    assert val(ss, "ndb_node_info", node_id=51, type="API", version="8.0.40",
               hostname="") == 1


def test_processes_without_config_nodes_have_no_host() -> None:
    ss = collect("processes", {"processes": [{"node_id": 1, "node_type": "NDB",
                                              "node_version": "7.6.6"}]},
                 absent=("config_nodes",))
    assert val(ss, "ndb_node_info", node_id=1, type="NDB", version="7.6.6", hostname="") == 1


def test_membership_values_and_arbitration_state() -> None:
    row = {"node_id": 1, "group_id": 0, "president": 1, "successor": 2, "arbitrator": 49,
           "arb_state": "ARBIT_RUN", "arb_connected": "Yes"}
    ss = collect("membership", {"membership": [
        row, {**row, "node_id": 2, "arb_connected": "No", "arb_state": "ARBIT_FIND"}]})
    assert val(ss, "ndb_node_group", node_id=1) == 0
    assert val(ss, "ndb_president_node_id", node_id=2) == 1
    assert val(ss, "ndb_president_successor_node_id", node_id=1) == 2
    # node ids are values, so a new arbitrator moves a value instead of making series
    assert val(ss, "ndb_arbitrator_node_id", node_id=1) == 49
    assert val(ss, "ndb_arbitrator_connected", node_id=1) == 1
    assert val(ss, "ndb_arbitrator_connected", node_id=2) == 0
    assert val(ss, "ndb_arbitration_state", node_id=1, state="ARBIT_RUN") == 1
    assert val(ss, "ndb_arbitration_state", node_id=2, state="ARBIT_RUN") == 0
    assert val(ss, "ndb_arbitration_state", node_id=2, state="ARBIT_FIND") == 1


def test_membership_unknown_connection_is_no_sample() -> None:
    ss = collect("membership", {"membership": [{"node_id": 1, "arb_connected": None}]})
    assert val(ss, "ndb_arbitrator_connected", node_id=1) is None
