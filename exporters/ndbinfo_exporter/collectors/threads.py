"""CPU per block thread: `cpustat` joined to `threads` (percent of the last second) and
`threadstat` (cumulative CPU seconds). Threads are labelled by name, never by a fixed thr_no,
so `thread_name="ldm"` selects the LDM threads on every version and configuration.
"""

from __future__ import annotations

from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families, body, fill, row_sql, split_row

CPUSTAT_MODES = (("os_user", "OS_user"), ("os_system", "OS_system"), ("os_idle", "OS_idle"),
                 ("exec", "thread_exec"), ("sleeping", "thread_sleeping"),
                 ("spinning", "thread_spinning"), ("send", "thread_send"),
                 ("buffer_full", "thread_buffer_full"))
THREAD_LABELS = ("node_id", "thr_no", "thread_name")
THREAD_SQL = [("node_id", "node_id"), ("thr_no", "thr_no")]

# (row expression, FROM) for Context.lines: one text line per thread, a name last (it may
# hold a space)
SQL_THREADS = (row_sql(THREAD_SQL, ["thread_name"]), "FROM ndbinfo.threads")
SQL_CPUSTAT = (row_sql(THREAD_SQL, [col for _, col in CPUSTAT_MODES]), "FROM ndbinfo.cpustat")
# microseconds to seconds in SQL: an exact DECIMAL product, rendered by the server
SQL_THREADSTAT = (row_sql(THREAD_SQL, ["os_ru_utime * 0.000001", "os_ru_stime * 0.000001",
                                       "c_exec", "thr_nm"]), "FROM ndbinfo.threadstat")

THREAD_CPU_PERCENT = Desc("ndb_thread_cpu_percent", "Percent of the last second the thread"
                          " spent per mode (cpustat joined to threads).",
                          (*THREAD_LABELS, "mode"))
THREAD_CPU_SECONDS = Desc("ndb_thread_cpu_seconds_total", "CPU seconds the thread used since"
                          " the data node started (threadstat os_ru_utime/os_ru_stime).",
                          (*THREAD_LABELS, "mode"), counter=True)
THREAD_SIGNALS = Desc("ndb_thread_signals_executed_total", "Signals the thread executed"
                      " (threadstat.c_exec).", THREAD_LABELS, counter=True)


def collect_cpustat(ctx: Context, fam: Families) -> None:
    # Joined here, not in SQL: ndbinfo tables have no indexes, and a server without hash
    # joins (MySQL 5.7 under NDB 7.x; MariaDB in the benchmark) runs cpustat x threads as a
    # nested loop: 4.4 s at 144 data nodes x 38 threads (clusterscope bench exporter), where
    # two scans and a dict take milliseconds. Both sides key the thread by the same
    # SQL-rendered `node_id="..",thr_no=".."`.
    names = {}
    for text in ctx.lines(*SQL_THREADS):
        thread, _, name = text.partition(" ")  # the name last: it may hold a space
        names[thread] = body(("thread_name",), (name,))
    rows = []
    for text in ctx.lines(*SQL_CPUSTAT):
        r = split_row(text)
        name = names.get(r[0])
        if name is None:
            continue  # a thread `threads` does not list (yet): the join dropped it too
        r[0] = f"{r[0]},{name}"
        rows.append(r)
    f = THREAD_CPU_PERCENT.of(fam)
    fill([f] * len(CPUSTAT_MODES), rows, [f',mode="{mode}"' for mode, _ in CPUSTAT_MODES])


def collect_threadstat(ctx: Context, fam: Families) -> None:
    lines = ctx.lines(*SQL_THREADSTAT)
    cpu, sig = THREAD_CPU_SECONDS.of(fam), THREAD_SIGNALS.of(fam)
    rendered: dict[str, str] = {}
    rows = []
    for text in lines:
        # the name last: it may hold a space (NULL reads as the empty name, as before)
        thread, user, system, c_exec, thr_nm = text.split(" ", 4)
        name = rendered.get(thr_nm)
        if name is None:
            name = rendered[thr_nm] = body(("thread_name",), (thr_nm,))
        rows.append((f"{thread},{name}", user, system, c_exec))
    fill([cpu, cpu, sig], rows, [',mode="user"', ',mode="system"', ""])


COLLECTORS = [
    Collector("cpustat", "cpustat + threads: CPU percent per thread and mode",
              ("cpustat", "threads"), collect_cpustat),
    Collector("threadstat", "threadstat: CPU seconds and signals per thread",
              ("threadstat",), collect_threadstat),
]
