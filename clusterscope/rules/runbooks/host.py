# ruff: noqa: E501  (runbook text reads better unbroken)
"""Runbook text for the host alerts (node_exporter on the clusters' hosts)."""

from __future__ import annotations

FIRST_STEPS = """First, on the host (its `node` and `role` labels name the node of the
description it serves):

```sh
df -h; df -i                      # space and inodes per filesystem
free -m; vmstat 5 5               # memory, swap in/out (si/so), run queue
top -o %CPU                       # who uses the CPU
```

The node's own logs (an NDB data node's `ndb_<id>_out.log`, a Galera node's error log) say
whether the database noticed (`No space left on device`, a watchdog warning)."""

RUNBOOKS: dict[str, dict[str, str]] = {
    "HostFilesystemFillingUp": {
        "meaning": "A writable filesystem on the host of a data, SQL or Galera node has less"
                   " than 40 % free and, at the trend of the last 6 hours"
                   " (`predict_linear(node_filesystem_avail_bytes[6h], 4h)`), runs out within"
                   " 4 hours, for 30 minutes (node_exporter's mixin,"
                   " NodeFilesystemSpaceFillingUp).",
        "benign": "a backup or an SST writing a large file that is removed after it.",
        "impact": "A data node whose DataDir, FileSystemPath or BackupDataDir fills fails its"
                  " REDO and LCP writes and shuts down; a Galera node stops at a full datadir"
                  " and an SST needs the whole data set's space.",
        "diagnosis": "- `du -xsh <mountpoint>/* | sort -h | tail` on the host.\n"
                     "- NDB: backups under BackupDataDir, old LCP files, `ndb_*_trace.log.*`;"
                     " Galera: binary logs, `gcache.page.*`, SST leftovers (`.sst`).",
        "mitigation": "Remove or move what grows (old backups, binary logs: `PURGE BINARY"
                      " LOGS`), grow the filesystem, or move the data directory.",
    },
    "HostFilesystemAlmostFull": {
        "meaning": "A writable filesystem on the host of a data, SQL or Galera node has had less"
                   " than 5 % free for 5 minutes (node_exporter's mixin,"
                   " NodeFilesystemAlmostOutOfSpace).",
        "impact": "The database on it is about to stop writing: NDB data nodes shut down on"
                  " failed REDO/LCP writes, MariaDB stops with `Disk full` waits, an SST to"
                  " this host fails.",
        "diagnosis": "- `df -h <mountpoint>`; `du -xsh <mountpoint>/* | sort -h | tail`.",
        "mitigation": "Free space now (old backups, logs, binary logs), then grow the"
                      " filesystem. Do not delete database files by hand.",
    },
    "HostMemoryLow": {
        "meaning": "The host has had less than 10 % of its memory available"
                   " (`node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes`) for 10"
                   " minutes (PMM's node_low_free_memory).",
        "benign": "an NDB data node with `LockPagesInMainMemory` whose DataMemory takes most of"
                  " the host by design: raise the threshold for that host instead of ignoring"
                  " the alert.",
        "impact": "The kernel swaps, then kills the largest process. A swapping NDB data node"
                  " misses heartbeats and is excluded from the cluster; a killed mysqld is a"
                  " Galera member lost.",
        "diagnosis": "- `free -m`, `vmstat 5` (si/so: swapping), `ps aux --sort=-rss | head`.\n"
                     "- The kernel log for the OOM killer: `journalctl -k | grep -i oom`.",
        "mitigation": "Stop what does not belong on the host, lower the database's memory"
                      " settings (innodb_buffer_pool_size; NDB DataMemory needs a rolling"
                      " restart), or add memory.",
    },
    "HostCpuBusy": {
        "meaning": "The host's CPUs were busy (not idle) more than 90 % of the time, averaged"
                   " over 5 minutes, for 15 minutes (PMM's node_high_cpu_load).",
        "benign": "a load test or a batch job you started; an NDB data node configured to spin"
                  " (`SpinMethod`, busy-waiting LDM threads count as busy).",
        "impact": "Queries slow down; an NDB data node short of CPU misses heartbeats or"
                  " watchdog deadlines, a Galera node falls behind and sends flow control.",
        "diagnosis": "- `top`, `pidstat 5`: which process. For NDB the per-thread view"
                     " (`ndbinfo.cpustat`, the NDB node dashboard), for Galera the slow queries.",
        "mitigation": "Move the load away, give the database more cores, or pin its threads"
                      " (`ThreadConfig` for NDB).",
    },
}
