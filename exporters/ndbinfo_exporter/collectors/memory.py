"""Memory per node and type (`memoryusage`, bytes) and resources (`resources`, pages)."""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context
from ndbinfo_exporter.families import Families


def collect_memoryusage(ctx: Context, fam: Families) -> None:
    rows = ctx.query("SELECT node_id, memory_type, used, total FROM ndbinfo.memoryusage")
    used = fam.gauge("ndb_memory_used_bytes", "Bytes in use per memory type (memoryusage).",
                     ["node_id", "memory_type"])
    total = fam.gauge("ndb_memory_total_bytes", "Bytes available per memory type"
                      " (memoryusage).", ["node_id", "memory_type"])
    for node_id, mtype, u, t in rows:
        used.add((node_id, mtype), u)
        total.add((node_id, mtype), t)


def collect_resources(ctx: Context, fam: Families) -> None:
    spare = ctx.col("resources", "spare")
    rows = ctx.query(f"SELECT node_id, resource_name, reserved, used, max, {spare}"
                     " FROM ndbinfo.resources")
    labels = ["node_id", "resource_name"]
    fs = [fam.gauge(f"ndb_resource_{what}_pages", f"Pages {doc} per resource (resources).",
                    labels)
          for what, doc in (("reserved", "reserved"), ("used", "in use"),
                            ("max", "allowed at most"), ("spare", "spare"))]
    for r in rows:
        for f, v in zip(fs, r[2:], strict=True):
            f.add((r[0], r[1]), v)


COLLECTORS = [
    Collector("memoryusage", "memoryusage: used/total bytes per node and memory type",
              ("memoryusage",), collect_memoryusage),
    Collector("resources", "resources: reserved/used/max/spare pages per resource",
              ("resources",), collect_resources),
]
