"""Operations: the `counters` view summed over block instances in SQL.

Summed per node and counter_id (integers: MariaDB and MySQL group them several times faster
than the block and counter name strings, and at 144 data nodes x 32 instances the view has
143k rows, the largest statement of a scrape in clusterscope bench exporter). A counter id
belongs to one block (the kernel's Ndbinfo counter ids are unique), so nothing merges; the
names come from the view itself, read once and again when an id is new to the exporter.
"""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families, num

SQL_COUNTERS = ("SELECT node_id, counter_id, SUM(val) FROM ndbinfo.counters"
                " GROUP BY node_id, counter_id")
# the names of the ids, run only when SQL_COUNTERS returns an id the exporter has not named
SQL_COUNTERS_NAMES = ("SELECT DISTINCT counter_id, block_name, counter_name"
                      " FROM ndbinfo.counters")

COUNTERS = Desc("ndb_counters_total", "ndbinfo.counters summed over block instances"
                " (since the data node started).", ("node_id", "block_name", "counter_name"),
                counter=True)


def collect_counters(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_COUNTERS)
    names = ctx.state.counter_names
    if any(cid not in names for _, cid, _ in rows if cid is not None):
        names.update({int(cid): (block, name) for cid, block, name in ctx.query(
            SQL_COUNTERS_NAMES) if cid is not None})
    f = COUNTERS.of(fam)
    # ids the view names alike (its "<unknown>" for counters newer than the SQL node) add up,
    # as grouping by the names did
    sums: dict[tuple, float | None] = {}
    for node_id, cid, val in rows:
        block, name = names.get(int(cid), (None, None)) if cid is not None else (None, None)
        key, v = (node_id, block, name), num(val)
        sums[key] = v if key not in sums else (
            None if v is None and sums[key] is None else (sums[key] or 0.0) + (v or 0.0))
    for key, v in sums.items():
        f.add(key, v)


COLLECTORS = [
    Collector("counters", "counters: operations per node, block and counter",
              ("counters",), collect_counters),
]
