"""The hosts under the databases (node_exporter, job `node`): a row of panels for the node
dashboards, each drawing the quantity its host alert judges, with the alert's line."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard as dash

from clusterscope.dashboards import kit
from clusterscope.rules.rules_config import shared

CFG = shared()["host"]


def host_row(d: dash.Dashboard, selector: str, legend: str) -> None:
    """Disk, memory and CPU of the hosts `selector` picks (labels cluster, node, role);
    `legend` names a series (e.g. "{{node}}")."""
    d.with_row(dash.Row("Host (node_exporter)"))
    d.with_panel(kit.share(
        "Filesystem used", "Used share of each writable filesystem on the node's host"
        " (1 - cluster_node_mountpoint:node_filesystem_avail:ratio); red: HostFilesystemAlmostFull"
        " (HostFilesystemFillingUp looks at the trend, predict_linear over"
        f" {CFG['filesystem_predict_window']}).",
        kit.q(f"1 - cluster_node_mountpoint:node_filesystem_avail:ratio{{{selector}}}",
              f"{legend} {{{{mountpoint}}}}"),
        threshold=1 - CFG["filesystem_free_ratio_min"]))
    d.with_panel(kit.share(
        "Memory used", "1 - MemAvailable / MemTotal of the node's host"
        " (cluster_node:node_memory_available:ratio); red: HostMemoryLow.",
        kit.q(f"1 - cluster_node:node_memory_available:ratio{{{selector}}}", legend),
        threshold=1 - CFG["memory_available_ratio_min"]))
    d.with_panel(kit.share(
        "CPU busy", f"Share of CPU time not idle, averaged over {CFG['cpu_avg_over']}"
        " (cluster_node:node_cpu_busy:ratio_avg5m); red: HostCpuBusy.",
        kit.q(f"cluster_node:node_cpu_busy:ratio_avg5m{{{selector}}}", legend),
        threshold=CFG["cpu_busy_ratio_max"]))
