"""Loki and promtail in the lab: the cluster's logs, searchable by {cluster, node, component}.

Loki runs as one binary with filesystem storage under `<lab>/loki`; promtail (the shipper:
a maintained one, built from the same Loki module, see clusterscope/tools.py) tails every
service's log and ships it. Promtail finds its files through `file_sd_configs`, and
`refresh(lab)` rewrites that targets file atomically when services come or go, so promtail
picks the change up without a restart and without re-reading what it already shipped.

The monitoring part calls `up(lab)` from its up() and `refresh(lab)` from after_lab_change().
Neither is needed by an exporter: Loki down only delays the logs (promtail retries and keeps
its read positions), it never stops the metrics.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from clusterscope import log_formats as lf
from clusterscope import tools
from clusterscope.lab.core import Lab, LabError, Service

PART = "monitoring"
LOKI = "loki"
PROMTAIL = "promtail"
TARGETS_FILE = "targets.json"


def loki_url(lab: Lab) -> str:
    return f"http://127.0.0.1:{lab.port(LOKI)}"


# -- Loki -----------------------------------------------------------------------------------
def loki_config(lab: Lab) -> dict:
    return loki_config_at(lab.path("loki"), "127.0.0.1", lab.port(LOKI), lab.port("loki-grpc"))


def loki_config_at(home: Path, listen: str, http_port: int, grpc_port: int) -> dict:
    """Loki's single-binary configuration (the lab's, and compose's with its own paths)."""
    return {
        "auth_enabled": False,
        "analytics": {"reporting_enabled": False},
        "server": {
            "http_listen_address": listen, "http_listen_port": http_port,
            "grpc_listen_address": listen, "grpc_listen_port": grpc_port,
            "log_level": "warn",
        },
        "common": {
            "instance_addr": "127.0.0.1",
            "path_prefix": str(home),
            "replication_factor": 1,
            "ring": {"kvstore": {"store": "inmemory"}},
            "storage": {"filesystem": {"chunks_directory": str(home / "chunks"),
                                       "rules_directory": str(home / "rules")}},
        },
        "ingester": {
            # A lab Loki is alone in its ring: ready at once, and the WAL keeps what it
            # held in memory across a crash.
            "lifecycler": {"min_ready_duration": "0s", "final_sleep": "0s"},
            "wal": {"enabled": True, "dir": str(home / "wal")},
        },
        # Alone, Loki finds its own query scheduler without the scheduler ring; with the
        # ring it waits ~10 s for the ring to settle before it is ready.
        "query_scheduler": {"use_scheduler_ring": False},
        "schema_config": {"configs": [{
            "from": "2024-01-01", "store": "tsdb", "object_store": "filesystem",
            "schema": "v13", "index": {"prefix": "index_", "period": "24h"},
        }]},
        "limits_config": {
            "reject_old_samples": True, "reject_old_samples_max_age": "168h",
            # a restart burst or a catch-up after Loki was down must not be throttled
            "ingestion_rate_mb": 16, "ingestion_burst_size_mb": 32,
            "allow_structured_metadata": True, "volume_enabled": True,
        },
        "query_range": {"results_cache": {"cache": {"embedded_cache": {
            "enabled": True, "max_size_mb": 32}}}},
        "compactor": {"working_directory": str(home / "compactor")},
    }


def _http_ok(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _wait_http(url: str, timeout: float, alive) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _http_ok(url):
            return
        if not alive():
            raise LabError(f"the process meant to serve {url} exited")
        time.sleep(0.5)
    raise LabError(f"{url} not ready after {timeout:.0f} s")


def start_loki(lab: Lab) -> Service:
    binary = _binary(LOKI)
    config = lab.path("loki") / "loki.yaml"
    _write_yaml(config, loki_config(lab))
    url = loki_url(lab)
    if not lab.running(LOKI):
        lab.require_free(lab.port("loki-grpc"), "loki-grpc")
    return lab.spawn(
        LOKI, PART, f"Loki {tools.LOKI_VERSION} (single binary, filesystem storage)",
        [str(binary), f"-config.file={config}"], port=lab.port(LOKI), cwd=lab.path("loki"),
        extra={"url": url, "config": str(config), "data": str(lab.path("loki")),
               "grpc_port": lab.port("loki-grpc")},
        wait_ready=lambda: _wait_http(f"{url}/ready", 120, lambda: lab.running(LOKI)))


# -- promtail -------------------------------------------------------------------------------
def _local_zone() -> str:
    """The zone the lab's MariaDB and simulator write their local times in: the machine's,
    which Go (promtail runs here too) calls `Local`."""
    return "Local"


def format_stages(fmt: str, zone: str | None, selector: str) -> list[dict]:
    """Promtail stages that parse one format (applied only to lines it selects)."""
    spec = lf.FORMATS[fmt]
    inner: list[dict] = [{"regex": {"expression": spec["regex"]}}]
    if spec.get("timestamp_template"):
        inner.append({"template": {"source": spec["timestamp_source"],
                                   "template": lf.timestamp_template(fmt)}})
    if spec.get("layout"):
        ts: dict = {"source": spec["timestamp_source"], "format": spec["layout"],
                    "action_on_failure": "skip"}
        if spec.get("local_time") and zone:
            ts["location"] = zone
        inner.append({"timestamp": ts})
    inner.append({"template": {"source": "level", "template": lf.level_template()}})
    inner.append({"labels": {"level": "level"}})
    if spec.get("labels"):
        # an empty capture would become an empty label: label only the lines that have it
        has_them = _logql_string(spec["labels_select"])
        inner.append({"match": {"selector": f"{{{selector}}} |~ {has_them}",
                                "stages": [{"labels": spec["labels"]}]}})
    return inner


def _logql_string(text: str) -> str:
    # promtail's match selector takes no backtick strings: quote and escape
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def pipeline_stages(zone: str | None = "Local") -> list[dict]:
    """The whole pipeline: per component, the formats its log may hold."""
    stages: list[dict] = []
    for component, firstline in lf.MULTILINE_FIRSTLINE.items():
        stages.append({"match": {"selector": f'{{component="{component}"}}', "stages": [
            {"multiline": {"firstline": firstline, "max_wait_time": lf.MULTILINE_MAX_WAIT}}]}})
    known = "|".join(sorted(lf.COMPONENT_FORMATS))
    per_component = [(f'component="{c}"', fmts) for c, fmts in lf.COMPONENT_FORMATS.items()]
    for selector, fmts in [*per_component, (f'component!~"{known}"', lf.DEFAULT_FORMATS)]:
        for fmt in fmts:
            line_filter = _logql_string(lf.FORMATS[fmt]["regex"])
            stages.append({"match": {
                "selector": f"{{{selector}}} |~ {line_filter}",
                "stages": format_stages(fmt, zone, selector)}})
    return stages


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
            "pipeline_stages": pipeline_stages(_local_zone()),
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
        PROMTAIL, PART, f"promtail {tools.LOKI_VERSION} shipping the lab's logs to Loki",
        [str(binary), f"-config.file={config}"], port=port, cwd=home,
        extra={"config": str(config), "targets": str(home / TARGETS_FILE),
               "scrape": {"job": "promtail", "path": "/metrics", "labels": {}}},
        wait_ready=lambda: _wait_http(f"http://127.0.0.1:{port}/ready", 60,
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
        return tools.build(tools.TOOLS[name])
    except tools.ToolError as exc:
        raise LabError(f"{name}: {exc}") from exc


def _write_yaml(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False, width=1000))
    tmp.replace(path)
