"""Operations: the `counters` view summed over block instances in SQL."""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context
from ndbinfo_exporter.families import Families


def collect_counters(ctx: Context, fam: Families) -> None:
    rows = ctx.query("SELECT node_id, block_name, counter_name, SUM(val) FROM ndbinfo.counters"
                     " GROUP BY node_id, block_name, counter_name")
    f = fam.counter("ndb_counters_total", "ndbinfo.counters summed over block instances"
                    " (since the data node started).",
                    ["node_id", "block_name", "counter_name"])
    for node_id, block, name, val in rows:
        f.add((node_id, block, name), val)


COLLECTORS = [
    Collector("counters", "counters: operations per node, block and counter",
              ("counters",), collect_counters),
]
