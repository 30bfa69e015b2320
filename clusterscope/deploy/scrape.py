"""The scrape contract shared by the lab and the Compose deployment.

Job names are what rules/config.yaml's selectors match (`job="ndbinfo"`, ...); the interval
is what the rules' windows and the dashboards' `$__rate_interval` assume.

The jobs that follow the description of what is monitored take their targets from the
inventory's HTTP service discovery (exporters/clusterscope_inventory/targets.py) and probe
them through one exporter each, in the multi-target pattern of mysqld_exporter's README
("Multi-target support"): the target moves into a URL parameter, `instance` keeps it, and
`__address__` becomes the exporter. The description's labels (`cluster`, `node`,
`simulated`, `__param_auth_module`) arrive with each target.
"""

from __future__ import annotations

from clusterscope_inventory.targets import STACK_JOBS

SCRAPE_INTERVAL = "5s"
SCRAPE_TIMEOUT = "4s"
INVENTORY_JOB = "clusterscope_inventory"

# job -> (exporter it is probed through, the URL parameter the target goes into, path)
PROBE_JOBS: dict[str, tuple[str, str, str]] = {
    "galera": ("mysqld_exporter", "target", "/probe"),
    "ndb_sql": ("mysqld_exporter", "target", "/probe"),
    "ndbinfo": ("ndbinfo_exporter", "cluster", "/probe"),
}
# scraped directly at the address the description gives (node_exporter on each host)
DIRECT_JOBS = ("node",)


def probe_relabel(exporter: str, param: str) -> list[dict]:
    return [
        {"source_labels": ["__address__"], "target_label": f"__param_{param}"},
        {"source_labels": [f"__param_{param}"], "target_label": "instance"},
        {"target_label": "__address__", "replacement": exporter},
    ]


def described_jobs(inventory: str, exporters: dict[str, str]) -> list[dict]:
    """The jobs whose targets come from the description: `inventory` is the inventory's
    base URL, `exporters` maps mysqld_exporter / ndbinfo_exporter to host:port. How often
    the targets are fetched again is VictoriaMetrics' -promscrape.httpSDCheckInterval (its
    http_sd_configs take no refresh_interval: VictoriaMetrics lib/promscrape/discovery/
    http/http.go v1.151.0, SDConfig has url and the HTTP client options only)."""
    def sd(job: str) -> list[dict]:
        return [{"url": f"{inventory}/sd/{job}"}]

    jobs = [{"job_name": job, "metrics_path": path, "http_sd_configs": sd(job),
             "relabel_configs": probe_relabel(exporters[exporter], param)}
            for job, (exporter, param, path) in PROBE_JOBS.items()]
    jobs += [{"job_name": job, "metrics_path": "/metrics", "http_sd_configs": sd(job)}
             for job in DIRECT_JOBS]
    return jobs


def stack_jobs(inventory: str) -> list[dict]:
    """The deployment's own optional services (tracker, ndbinfo_exporter's own metrics, the
    loadgen), listed by the inventory only when the description needs them or the loadgen
    is configured: what is not deployed has no target and no "down" alert."""
    return [{"job_name": job, "metrics_path": "/metrics",
             "http_sd_configs": [{"url": f"{inventory}/sd/{job}"}]} for job in STACK_JOBS]
