"""Operations counters, memory and resources, REDO/UNDO logs."""

from __future__ import annotations

from fake_context import collect, fake_context, run
from helpers import series, val


def _counter(node: int, inst: int, cid: int, val_: int | None, block: str = "DBLQH",
             name: str = "OPERATIONS") -> dict[str, object]:
    return {"node_id": node, "block_name": block, "block_instance": inst, "counter_id": cid,
            "counter_name": name, "val": val_}


def test_counters_sum_over_block_instances_by_name() -> None:
    rows = [_counter(1, 0, 5, 10), _counter(1, 1, 5, 32), _counter(2, 0, 5, 7),
            _counter(1, 0, 6, 3, "DBTC", "TRANSACTIONS")]
    ss = collect("counters", {"counters": rows})
    assert val(ss, "ndb_counters_total", node_id=1, block_name="DBLQH",
               counter_name="OPERATIONS") == 42
    assert val(ss, "ndb_counters_total", node_id=2, block_name="DBLQH",
               counter_name="OPERATIONS") == 7
    assert val(ss, "ndb_counters_total", node_id=1, block_name="DBTC",
               counter_name="TRANSACTIONS") == 3


def test_counter_ids_the_view_names_alike_add_up() -> None:
    # counters newer than the SQL node are all "<unknown>": they add up, as grouping by
    # the names did
    rows = [_counter(1, 0, 90, 1, "DBTC", "<unknown>"), _counter(1, 0, 91, 2, "DBTC",
                                                                  "<unknown>")]
    ss = collect("counters", {"counters": rows})
    assert val(ss, "ndb_counters_total", node_id=1, block_name="DBTC",
               counter_name="<unknown>") == 3


def test_counter_names_are_read_again_only_for_a_new_id() -> None:
    ctx = fake_context({"counters": [_counter(1, 0, 5, 10)]})
    run("counters", ctx)
    assert ctx.state.counter_names == {5: ("DBLQH", "OPERATIONS")}
    before = len(ctx.db.queries)
    run("counters", ctx)
    assert len(ctx.db.queries) == before + 1  # the sums only: the names are known


def test_memory_used_and_total_per_type() -> None:
    ss = collect("memoryusage", {"memoryusage": [
        {"node_id": 1, "memory_type": "Data memory", "used": 10, "total": 20},
        {"node_id": 1, "memory_type": "Long message buffer", "used": None, "total": 4}]})
    assert val(ss, "ndb_memory_used_bytes", node_id=1, memory_type="Data memory") == 10
    assert val(ss, "ndb_memory_total_bytes", node_id=1, memory_type="Data memory") == 20
    assert val(ss, "ndb_memory_used_bytes", node_id=1,
               memory_type="Long message buffer") is None


def test_resources_in_pages() -> None:
    ss = collect("resources", {"resources": [
        {"node_id": 1, "resource_name": "DATA_MEMORY", "reserved": 1, "used": 2, "max": 3,
         "spare": 4}]})
    at = {"node_id": 1, "resource_name": "DATA_MEMORY"}
    assert [val(ss, f"ndb_resource_{w}_pages", **at) for w in ("reserved", "used", "max",
                                                                "spare")] == [1, 2, 3, 4]


def test_log_space_and_buffers_per_part() -> None:
    rows = [{"node_id": 1, "log_type": "REDO", "log_id": 0, "log_part": p, "total": 100,
             "used": 10 * p} for p in range(4)]
    ss = collect("logspaces", {"logspaces": rows})
    assert val(ss, "ndb_log_space_used_bytes", node_id=1, log_type="REDO", log_id=0,
               log_part=3) == 30
    assert len(series(ss, "ndb_log_space_total_bytes")) == 4
    ss = collect("logbuffers", {"logbuffers": [{"node_id": 2, "log_type": "DD-UNDO",
                                                "log_id": 1, "log_part": 0, "total": 8,
                                                "used": 2}]})
    assert val(ss, "ndb_log_buffer_used_bytes", node_id=2, log_type="DD-UNDO", log_id=1,
               log_part=0) == 2
