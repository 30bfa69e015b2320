"""Scrape targets derived from the description, as Prometheus HTTP service discovery.

Each job's list is what its exporter probes, in the multi-target pattern of
mysqld_exporter and blackbox_exporter: the target is the thing probed (a node's mysqld, an
NDB cluster's name), and the scrape config moves it into a URL parameter and points
`__address__` at the exporter. The output is the target-group JSON of Prometheus' HTTP SD
and file SD (`[{"targets": [...], "labels": {...}}]`; prometheus/prometheus
docs/http_sd.md), which VictoriaMetrics' `http_sd_configs` and `file_sd_configs` read too.

Labels (the contract the rules and dashboards rely on): `cluster` on every target, `node`
on a node's target, `simulated="true"` on the lab's NDB simulator, and the option-file
section to log in with as `__param_auth_module` (mysqld_exporter's `/probe?auth_module=`,
prometheus/mysqld_exporter probe.go v0.17.2).
"""

from __future__ import annotations

from clusterscope_inventory.description import Cluster, Description, Node

# job name -> what it lists. The names are the `job` label the rules select on.
JOBS = ("galera", "ndb_sql", "ndbinfo", "node")
# The deployment's own optional services, listed only when the description needs them
# (the tracker when a Galera node has a log, ndbinfo_exporter's own metrics when there is an
# NDB cluster, the change detector when a node has a mysqld to read) or when configured
# (the loadgen): a service that is not deployed then has no
# target, so no "down" alert, and one that is needed but missing shows as down.
STACK_JOBS = ("galera_tracker", "ndbinfo_exporter", "loadgen", "clusterscope_changes")


def _labels(c: Cluster, n: Node | None = None) -> dict[str, str]:
    labels = {"cluster": c.name}
    if n is not None:
        labels["node"] = n.name
    if c.simulated:
        labels["simulated"] = "true"
    return labels


def stack_targets(desc: Description, job: str, address: str | None) -> list[dict]:
    """The target of one of the deployment's own services, if it is needed and known."""
    if job not in STACK_JOBS:
        raise KeyError(job)
    needed = {"galera_tracker": any(c.kind == "galera" and any(n.log for n in c.mysqld_nodes)
                                    for c in desc.clusters),
              "ndbinfo_exporter": bool(desc.of_kind("ndb")),
              "loadgen": True,
              "clusterscope_changes": any(c.mysqld_nodes for c in desc.clusters)}[job]
    return [{"targets": [address], "labels": {}}] if needed and address else []


def targets(desc: Description, job: str) -> list[dict]:
    """The target groups of one job (KeyError for a job that does not exist)."""
    if job not in JOBS:
        raise KeyError(job)
    groups: list[dict] = []
    for c in desc.clusters:
        if job == "ndbinfo" and c.kind == "ndb":
            # one target per NDB cluster: the exporter reads it through its SQL nodes
            groups.append({"targets": [c.name], "labels": _labels(c)})
            continue
        for n in c.nodes:
            if job == "galera" and c.kind == "galera" and n.role == "galera" \
                    or job == "ndb_sql" and c.kind == "ndb" and n.role == "sql":
                groups.append({"targets": [n.address], "labels": {
                    **_labels(c, n), "__param_auth_module": n.credentials}})
            elif job == "node" and n.node_exporter:
                groups.append({"targets": [n.node_exporter],
                               "labels": {**_labels(c, n), "role": n.role}})
    return groups
