"""VictoriaLogs and the OpenTelemetry Collector in the lab: the clusters' logs, searchable by
{cluster, node, component, level}.

VictoriaLogs (one binary, `<lab>/victoria-logs`, retention RETENTION) stores the lines; the
collector (this repository's distribution, compose/otelcol/) tails the log files and ships them.
Its configuration comes from clusterscope_logs.collector.shipper_config: the log sources of
the lab's description (clusterscope/lab/lab_description.py: each Galera node's error log,
garbd's, the NDB cluster log) plus every lab service's own log. `refresh(lab)` rewrites the
configuration when services come or go and sends the collector SIGHUP: it reloads without a
restart, and its read offsets (file_storage) make it go on where it stopped.

The monitoring part calls `up(lab)` from its up() and `refresh(lab)` from
after_lab_change(). Neither is needed by an exporter: VictoriaLogs down only delays the logs
(the collector keeps its queue on disk and retries), it never stops the metrics.
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from clusterscope_inventory.description import LogSource
from clusterscope_logs import collector
from clusterscope_logs import formats as lf

from clusterscope import gotools
from clusterscope.lab import lab_description
from clusterscope.lab.core import Lab, LabError, Service, wait_http
from clusterscope.logs.vlogs_args import vlogs_args

PART = "monitoring"
VLOGS = "victoria-logs"
OTELCOL = "otelcol"
# The lab's log retention (compose's is VLOGS_RETENTION, 30d by default): a week of a lab's
# logs is what its tests and demos look back on.
RETENTION = "7d"
# The lab's parts -> the `cluster` of their logs (a lab service that belongs to no
# cluster, such as VictoriaMetrics itself, is filed under DEFAULT_CLUSTER)
CLUSTERS = {"galera": "lab-galera", "ndb": "lab-ndb"}
DEFAULT_CLUSTER = "lab"


def vlogs_url(lab: Lab) -> str:
    return f"http://127.0.0.1:{lab.port(VLOGS)}"


# -- VictoriaLogs ---------------------------------------------------------------------------
def start_vlogs(lab: Lab, retention: str = RETENTION) -> Service:
    binary = _binary(VLOGS)
    data = lab.path("victoria-logs")
    url = vlogs_url(lab)
    return lab.spawn(
        VLOGS, PART, f"VictoriaLogs {gotools.VLOGS_VERSION} (retention {retention})",
        [str(binary), *vlogs_args(data, f"127.0.0.1:{lab.port(VLOGS)}", retention)],
        port=lab.port(VLOGS), cwd=data,
        extra={"url": url, "data": str(data), "retention": retention,
               "scrape": {"job": "victorialogs", "path": "/metrics", "labels": {}}},
        wait_ready=lambda: wait_http(f"{url}/health", 60, lambda: lab.running(VLOGS)))


# -- what is shipped ------------------------------------------------------------------------
def component_of(service_name: str) -> str:
    """`mysqld-exporter-node2` -> `mysqld-exporter`; `galera-node1` -> `mariadb`."""
    if re.fullmatch(r"galera-node\d+", service_name):
        return lf.MARIADB
    return re.sub(r"-node\d+$", "", service_name)


def _cluster_of(s: Service) -> str:
    labels = (s.extra.get("scrape") or {}).get("labels") or {}
    return labels.get("cluster") or CLUSTERS.get(s.part, DEFAULT_CLUSTER)


def lab_sources(lab: Lab, services: list[Service]) -> list[LogSource]:
    """The log sources of the lab's description (clusterscope/lab/lab_description.py: each
    Galera node's error log, garbd's, the simulated NDB cluster log), as a user's
    description gives them; plus the error or cluster log of a running service the
    description does not list (a test's stand-in node), in the machine's zone, which the
    lab's description gives as its clusters' log_timezone."""
    out = lab_description.write(lab).log_sources() if (
        lab.settings("galera") or lab.settings("ndb")) else []
    zone = lab_description.machine_timezone()
    described = {s.path for s in out}
    for s in services:
        if s.extra.get("error_log") and s.extra["error_log"] not in described:
            out.append(LogSource(_cluster_of(s), s.extra.get("node") or s.name, lf.MARIADB,
                                 s.extra["error_log"], zone, s.simulated))
        if s.extra.get("cluster_log") and s.extra["cluster_log"] not in described:
            # the reporting node comes from each line (`-- Node 2: ...`)
            out.append(LogSource(_cluster_of(s), "mgmd", lf.NDB_MGMD, s.extra["cluster_log"],
                                 zone, s.simulated))
    return out


def service_streams(services: list[Service]) -> list[collector.Stream]:
    """Every lab service's own log (exporters, VictoriaMetrics, ...), severity parsed, in
    the machine's zone."""
    zone = lab_description.machine_timezone()
    out = []
    for s in services:
        labels = {"cluster": _cluster_of(s), "component": component_of(s.name),
                  "service": s.name}
        if s.extra.get("node"):
            labels["node"] = s.extra["node"]
        if s.simulated:
            labels["simulated"] = "true"
        out.append(collector.Stream(s.log, labels["component"], labels, zone,
                                    daemon=labels["component"] != lf.MARIADB))
        if s.extra.get("changes_file"):  # the change detector's lines, one per change step
            out.append(collector.changes_stream(s.extra["changes_file"]))
    return out


def collector_config(lab: Lab, services: list[Service] | None = None) -> dict:
    services = [s for s in (lab.services() if services is None else services)
                if s.name != OTELCOL]
    return collector.shipper_config(
        lab_sources(lab, services), endpoint=vlogs_url(lab) + collector.VLOGS_OTLP_PATH,
        storage_dir=str(lab.path("otelcol", "storage")),
        health_endpoint=f"127.0.0.1:{lab.port('otelcol-health')}",
        metrics_host="127.0.0.1", metrics_port=lab.port(OTELCOL),
        extra=service_streams(services))


def config_path(lab: Lab) -> Path:
    return lab.path("otelcol") / "otelcol.yaml"


def refresh(lab: Lab) -> bool:
    """Rewrite the collector's configuration from the lab's services; when it changed and
    the collector runs, SIGHUP makes it reload (no restart, offsets kept). True: changed."""
    path = config_path(lab)
    text = collector.render(collector_config(lab))
    if path.exists() and path.read_text() == text:
        return False
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    svc = lab.service(OTELCOL)
    if svc is not None and lab.running(OTELCOL):
        os.kill(svc.pid, signal.SIGHUP)
    return True


def start_otelcol(lab: Lab) -> Service:
    binary = _binary(OTELCOL)
    if not lab.running(OTELCOL):
        lab.require_free(lab.port("otelcol-health"), "otelcol-health")
    refresh(lab)
    health = f"http://127.0.0.1:{lab.port('otelcol-health')}/"
    return lab.spawn(
        OTELCOL, PART, f"OpenTelemetry Collector {gotools.OTELCOL_VERSION} shipping the lab's"
        " logs to VictoriaLogs", [str(binary), f"--config={config_path(lab)}"],
        port=lab.port(OTELCOL), cwd=lab.path("otelcol"),
        extra={"config": str(config_path(lab)), "health": health,
               "scrape": {"job": "otelcol", "path": "/metrics", "labels": {}}},
        wait_ready=lambda: wait_http(health, 60, lambda: lab.running(OTELCOL)))


def up(lab: Lab, retention: str = RETENTION) -> None:
    """Start VictoriaLogs and the collector (idempotent); builds them first if needed."""
    start_vlogs(lab, retention)
    start_otelcol(lab)
    refresh(lab)


def down(lab: Lab) -> None:
    lab.stop(OTELCOL)
    lab.stop(VLOGS)


# -- helpers --------------------------------------------------------------------------------
def _binary(name: str) -> Path:
    """The cached binary; on a fresh machine it is built first (minutes, once)."""
    try:
        return gotools.build(gotools.TOOLS[name])
    except gotools.ToolError as exc:
        raise LabError(f"{name}: {exc}") from exc
