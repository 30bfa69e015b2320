"""Links between nodes: `transporters` (bytes, status, connects, overload/slowdown) and,
where present (8.0.37+/8.4), `transporter_details` (send buffers, last receive).

Status is its own state gauge, never a label of the byte counters, so a reconnect does not
start new counter series.
"""

from __future__ import annotations

from ndbinfo_exporter import schema
from ndbinfo_exporter.collectors.base import Collector, Context
from ndbinfo_exporter.families import Families, body, label

STATUSES = tuple(text for _, text in schema.TRANSPORTER_STATUS)
LINK = ["node_id", "remote_node_id"]


def collect_transporters(ctx: Context, fam: Families) -> None:
    c = lambda name: ctx.col("transporters", name)  # noqa: E731 - older versions lack some
    rows = ctx.query(
        f"SELECT node_id, remote_node_id, status, bytes_sent, bytes_received,"
        f" {c('connect_count')}, {c('overloaded')}, {c('overload_count')}, {c('slowdown')},"
        f" {c('slowdown_count')} FROM ndbinfo.transporters")
    sent = fam.counter("ndb_transporter_sent_bytes_total", "Bytes sent on the link.", LINK)
    recv = fam.counter("ndb_transporter_received_bytes_total", "Bytes received on the link.",
                       LINK)
    status = fam.gauge("ndb_transporter_status", "Link status: 1 for the current one.",
                       [*LINK, "status"])
    connects = fam.counter("ndb_transporter_connects_total", "Times the link (re)connected.",
                           LINK)
    over = fam.gauge("ndb_transporter_overloaded", "1 while the link reports overload.", LINK)
    overs = fam.counter("ndb_transporter_overloads_total", "Overload onsets since connect.",
                        LINK)
    slow = fam.gauge("ndb_transporter_slowdown", "1 while the link requests slowdown.", LINK)
    slows = fam.counter("ndb_transporter_slowdowns_total", "Slowdown onsets since connect.",
                        LINK)
    per_link = (sent, recv, connects, over, overs, slow, slows)
    for r in rows:
        link = body(LINK, r[:2])  # rendered once per row, shared by its families
        current = (r[2] or "").upper()
        if current:
            for s in (*STATUSES, *((current,) if current not in STATUSES else ())):
                status.add_body(f'{link},status="{label(s)}"', 1 if s == current else 0)
        for f, v in zip(per_link, r[3:10], strict=True):
            f.add_body(link, v)


def collect_transporter_details(ctx: Context, fam: Families) -> None:
    rows = ctx.query("SELECT node_id, remote_node_id, trp_id, sendbuffer_used_bytes,"
                     " sendbuffer_alloc_bytes, last_recv FROM ndbinfo.transporter_details")
    labels = [*LINK, "trp_id"]
    used = fam.gauge("ndb_transporter_send_buffer_used_bytes", "Send-buffer bytes queued now"
                     " per transporter.", labels)
    alloc = fam.gauge("ndb_transporter_send_buffer_allocated_bytes", "Send-buffer bytes"
                      " allocated now per transporter.", labels)
    age = fam.gauge("ndb_transporter_last_receive_age_seconds", "Seconds since the"
                    " transporter last received data.", labels)
    for node_id, remote, trp_id, u, a, last_recv in rows:
        lv = (node_id, remote, trp_id)
        used.add(lv, u)
        alloc.add(lv, a)
        age.add(lv, last_recv, 1e-6)


COLLECTORS = [
    Collector("transporters", "transporters: bytes, status, connects, overload, slowdown",
              ("transporters",), collect_transporters),
    Collector("transporter_details", "transporter_details (8.0.37+): send buffers and last"
              " receive per transporter", ("transporter_details",),
              collect_transporter_details),
]
