"""Memory per table and data node (`memory_per_fragment`), the MEM "memory report": which
table fills DataMemory.

The view has a row per fragment replica and LDM instance; the SQL node sums them per table
and node, so the series stay per table and node. A table's unique indexes (tables of their
own in NDB) and its ordered indexes (T-tree fragments, fixed-size pages only: the PRIMARY
one every mysqld table has unless its key is USING HASH) have the table as parent
(parent_fq_name; MySQL manual, "The ndbinfo memory_per_fragment Table", notes and
examples): their memory counts to the table. Blob part tables count to the table where the
dictionary gives them the table as parent. Slow collector: the view joins the
dictionary and grows with tables x fragments (data nodes x LDM threads x tables rows,
NdbinfoTables.cpp's estimate for frag_mem_use), so it runs every --scrape.slow-interval.
"""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families, body, num

OWNER = "COALESCE(parent_fq_name, fq_name)"

SQL_MEMORY_PER_FRAGMENT = (
    f"SELECT node_id, {OWNER}, SUM(fixed_elem_alloc_bytes), SUM(var_elem_alloc_bytes),"
    " SUM(hash_index_alloc_bytes), SUM(fixed_elem_free_bytes), SUM(var_elem_free_bytes),"
    " SUM(IF(parent_fq_name IS NULL, fixed_elem_count, 0))"
    f" FROM ndbinfo.memory_per_fragment GROUP BY node_id, {OWNER}")

TABLE_MEMORY_LABELS = ("node_id", "table")
TABLE_ALLOCATED = Desc("ndb_table_memory_allocated_bytes", "Bytes a table (with its unique"
                       " and ordered indexes and blob parts) has allocated on the data node,"
                       " by kind: fixed-size (row parts and ordered index T-tree nodes),"
                       " var-size row parts, hash index (memory_per_fragment).",
                       (*TABLE_MEMORY_LABELS, "kind"))
TABLE_FREE = Desc("ndb_table_memory_free_bytes", "Free bytes inside the table's allocated row"
                  " pages on the node (fixed + var), reusable by the table only.",
                  TABLE_MEMORY_LABELS)
TABLE_ROWS = Desc("ndb_table_rows", "Fixed-size row parts of the table's own fragment"
                  " replicas on the node (one per row replica it stores).",
                  TABLE_MEMORY_LABELS)


def collect_memory_per_fragment(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_MEMORY_PER_FRAGMENT)
    alloc, free, rows_f = TABLE_ALLOCATED.of(fam), TABLE_FREE.of(fam), TABLE_ROWS.of(fam)
    for node_id, table, fixed, var, hidx, ffree, vfree, n in rows:
        b = body(TABLE_MEMORY_LABELS, (node_id, table))
        for kind, v in (("fixed", fixed), ("var", var), ("hash_index", hidx)):
            alloc.add_body(f'{b},kind="{kind}"', v)
        parts = [num(x) for x in (ffree, vfree)]
        if any(p is not None for p in parts):
            free.add_body(b, sum(p or 0.0 for p in parts))
        rows_f.add_body(b, n)


COLLECTORS = [
    Collector("memory_per_fragment", "memory_per_fragment: memory per table and data node"
              " (slow: every --scrape.slow-interval)", ("memory_per_fragment",),
              collect_memory_per_fragment, slow=True),
]
