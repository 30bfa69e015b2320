# ruff: noqa: E501  (PromQL reads better unbroken)
"""Host rules: the disks, memory and CPU of the machines the clusters run on, from
node_exporter (job `node`, one target per node of the description that names its
`node_exporter`, labelled with the node's cluster, name and role).

The thresholds follow node_exporter's own mixin (prometheus/node_exporter
docs/node-mixin/alerts/alerts.libsonnet: a filesystem predicted to fill within hours and
already below a free share, read-only ones left out; almost full below 5 %) and PMM's host
templates (node_low_free_memory, node_high_cpu_load).
"""

from __future__ import annotations

from clusterscope.rules.rule_model import Alert, Group, Runbook, seconds

FIRST_STEPS = """First, on the host (its `node` and `role` labels name the node of the
description it serves):

```sh
df -h; df -i                      # space and inodes per filesystem
free -m; vmstat 5 5               # memory, swap in/out (si/so), run queue
top -o %CPU                       # who uses the CPU
```

The node's own logs (an NDB data node's `ndb_<id>_out.log`, a Galera node's error log) say
whether the database noticed (`No space left on device`, a watchdog warning)."""



def groups(c: dict) -> list[Group]:
    h = c["host"]
    sel = f'{c["selectors"]["host"]},{c["selectors"]["host_filesystems"]}'
    host = c["selectors"]["host"]
    avail = f"node_filesystem_avail_bytes{{{sel}}}"
    size = f"node_filesystem_size_bytes{{{sel}}}"
    writable = f"node_filesystem_readonly{{{sel}}} == 0"
    grp = Group("host", "host.yml", first_steps=FIRST_STEPS, records=[
        ("cluster_node_mountpoint:node_filesystem_avail:ratio", f"{avail} / {size}"),
        ("cluster_node:node_memory_available:ratio",
         f"node_memory_MemAvailable_bytes{{{host}}} / node_memory_MemTotal_bytes{{{host}}}"),
        ("cluster_node:node_cpu_busy:ratio_avg5m",
         f"1 - avg without (cpu, mode) (rate(node_cpu_seconds_total{{{host},mode=\"idle\"}}[{h['cpu_avg_over']}]))"),
    ])
    where = "{{ $labels.mountpoint }} on {{ $labels.node }} ({{ $labels.role }} of {{ $labels.cluster }})"
    grp.alerts += [
        Alert(name="HostFilesystemFillingUp",
              expr=f"{avail} / {size} < {h['filesystem_free_ratio_max_filling']}"
                   f" and predict_linear({avail}[{h['filesystem_predict_window']}],"
                   f" {seconds(h['filesystem_predict_ahead'])}) < 0 and {writable}",
              severity="warning",
              summary=f"Filesystem {where} fills within {h['filesystem_predict_ahead']}",
              description=f"At the trend of the last {h['filesystem_predict_window']}, {where} runs out of"
                          f" space within {h['filesystem_predict_ahead']}; it has"
                          " {{ $value | humanizePercentage }} free. A data node whose DataDir fills stops"
                          " writing its REDO log and checkpoints; a Galera node stops at a full datadir.",
              dashboard="host",
              for_=h["filesystem_filling_for"],
              runbook=Runbook(
                  meaning="A writable filesystem on the host of a data, SQL or Galera node has less"
                          " than 40 % free and, at the trend of the last 6 hours"
                          " (`predict_linear(node_filesystem_avail_bytes[6h], 4h)`), runs out within"
                          " 4 hours, for 30 minutes (node_exporter's mixin,"
                          " NodeFilesystemSpaceFillingUp).",
                  impact="A data node whose DataDir, FileSystemPath or BackupDataDir fills fails its"
                         " REDO and LCP writes and shuts down; a Galera node stops at a full datadir"
                         " and an SST needs the whole data set's space.",
                  diagnosis="- `du -xsh <mountpoint>/* | sort -h | tail` on the host.\n"
                            "- NDB: backups under BackupDataDir, old LCP files, `ndb_*_trace.log.*`;"
                            " Galera: binary logs, `gcache.page.*`, SST leftovers (`.sst`).",
                  mitigation="Remove or move what grows (old backups, binary logs: `PURGE BINARY"
                             " LOGS`), grow the filesystem, or move the data directory.",
                  benign="a backup or an SST writing a large file that is removed after it.")),
        Alert(name="HostFilesystemAlmostFull",
              expr=f"{avail} / {size} < {h['filesystem_free_ratio_min']} and {writable}",
              severity="critical",
              summary=f"Filesystem {where} is almost full",
              description=f"{where} has {{{{ $value | humanizePercentage }}}} free, less than"
                          f" {h['filesystem_free_ratio_min']:.0%}, for {h['filesystem_full_for']}: the"
                          " database on it is about to stop writing.",
              dashboard="host",
              for_=h["filesystem_full_for"],
              runbook=Runbook(
                  meaning="A writable filesystem on the host of a data, SQL or Galera node has had less"
                          " than 5 % free for 5 minutes (node_exporter's mixin,"
                          " NodeFilesystemAlmostOutOfSpace).",
                  impact="The database on it is about to stop writing: NDB data nodes shut down on"
                         " failed REDO/LCP writes, MariaDB stops with `Disk full` waits, an SST to"
                         " this host fails.",
                  diagnosis="- `df -h <mountpoint>`; `du -xsh <mountpoint>/* | sort -h | tail`.",
                  mitigation="Free space now (old backups, logs, binary logs), then grow the"
                             " filesystem. Do not delete database files by hand.")),
        Alert(name="HostMemoryLow",
              expr=f"node_memory_MemAvailable_bytes{{{host}}} / node_memory_MemTotal_bytes{{{host}}}"
                   f" < {h['memory_available_ratio_min']}",
              severity="warning",
              summary="Host of {{ $labels.node }} has {{ $value | humanizePercentage }} of"
                      " its memory available",
              description="The host of {{ $labels.node }} ({{ $labels.role }} of {{ $labels.cluster }}) has"
                          f" had less than {h['memory_available_ratio_min']:.0%} of its memory available"
                          f" (MemAvailable) for {h['memory_for']}: the kernel swaps or kills a process next,"
                          " and a swapping data node misses heartbeats and is thrown out of the cluster.",
              dashboard="host",
              for_=h["memory_for"],
              runbook=Runbook(
                  meaning="The host has had less than 10 % of its memory available"
                          " (`node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes`) for 10"
                          " minutes (PMM's node_low_free_memory).",
                  impact="The kernel swaps, then kills the largest process. A swapping NDB data node"
                         " misses heartbeats and is excluded from the cluster; a killed mysqld is a"
                         " Galera member lost.",
                  diagnosis="- `free -m`, `vmstat 5` (si/so: swapping), `ps aux --sort=-rss | head`.\n"
                            "- The kernel log for the OOM killer: `journalctl -k | grep -i oom`.",
                  mitigation="Stop what does not belong on the host, lower the database's memory"
                             " settings (innodb_buffer_pool_size; NDB DataMemory needs a rolling"
                             " restart), or add memory.",
                  benign="an NDB data node with `LockPagesInMainMemory` whose DataMemory takes most of"
                         " the host by design: raise the threshold for that host instead of ignoring"
                         " the alert.")),
        Alert(name="HostCpuBusy",
              expr=f"1 - avg without (cpu, mode) (rate(node_cpu_seconds_total{{{host},mode=\"idle\"}}[{h['cpu_avg_over']}]))"
                   f" > {h['cpu_busy_ratio_max']}",
              severity="warning",
              summary="Host of {{ $labels.node }} is {{ $value | humanizePercentage }} busy",
              description="The CPUs of the host of {{ $labels.node }} ({{ $labels.role }} of"
                          f" {{{{ $labels.cluster }}}}) were busy more than {h['cpu_busy_ratio_max']:.0%} of"
                          f" the time (averaged over {h['cpu_avg_over']}) for {h['cpu_for']}.",
              dashboard="host",
              for_=h["cpu_for"],
              runbook=Runbook(
                  meaning="The host's CPUs were busy (not idle) more than 90 % of the time, averaged"
                          " over 5 minutes, for 15 minutes (PMM's node_high_cpu_load).",
                  impact="Queries slow down; an NDB data node short of CPU misses heartbeats or"
                         " watchdog deadlines, a Galera node falls behind and sends flow control.",
                  diagnosis="- `top`, `pidstat 5`: which process. For NDB the per-thread view"
                            " (`ndbinfo.cpustat`, the NDB node dashboard), for Galera the slow queries.",
                  mitigation="Move the load away, give the database more cores, or pin its threads"
                             " (`ThreadConfig` for NDB).",
                  benign="a load test or a batch job you started; an NDB data node configured to spin"
                         " (`SpinMethod`, busy-waiting LDM threads count as busy).")),
    ]
    return [grp]
