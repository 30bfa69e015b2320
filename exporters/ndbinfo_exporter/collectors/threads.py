"""CPU per block thread: `cpustat` joined to `threads` (percent of the last second) and
`threadstat` (cumulative CPU seconds). Threads are labelled by name, never by a fixed thr_no,
so `thread_name="ldm"` selects the LDM threads on every version and configuration.
"""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context
from ndbinfo_exporter.families import Families, body, num

CPUSTAT_MODES = (("os_user", "OS_user"), ("os_system", "OS_system"), ("os_idle", "OS_idle"),
                 ("exec", "thread_exec"), ("sleeping", "thread_sleeping"),
                 ("spinning", "thread_spinning"), ("send", "thread_send"),
                 ("buffer_full", "thread_buffer_full"))
LABELS = ["node_id", "thr_no", "thread_name"]


def collect_cpustat(ctx: Context, fam: Families) -> None:
    # Joined here, not in SQL: ndbinfo tables have no indexes, and a server without hash
    # joins (MySQL 5.7 under NDB 7.x; MariaDB in the benchmark) runs cpustat x threads as a
    # nested loop: 4.4 s at 144 data nodes x 38 threads (clusterscope bench exporter), where
    # two scans and a dict take milliseconds.
    names = {(r[0], r[1]): r[2] for r in ctx.query(
        "SELECT node_id, thr_no, thread_name FROM ndbinfo.threads")}
    cols = ", ".join(col for _, col in CPUSTAT_MODES)
    rows = ctx.query(f"SELECT node_id, thr_no, {cols} FROM ndbinfo.cpustat")
    f = fam.gauge("ndb_thread_cpu_percent", "Percent of the last second the thread spent per"
                  " mode (cpustat joined to threads).", [*LABELS, "mode"])
    modes = [(k, f',mode="{mode}"') for k, (mode, _) in enumerate(CPUSTAT_MODES, 2)]
    for r in rows:
        name = names.get((r[0], r[1]))
        if name is None:
            continue  # a thread `threads` does not list (yet): the join dropped it too
        base = body(LABELS, (r[0], r[1], name))  # rendered once, shared by its 8 samples
        for k, mode in modes:
            f.add_body(base + mode, r[k])


def collect_threadstat(ctx: Context, fam: Families) -> None:
    rows = ctx.query("SELECT node_id, thr_no, thr_nm, os_ru_utime, os_ru_stime, c_exec"
                     " FROM ndbinfo.threadstat")
    cpu = fam.counter("ndb_thread_cpu_seconds_total", "CPU seconds the thread used since the"
                      " data node started (threadstat os_ru_utime/os_ru_stime).",
                      [*LABELS, "mode"])
    sig = fam.counter("ndb_thread_signals_executed_total", "Signals the thread executed"
                      " (threadstat.c_exec).", LABELS)
    for r in rows:
        thread = body(LABELS, r[:3])
        for k, mode in ((3, ',mode="user"'), (4, ',mode="system"')):
            us = num(r[k])
            if us is not None:
                cpu.add_body(thread + mode, us / 1e6)
        sig.add_body(thread, r[5])


COLLECTORS = [
    Collector("cpustat", "cpustat + threads: CPU percent per thread and mode",
              ("cpustat", "threads"), collect_cpustat),
    Collector("threadstat", "threadstat: CPU seconds and signals per thread",
              ("threadstat",), collect_threadstat),
]
