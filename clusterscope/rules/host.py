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

from clusterscope.rules.model import Alert, Group, seconds


def groups(c: dict) -> list[Group]:
    h = c["host"]
    sel = f'{c["selectors"]["host"]},{c["selectors"]["host_filesystems"]}'
    host = c["selectors"]["host"]
    avail = f"node_filesystem_avail_bytes{{{sel}}}"
    size = f"node_filesystem_size_bytes{{{sel}}}"
    writable = f"node_filesystem_readonly{{{sel}}} == 0"
    grp = Group("host", "host.yml", records=[
        ("cluster_node_mountpoint:node_filesystem_avail:ratio", f"{avail} / {size}"),
        ("cluster_node:node_memory_available:ratio",
         f"node_memory_MemAvailable_bytes{{{host}}} / node_memory_MemTotal_bytes{{{host}}}"),
        ("cluster_node:node_cpu_busy:ratio_avg5m",
         f"1 - avg without (cpu, mode) (rate(node_cpu_seconds_total{{{host},mode=\"idle\"}}[{h['cpu_avg_over']}]))"),
    ])
    where = "{{ $labels.mountpoint }} on {{ $labels.node }} ({{ $labels.role }} of {{ $labels.cluster }})"
    grp.alerts += [
        Alert("HostFilesystemFillingUp",
              f"{avail} / {size} < {h['filesystem_free_ratio_max_filling']}"
              f" and predict_linear({avail}[{h['filesystem_predict_window']}],"
              f" {seconds(h['filesystem_predict_ahead'])}) < 0 and {writable}",
              "warning", f"Filesystem {where} fills within {h['filesystem_predict_ahead']}",
              f"At the trend of the last {h['filesystem_predict_window']}, {where} runs out of"
              f" space within {h['filesystem_predict_ahead']}; it has"
              " {{ $value | humanizePercentage }} free. A data node whose DataDir fills stops"
              " writing its REDO log and checkpoints; a Galera node stops at a full datadir.",
              "host", h["filesystem_filling_for"]),
        Alert("HostFilesystemAlmostFull",
              f"{avail} / {size} < {h['filesystem_free_ratio_min']} and {writable}",
              "critical", f"Filesystem {where} is almost full",
              f"{where} has {{{{ $value | humanizePercentage }}}} free, less than"
              f" {h['filesystem_free_ratio_min']:.0%}, for {h['filesystem_full_for']}: the"
              " database on it is about to stop writing.", "host", h["filesystem_full_for"]),
        Alert("HostMemoryLow",
              f"node_memory_MemAvailable_bytes{{{host}}} / node_memory_MemTotal_bytes{{{host}}}"
              f" < {h['memory_available_ratio_min']}",
              "warning", "Host of {{ $labels.node }} has {{ $value | humanizePercentage }} of"
              " its memory available",
              "The host of {{ $labels.node }} ({{ $labels.role }} of {{ $labels.cluster }}) has"
              f" had less than {h['memory_available_ratio_min']:.0%} of its memory available"
              f" (MemAvailable) for {h['memory_for']}: the kernel swaps or kills a process next,"
              " and a swapping data node misses heartbeats and is thrown out of the cluster.",
              "host", h["memory_for"]),
        Alert("HostCpuBusy",
              f"1 - avg without (cpu, mode) (rate(node_cpu_seconds_total{{{host},mode=\"idle\"}}[{h['cpu_avg_over']}]))"
              f" > {h['cpu_busy_ratio_max']}",
              "warning", "Host of {{ $labels.node }} is {{ $value | humanizePercentage }} busy",
              "The CPUs of the host of {{ $labels.node }} ({{ $labels.role }} of"
              f" {{{{ $labels.cluster }}}}) were busy more than {h['cpu_busy_ratio_max']:.0%} of"
              f" the time (averaged over {h['cpu_avg_over']}) for {h['cpu_for']}.",
              "host", h["cpu_for"]),
    ]
    return [grp]
