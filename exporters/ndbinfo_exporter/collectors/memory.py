"""Memory per node and type (`memoryusage`, bytes) and resources (`resources`, pages)."""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families

SQL_MEMORYUSAGE = "SELECT node_id, memory_type, used, total FROM ndbinfo.memoryusage"
# {spare}: the column, or NULL where this version's view lacks it (`Context.col`)
SQL_RESOURCES = ("SELECT node_id, resource_name, reserved, used, max, {spare}"
                 " FROM ndbinfo.resources")

MEMORY_LABELS = ("node_id", "memory_type")
MEMORY_USED = Desc("ndb_memory_used_bytes", "Bytes in use per memory type (memoryusage).",
                   MEMORY_LABELS)
MEMORY_TOTAL = Desc("ndb_memory_total_bytes", "Bytes available per memory type"
                    " (memoryusage).", MEMORY_LABELS)

RESOURCE_LABELS = ("node_id", "resource_name")
# in the order of SQL_RESOURCES' value columns
RESOURCE_PAGES = (
    Desc("ndb_resource_reserved_pages", "Pages reserved per resource (resources).",
         RESOURCE_LABELS),
    Desc("ndb_resource_used_pages", "Pages in use per resource (resources).", RESOURCE_LABELS),
    Desc("ndb_resource_max_pages", "Pages allowed at most per resource (resources).",
         RESOURCE_LABELS),
    Desc("ndb_resource_spare_pages", "Pages spare per resource (resources).", RESOURCE_LABELS),
)


def collect_memoryusage(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_MEMORYUSAGE)
    used, total = MEMORY_USED.of(fam), MEMORY_TOTAL.of(fam)
    for node_id, mtype, u, t in rows:
        used.add((node_id, mtype), u)
        total.add((node_id, mtype), t)


def collect_resources(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_RESOURCES.format(spare=ctx.col("resources", "spare")))
    fs = [d.of(fam) for d in RESOURCE_PAGES]
    for r in rows:
        for f, v in zip(fs, r[2:], strict=True):
            f.add((r[0], r[1]), v)


COLLECTORS = [
    Collector("memoryusage", "memoryusage: used/total bytes per node and memory type",
              ("memoryusage",), collect_memoryusage),
    Collector("resources", "resources: reserved/used/max/spare pages per resource",
              ("resources",), collect_resources),
]
