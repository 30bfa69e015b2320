"""The inject experiments' data: known server-side costs, each with a twin without it.

Every table has the same DDL (ddl.inject_tables), so a mechanism and its twin differ only
in the values their statements carry (lua/cs_inject.lua). What each mechanism costs, and
where the server spends it, is described there.

- ids 1..table_rows are pre-filled, so the upserts keep the table at its size; the pad column
  is pre-filled at the variant's pad_bytes, so an upsert replaces a row of the same size.
- HOT_BASE + 1..HOT_KEYS are rows every thread may update (the hot rows),
  PRIVATE_BASE + tid a row per sysbench thread (the twin's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pymysql

from clusterscope_loadgen.variant import Variant

HOT_BASE, PRIVATE_BASE = 2_000_000_000, 2_100_000_000  # as in lua/cs_inject.lua
HOT_KEYS, MAX_THREADS = 64, 1024
CHUNK_BYTES = 2_000_000  # rows per pre-fill statement: about this many bytes


def _option(v: Variant, options: dict[str, Any], key: str, default: int) -> int:
    return int(v.options.get(key, options.get(key, default)))


def layout(variants: Sequence[Variant], options: dict[str, Any]) -> dict[str, int]:
    """Each table's pad size; a table two variants write with different pads is an error."""
    pads: dict[str, int] = {}
    for v in variants:
        pad = _option(v, options, "pad_bytes", 0)
        if pads.setdefault(v.table, pad) != pad:
            raise ValueError(f"variants writing {v.table} differ in pad_bytes: a table holds"
                             " one row size")
        if not 0 <= pad <= 8192:
            raise ValueError(f"variant {v.name}: pad_bytes must be 0..8192, not {pad}")
    return pads


def _filled(cur: pymysql.cursors.Cursor, table: str, rows: int, pad: int) -> bool:
    """Pre-filled at this size and pad: three probe rows and the first hot row (a count
    would read every page of a padded table)."""
    probes = sorted({1, max(1, rows // 2), rows})
    cur.execute(f"SELECT COUNT(*), MIN(LENGTH(pad)), MAX(LENGTH(pad)) FROM {table}"
                f" WHERE id IN ({', '.join(map(str, probes))})")
    n, lo, hi = cur.fetchone()
    cur.execute(f"SELECT COUNT(*) FROM {table} WHERE id IN (%s, %s)",
                (HOT_BASE + 1, PRIVATE_BASE))
    return n == len(probes) and lo == pad and hi == pad and cur.fetchone()[0] == 2


def fill(cur: pymysql.cursors.Cursor, variants: Sequence[Variant],
         options: dict[str, Any]) -> None:
    """Ids 1..table_rows at each table's pad size, the hot and the per-thread rows."""
    rows = int(options.get("table_rows", 10000))
    if rows < 1:
        raise ValueError(f"table_rows must be at least 1, not {rows}")
    for table, pad in layout(variants, options).items():
        if _filled(cur, table, rows, pad):
            continue
        stmt = (f"INSERT INTO {table} (id, pad) VALUES (%s, %s)"
                " ON DUPLICATE KEY UPDATE pad = VALUES(pad)")
        chunk = max(1, min(2000, CHUNK_BYTES // max(1, pad)))
        for lo in range(1, rows + 1, chunk):
            # pymysql sends this executemany as multi-row INSERTs
            cur.executemany(stmt, [(i, b"p" * pad) for i in range(lo, min(rows, lo + chunk - 1)
                                                                 + 1)])
        extra = [HOT_BASE + j for j in range(1, HOT_KEYS + 1)]
        extra += [PRIVATE_BASE + t for t in range(MAX_THREADS)]
        cur.executemany(f"INSERT IGNORE INTO {table} (id) VALUES (%s)", [(i,) for i in extra])
