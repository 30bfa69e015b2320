"""Loki and promtail in the lab: the cluster's logs, searchable by {cluster, node, component}.

Loki runs as one binary with filesystem storage under `<lab>/loki`; promtail (the shipper:
a maintained one, built from the same Loki module, see clusterscope/gotools.py) tails every
service's log and ships it. Promtail finds its files through `file_sd_configs`, and
`refresh(lab)` rewrites that targets file atomically when services come or go, so promtail
picks the change up without a restart and without re-reading what it already shipped.

The monitoring part calls `up(lab)` from its up() and `refresh(lab)` from after_lab_change().
Neither is needed by an exporter: Loki down only delays the logs (promtail retries and keeps
its read positions), it never stops the metrics.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from clusterscope import gotools
from clusterscope.clients.loki import Loki, LokiError
from clusterscope.lab.core import Lab, LabError, Service, lab_dir_from_env, wait_http
from clusterscope.logs import formats as lf
from clusterscope.logs import pipeline

PART = "monitoring"
LOKI = "loki"
PROMTAIL = "promtail"
TARGETS_FILE = "targets.json"


def loki_url(lab: Lab) -> str:
    return f"http://127.0.0.1:{lab.port(LOKI)}"


def loki_client(lab_dir: str | Path | None = None) -> Loki:
    """A client for the Loki of the lab at `lab_dir` (default: the environment's)."""
    lab = Lab(lab_dir_from_env(lab_dir))
    if lab.service(LOKI) is None:
        raise LokiError(f"no Loki in the lab {lab.root}; `clusterscope lab up --monitoring`")
    return Loki(loki_url(lab))


# -- Loki -----------------------------------------------------------------------------------
def loki_config(lab: Lab) -> dict:
    return pipeline.loki_config_at(lab.path("loki"), "127.0.0.1", lab.port(LOKI),
                                   lab.port("loki-grpc"))


def start_loki(lab: Lab) -> Service:
    binary = _binary(LOKI)
    config = lab.path("loki") / "loki.yaml"
    _write_yaml(config, loki_config(lab))
    url = loki_url(lab)
    if not lab.running(LOKI):
        lab.require_free(lab.port("loki-grpc"), "loki-grpc")
    return lab.spawn(
        LOKI, PART, f"Loki {gotools.LOKI_VERSION} (single binary, filesystem storage)",
        [str(binary), f"-config.file={config}"], port=lab.port(LOKI), cwd=lab.path("loki"),
        extra={"url": url, "config": str(config), "data": str(lab.path("loki")),
               "grpc_port": lab.port("loki-grpc")},
        wait_ready=lambda: wait_http(f"{url}/ready", 120, lambda: lab.running(LOKI)))


# -- promtail -------------------------------------------------------------------------------
def _local_zone() -> str:
    """The zone the lab's MariaDB and simulator write their local times in: the machine's,
    which Go (promtail runs here too) calls `Local`."""
    return "Local"


def _cluster_of(s: Service) -> str:
    labels = (s.extra.get("scrape") or {}).get("labels") or {}
    return labels.get("cluster") or lf.CLUSTERS.get(s.part, lf.DEFAULT_CLUSTER)


def targets(services: list[Service]) -> list[dict]:
    """Promtail file_sd targets: every log file of every service, with its labels."""
    out: list[dict] = []
    seen: set[str] = set()

    def add(path: str | None, component: str, s: Service, node: str | None) -> None:
        if not path or path in seen:
            return
        seen.add(path)
        labels = {"__path__": path, "cluster": _cluster_of(s), "component": component,
                  "service": s.name}
        if node:
            labels["node"] = node
        if s.simulated:
            labels["simulated"] = "true"
        out.append({"targets": ["localhost"], "labels": labels})

    for s in services:
        node = s.extra.get("node")
        if s.extra.get("error_log"):
            add(s.extra["error_log"], lf.MARIADB, s, node)
        if s.extra.get("cluster_log"):
            # the reporting node comes from each line (`-- Node 2: ...`)
            add(s.extra["cluster_log"], lf.NDB_MGMD, s, None)
        add(s.log, lf.component_of(s.name), s, node)
    return out


def promtail_config(lab: Lab) -> dict:
    home = lab.path("promtail")
    return {
        "server": {"http_listen_address": "127.0.0.1", "http_listen_port": lab.port(PROMTAIL),
                   "grpc_listen_address": "127.0.0.1", "grpc_listen_port": 0,
                   "log_level": "warn"},
        "positions": {"filename": str(home / "positions.yaml")},
        # how soon a new file (a node's log after its first start) is found
        "target_config": {"sync_period": "2s"},
        "clients": [{
            "url": f"{loki_url(lab)}/loki/api/v1/push",
            "batchwait": "500ms",
            # Loki down: keep retrying for ~10 minutes before a batch is dropped.
            "backoff_config": {"min_period": "500ms", "max_period": "10s", "max_retries": 70},
        }],
        "scrape_configs": [{
            "job_name": "lab",
            "file_sd_configs": [{"files": [str(home / TARGETS_FILE)], "refresh_interval": "5s"}],
            "pipeline_stages": pipeline.pipeline_stages(_local_zone()),
        }],
    }


def refresh(lab: Lab) -> list[dict]:
    """Rewrite promtail's targets from the lab's services (promtail watches the file)."""
    found = targets([s for s in lab.services() if s.name not in (PROMTAIL,)])
    path = lab.path("promtail") / TARGETS_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(found, indent=2))
    tmp.replace(path)
    return found


def start_promtail(lab: Lab) -> Service:
    binary = _binary(PROMTAIL)
    home = lab.path("promtail")
    config = home / "promtail.yaml"
    _write_yaml(config, promtail_config(lab))
    refresh(lab)
    port = lab.port(PROMTAIL)
    return lab.spawn(
        PROMTAIL, PART, f"promtail {gotools.LOKI_VERSION} shipping the lab's logs to Loki",
        [str(binary), f"-config.file={config}"], port=port, cwd=home,
        extra={"config": str(config), "targets": str(home / TARGETS_FILE),
               "scrape": {"job": "promtail", "path": "/metrics", "labels": {}}},
        wait_ready=lambda: wait_http(f"http://127.0.0.1:{port}/ready", 60,
                                     lambda: lab.running(PROMTAIL)))


def up(lab: Lab) -> None:
    """Start Loki and promtail (idempotent); builds them first if they are not cached."""
    start_loki(lab)
    start_promtail(lab)
    refresh(lab)


def down(lab: Lab) -> None:
    lab.stop(PROMTAIL)
    lab.stop(LOKI)


# -- helpers --------------------------------------------------------------------------------
def _binary(name: str) -> Path:
    """The cached binary; on a fresh machine it is built first (minutes, once)."""
    try:
        return gotools.build(gotools.TOOLS[name])
    except gotools.ToolError as exc:
        raise LabError(f"{name}: {exc}") from exc


def _write_yaml(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False, width=1000))
    tmp.replace(path)
