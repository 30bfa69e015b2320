"""The disk page buffer of disk data tables (`diskpagebuffer`, one row per PGMAN instance:
one per LDM thread plus one), summed per data node. Counters since the node started.

A page request ends one of three ways (Pgman::get_page_no_lirs, mysql/mysql-server
storage/ndb/src/kernel/blocks/pgman.cpp @e117a2b58bf4): direct_return, the page is in the
buffer and free to use; wait_queue, the page is in the buffer but other requests for it are
queued first (a hit that waited behind them); wait_io, the page is not usable now, being
read from disk or being written out (PAGEOUT, e.g. by a local checkpoint). The hit ratio is
the manual's, direct_return / (direct_return + wait_io), below 95 % a sign to grow
DiskPageBufferMemory (MySQL manual, "The ndbinfo diskpagebuffer Table"): a hot page queued
on is no buffer shortage. Disk reads are pages_read (one per read completed). pages_written
and pages_written_lcp are disjoint: Pgman::fswriteconf counts a write of a page marked for
the local checkpoint in pages_written_lcp and every other write (cleanup, eviction) in
pages_written. A cluster without disk data has all zeros.
"""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families

OUTCOMES = (("direct_return", "page_requests_direct_return"),
            ("wait_queue", "page_requests_wait_queue"),
            ("wait_io", "page_requests_wait_io"))

SQL_DISKPAGEBUFFER = ("SELECT node_id, " + ", ".join(f"SUM({c})" for _, c in OUTCOMES)
                      + ", SUM(pages_read), SUM(pages_written), SUM(pages_written_lcp),"
                      " SUM(log_waits) FROM ndbinfo.diskpagebuffer GROUP BY node_id")

PAGE_REQUESTS = Desc("ndb_disk_page_buffer_requests_total", "Page requests to the disk page"
                     " buffer by outcome: direct_return (in the buffer, served at once),"
                     " wait_queue (in the buffer, queued behind other requests for the same"
                     " page), wait_io (not usable now: being read from disk or written out)."
                     " Hit ratio (manual): direct_return / (direct_return + wait_io).",
                     ("node_id", "outcome"), counter=True)
PAGES_READ = Desc("ndb_disk_page_buffer_pages_read_total", "Pages read from disk into the"
                  " disk page buffer.", ("node_id",), counter=True)
PAGES_WRITTEN = Desc("ndb_disk_page_buffer_pages_written_total", "Pages written to disk"
                     " from the disk page buffer outside local checkpoints (cleanup,"
                     " eviction); all writes = this + the LCP pages written.", ("node_id",),
                     counter=True)
LCP_PAGES_WRITTEN = Desc("ndb_disk_page_buffer_lcp_pages_written_total", "Pages the local"
                         " checkpoints wrote from the disk page buffer (not in"
                         " pages_written).", ("node_id",), counter=True)
LOG_WAITS = Desc("ndb_disk_page_buffer_log_waits_total", "Page writes that waited for the"
                 " UNDO log to reach disk first (the WAL rule).", ("node_id",), counter=True)


def collect_diskpagebuffer(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_DISKPAGEBUFFER)
    req, read, written = PAGE_REQUESTS.of(fam), PAGES_READ.of(fam), PAGES_WRITTEN.of(fam)
    lcp, waits = LCP_PAGES_WRITTEN.of(fam), LOG_WAITS.of(fam)
    for node_id, *v in rows:
        for (outcome, _), x in zip(OUTCOMES, v[:3], strict=True):
            req.add((node_id, outcome), x)
        read.add((node_id,), v[3])
        written.add((node_id,), v[4])
        lcp.add((node_id,), v[5])
        waits.add((node_id,), v[6])


COLLECTORS = [
    Collector("diskpagebuffer", "diskpagebuffer: disk page buffer requests by outcome (hit"
              " ratio), pages read and written", ("diskpagebuffer",), collect_diskpagebuffer),
]
