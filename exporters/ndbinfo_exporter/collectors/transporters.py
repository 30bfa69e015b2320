"""Links between nodes: `transporters` (bytes, status, connects, overload/slowdown) and,
where present (8.0.37+), `transporter_details` (TLS, send buffers, last receive).

Status is one series per link whose value is the kernel's connection status (0 connected),
never a label of the byte counters, so a reconnect does not start new series; before,
it was a state-set of four series per link, three of them zeros (62 % of all series at 144
data nodes were per-link transporter series).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from ndbinfo_exporter import schema
from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families, fill, row_sql, split_row

STATUSES = tuple(text for _, text in schema.TRANSPORTER_STATUS)
LINK = ("node_id", "remote_node_id")
LINK_SQL = [(n, n) for n in LINK]
# columns read when this version has them (see schema: 8.0.37 has none of them but
# `encrypted`, 8.0.38+/8.4 add sendbuffer_*, last_recv is 9.x only)
DETAIL_COLUMNS = ("encrypted", "sendbuffer_used_bytes", "sendbuffer_alloc_bytes", "last_recv")


def status_code_sql(column: str = "status") -> str:
    """The view's status text back to the kernel's connection_status (0 CONNECTED ..
    3 DISCONNECTING, as the view decodes it); NULL for anything else, as the view has."""
    names = ", ".join(f"'{s}'" for s in STATUSES)
    return f"NULLIF(FIELD({column}, {names}), 0) - 1"


def sql_transporters(col: Callable[[str], str]) -> tuple[str, str]:
    """(row expression, FROM) for Context.lines: one text line per link, values in the order
    of the per-link families; `col` gives a column, or NULL where this version's view lacks
    it (`Context.col`)."""
    # 7.x reports the node's own slot too, DISCONNECTED with address "-" (mysql/
    # mysql-server storage/ndb/src/kernel/blocks/trpman.cpp, 7.x TRANSPORTERS scan): not a
    # link, so not read
    return (row_sql(LINK_SQL, [
        status_code_sql(), "bytes_sent", "bytes_received", col("connect_count"),
        col("overloaded"), col("overload_count"), col("slowdown"), col("slowdown_count")]),
        "FROM ndbinfo.transporters WHERE node_id <> remote_node_id")


def sql_transporter_details(columns: Iterable[str]) -> str:
    """The transporter, then those of DETAIL_COLUMNS this version's view has."""
    return ("SELECT node_id, remote_node_id, trp_id" + "".join(f", {c}" for c in columns)
            + " FROM ndbinfo.transporter_details")


STATUS_HELP = ("Link status as the transporters view's connection_status: "
               + ", ".join(f"{k} {v}" for k, v in schema.TRANSPORTER_STATUS)
               + " (one series per link; 0 = connected).")
# in the order of sql_transporters' values
PER_LINK = (
    Desc("ndb_transporter_status_code", STATUS_HELP, LINK),
    Desc("ndb_transporter_sent_bytes_total", "Bytes sent on the link.", LINK, counter=True),
    Desc("ndb_transporter_received_bytes_total", "Bytes received on the link.", LINK,
         counter=True),
    Desc("ndb_transporter_connects_total", "Times the link (re)connected.", LINK, counter=True),
    Desc("ndb_transporter_overloaded", "1 while the link reports overload.", LINK),
    Desc("ndb_transporter_overloads_total", "Overload onsets since connect.", LINK,
         counter=True),
    Desc("ndb_transporter_slowdown", "1 while the link requests slowdown.", LINK),
    Desc("ndb_transporter_slowdowns_total", "Slowdown onsets since connect.", LINK,
         counter=True),
)
TRANSPORTER = (*LINK, "trp_id")
# per DETAIL_COLUMNS column: its family and the scale from the column's unit
DETAILS = {
    "encrypted": (Desc("ndb_transporter_encrypted", "1 if the transporter uses TLS"
                       " (transporter_details.encrypted).", TRANSPORTER), 1.0),
    "sendbuffer_used_bytes": (Desc("ndb_transporter_send_buffer_used_bytes", "Send-buffer"
                                   " bytes queued now per transporter (8.0.38+).",
                                   TRANSPORTER), 1.0),
    "sendbuffer_alloc_bytes": (Desc("ndb_transporter_send_buffer_allocated_bytes",
                                    "Send-buffer bytes allocated now per transporter"
                                    " (8.0.38+).", TRANSPORTER), 1.0),
    "last_recv": (Desc("ndb_transporter_last_receive_age_seconds", "Seconds since the"
                       " transporter last received data (9.x).", TRANSPORTER), 1e-6),
}


def collect_transporters(ctx: Context, fam: Families) -> None:
    lines = ctx.lines(*sql_transporters(partial(ctx.col, "transporters")))
    fill([d.of(fam) for d in PER_LINK], [split_row(text) for text in lines])


def collect_transporter_details(ctx: Context, fam: Families) -> None:
    have = [c for c in DETAIL_COLUMNS if ctx.db.has("transporter_details", c)]
    rows = ctx.rows(sql_transporter_details(have))
    families = {column: (desc.of(fam), scale) for column, (desc, scale) in DETAILS.items()}
    for r in rows:
        lv = (r["node_id"], r["remote_node_id"], r["trp_id"])
        for column in have:
            f, scale = families[column]
            f.add(lv, r[column], scale)


COLLECTORS = [
    Collector("transporters", "transporters: bytes, status, connects, overload, slowdown",
              ("transporters",), collect_transporters),
    Collector("transporter_details", "transporter_details (8.0.37+): TLS, send buffers"
              " (8.0.38+) and last receive (9.x) per transporter", ("transporter_details",),
              collect_transporter_details),
]
