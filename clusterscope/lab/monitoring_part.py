"""The lab's monitoring: VictoriaMetrics, vmalert, Alertmanager, a webhook receiver, and the
logs (VictoriaLogs, the OpenTelemetry Collector, a second vmalert for the log rules).

- VictoriaMetrics single-node scrapes every lab service that declares `extra["scrape"]`
  (the scrape contract) every 5 s. `after_lab_change` rewrites its scrape file, which VM
  re-reads by itself (`-promscrape.configCheckInterval`), so no restart loses samples.
- vmalert evaluates the rules generated from rules/config.yaml (with LAB_RULE_OVERRIDES)
  every 5 s, writes recording rules and
  alert state back to VM (remote write) and restores alert state from it (remote read).
- Alertmanager routes every severity to its own path of the local webhook receiver, which
  appends each notification to `<lab>/monitoring/notifications.jsonl` (what tests and the
  demo read). Its configuration is rendered by the inventory from the lab description's
  `alerting:` section (clusterscope/lab/lab_description.py), as in compose.
- The door (clusterscope/lab/door_service.py): vmauth in front of all of these, with the
  routes compose publishes; the toolkit reaches VictoriaMetrics and VictoriaLogs through it.
- The logs: clusterscope.lab.logs_stack; `vmalert-logs` evaluates the LogsQL rules (rules/vlogs/,
  `type: vlogs` groups) against VictoriaLogs, with the same remote write, remote read and
  Alertmanager as vmalert (one vmalert has one datasource).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import yaml

from clusterscope import gotools
from clusterscope.deploy import scrape as contract
from clusterscope.deploy.scrape import SCRAPE_INTERVAL, SCRAPE_TIMEOUT
from clusterscope.lab import (
    change_detector,
    door_service,
    exporters,
    lab_description,
    logs_stack,
)
from clusterscope.lab.core import Lab, LabError, Service, wait_http
from clusterscope.lab.webhook import read_notifications
from clusterscope.paths import REPO

NAME = "monitoring"
HELP = ("VictoriaMetrics scraping the lab, vmalert with rules/, Alertmanager -> webhook,"
        " VictoriaLogs with the OpenTelemetry Collector")
VM, VMALERT, AM, WEBHOOK = "victoria-metrics", "vmalert", "alertmanager", "webhook"
NODE_EXPORTER = "node-exporter"
# Debian's prometheus-node-exporter (make setup installs it); the collectors the host
# rules and panels read, not every default one (the lab shares a small machine)
NODE_EXPORTER_BIN = "/usr/bin/prometheus-node-exporter"
NODE_COLLECTORS = ("filesystem", "meminfo", "cpu", "loadavg", "vmstat", "diskstats")
VMALERT_LOGS = "vmalert-logs"
INVENTORY = "inventory"
EVAL_INTERVAL = "5s"
# The lab's vmalert runs the rules generated from rules/config.yaml with one change: the
# simulator plays restarts --time-scale times faster, so completions minutes apart in
# cluster time come seconds apart here, and the event window shrinks to match.
# The host alerts' waits shrink too, so a filled test filesystem alerts within a minute,
# and so does the lock-wait-timeout alert's, so the simulator's hot row alerts within one.
LAB_RULE_OVERRIDES = {"ndb": {"restart_event_window": "20s", "lock_wait_timeouts_for": "20s"},
                      "host": {"filesystem_filling_for": "20s", "filesystem_full_for": "20s"}}


def write_rules(lab: Lab) -> str:
    """The lab's rule files (generated, with LAB_RULE_OVERRIDES); the glob of the metric
    rules (the log rules are in the vlogs/ directory below it: LOG_RULES)."""
    from clusterscope.rules import generate
    from clusterscope.rules.rules_config import load_config

    c = load_config()
    for section, values in LAB_RULE_OVERRIDES.items():
        c[section] = {**c[section], **values}
    out = lab.path("monitoring", "rules")
    for name, text in generate.render_files(c).items():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(text)
        tmp.replace(target)  # vmalert re-reads them; never a half-written file
    return str(out / "*.yml")


def log_rules_glob(lab: Lab) -> str:
    from clusterscope.rules.generate import LOG_RULES_DIR

    return str(lab.path("monitoring", "rules") / LOG_RULES_DIR / "*.yml")



def service_url(lab: Lab, name: str) -> str:
    return f"http://127.0.0.1:{lab.port(name)}"


def notifications_file(lab: Lab) -> Path:
    return lab.path("monitoring") / "notifications.jsonl"


# -- scrape config ---------------------------------------------------------------------------
def scrape_config(services: list[Service], lab: Lab | None = None) -> dict:
    """Every lab service that declares `extra["scrape"]`, and, with the inventory up, the
    jobs that follow the lab's description (as compose/config/scrape.yml has them)."""
    jobs: dict[str, list[dict]] = {}
    for s in services:
        spec = (s.extra or {}).get("scrape")
        if not spec or s.port is None:
            continue
        labels = {k: str(v) for k, v in (spec.get("labels") or {}).items()}
        if s.simulated:
            labels.setdefault("simulated", "true")
        jobs.setdefault(spec["job"], []).append({
            "path": spec.get("path", "/metrics"),
            "static": {"targets": [f"{s.host}:{s.port}"], "labels": labels}})
    configs = []
    for job, entries in sorted(jobs.items()):
        by_path: dict[str, list[dict]] = {}
        for e in entries:
            by_path.setdefault(e["path"], []).append(e["static"])
        for i, (path, statics) in enumerate(sorted(by_path.items())):
            configs.append({"job_name": job if i == 0 else f"{job}_{i}",
                            "metrics_path": path, "static_configs": statics})
    if lab is not None and any(s.name == INVENTORY for s in services):
        configs += contract.described_jobs(
            service_url(lab, INVENTORY),
            {"mysqld_exporter": f"127.0.0.1:{lab.port(exporters.MYSQLD_EXPORTER)}",
             "ndbinfo_exporter": f"127.0.0.1:{lab.port('ndb-exporter')}"})
    return {"global": {"scrape_interval": SCRAPE_INTERVAL, "scrape_timeout": SCRAPE_TIMEOUT},
            "scrape_configs": configs}


def write_scrape_config(lab: Lab) -> Path:
    path = lab.path("monitoring") / "scrape.yml"
    text = yaml.safe_dump(scrape_config(lab.services(), lab), sort_keys=False)
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)  # VM re-reads it; a half-written file is never seen
    return path


def alertmanager_config_file(lab: Lab) -> Path:
    return lab.path("monitoring") / "alertmanager.yml"


# -- up/down ---------------------------------------------------------------------------------
def _ready(lab: Lab, name: str, url: str) -> Callable[[], None]:
    return lambda: wait_http(url, 60, lambda: lab.running(name))


def _binary(name: str) -> str:
    """The release compose pins, built from its Go module (clusterscope/gotools.py): the
    lab proves the scrape config, rules and dashboards on the version users run."""
    try:
        return str(gotools.build(gotools.TOOLS[name]))
    except gotools.ToolError as exc:
        raise LabError(f"monitoring: {exc}") from exc


def start_inventory(lab: Lab) -> None:
    """The description as service discovery and metrics, and Alertmanager's configuration
    from its `alerting:` section, as compose runs it (short waits: the lab and its tests
    want notifications within seconds)."""
    lab_description.write(lab)
    port = lab.port(INVENTORY)
    lab.spawn(INVENTORY, NAME, "clusterscope inventory: the description as HTTP service"
              " discovery and metrics, and Alertmanager's configuration",
              [sys.executable, "-m", "clusterscope_inventory",
               "--config.file", str(lab_description.path(lab)),
               "--web.listen-address", f"127.0.0.1:{port}",
               "--alertmanager.config-file", str(alertmanager_config_file(lab)),
               "--alertmanager.secrets-dir", str(lab_description.alerting_dir(lab)),
               "--alertmanager.url", service_url(lab, AM),
               "--alertmanager.group-wait", "1s", "--alertmanager.group-interval", "5s",
               "--probes.backend",
               f"127.0.0.1:{lab.port(exporters.MYSQLD_EXPORTER_BACKEND)}"],
              port=port,
              extra={"url": service_url(lab, INVENTORY),
                     "scrape": {"job": contract.INVENTORY_JOB, "path": "/metrics",
                                "labels": {}}},
              wait_ready=_ready(lab, INVENTORY, f"{service_url(lab, INVENTORY)}/-/ready"))


def start_node_exporter(lab: Lab) -> None:
    """The lab's one host: every node of the description names it (`node_exporter:`) and
    VictoriaMetrics takes it from the inventory's /sd/node, as in compose."""
    if not Path(NODE_EXPORTER_BIN).exists():
        raise LabError(f"monitoring: {NODE_EXPORTER_BIN} is missing: `apt-get install"
                       " prometheus-node-exporter` (make setup installs it)")
    port = lab.port(NODE_EXPORTER)
    lab.spawn(NODE_EXPORTER, NAME, "node_exporter: the lab host's disks, memory and CPU",
              [NODE_EXPORTER_BIN, f"--web.listen-address=127.0.0.1:{port}",
               "--collector.disable-defaults",
               *[f"--collector.{c}" for c in NODE_COLLECTORS]],
              port=port, extra={"url": f"http://127.0.0.1:{port}"},
              wait_ready=_ready(lab, NODE_EXPORTER, f"http://127.0.0.1:{port}/metrics"))


def up(lab: Lab, args: argparse.Namespace) -> None:
    home = lab.path("monitoring")
    retention = getattr(args, "retention", None) or "30d"
    start_node_exporter(lab)
    start_inventory(lab)
    scrape = write_scrape_config(lab)
    vm_port = lab.port(VM)
    vm_url = service_url(lab, VM)
    lab.spawn(VM, NAME, "VictoriaMetrics single-node (scrapes the lab every 5 s)",
              [_binary("victoria-metrics"), f"-storageDataPath={home / 'vm-data'}",
               f"-httpListenAddr=127.0.0.1:{vm_port}", f"-retentionPeriod={retention}",
               "-search.latencyOffset=1s", f"-promscrape.config={scrape}",
               "-promscrape.configCheckInterval=5s",
               # a node added to the description is scraped within seconds in the lab
               "-promscrape.httpSDCheckInterval=5s", "-loggerLevel=WARN"],
              port=vm_port,
              extra={"url": vm_url, "query": f"{vm_url}/api/v1/query",
                     "scrape_config": str(scrape),
                     "scrape": {"job": "victoriametrics", "path": "/metrics", "labels": {}}},
              wait_ready=_ready(lab, VM, f"{vm_url}/health"))

    wh_port = lab.port(WEBHOOK)
    out = notifications_file(lab)
    lab.spawn(WEBHOOK, NAME, "webhook receiver recording Alertmanager notifications",
              [sys.executable, "-m", "clusterscope.lab.webhook",
               "--listen", f"127.0.0.1:{wh_port}", "--out", str(out),
               "--runbooks", str(REPO / "runbooks"), "--vmalert", service_url(lab, VMALERT)],
              port=wh_port, extra={"notifications": str(out)},
              wait_ready=_ready(lab, WEBHOOK, f"{service_url(lab, WEBHOOK)}/"))

    am_port = lab.port(AM)
    am_cfg = alertmanager_config_file(lab)  # written by the inventory
    lab.spawn(AM, NAME, "Alertmanager routing every alert to the webhook receiver",
              [_binary("alertmanager"), f"--config.file={am_cfg}",
               f"--storage.path={home / 'alertmanager-data'}",
               f"--web.listen-address=127.0.0.1:{am_port}",
               "--cluster.listen-address=",  # no gossip port: one local instance
               f"--web.external-url={service_url(lab, AM)}"],
              port=am_port,
              extra={"url": service_url(lab, AM), "config": str(am_cfg),
                     "scrape": {"job": "alertmanager", "path": "/metrics", "labels": {}}},
              wait_ready=_ready(lab, AM, f"{service_url(lab, AM)}/-/ready"))

    va_port = lab.port(VMALERT)
    rules_glob = write_rules(lab)
    lab.spawn(VMALERT, NAME, "vmalert evaluating rules/*.yml every 5 s",
              [_binary("vmalert"), f"-rule={rules_glob}", f"-datasource.url={vm_url}",
               # match VictoriaMetrics' -search.latencyOffset=1s (the default 30s starts
               # every alert 30 s late); CLUSTERSCOPE_VMALERT_EVAL_DELAY measures the difference
               f"-rule.evalDelay={os.environ.get('CLUSTERSCOPE_VMALERT_EVAL_DELAY', '1s')}",
               f"-remoteWrite.url={vm_url}", f"-remoteRead.url={vm_url}",
               f"-notifier.url={service_url(lab, AM)}", f"-evaluationInterval={EVAL_INTERVAL}",
               "-remoteWrite.flushInterval=1s", f"-httpListenAddr=127.0.0.1:{va_port}",
               "-configCheckInterval=10s",  # picks up rules rewritten by `lab up monitoring`
               # the links in notifications ({{ $externalURL }}, rules/config.yaml `links`):
               # the webhook serves the runbooks and sends alert sources on to vmalert
               f"-external.url={service_url(lab, WEBHOOK)}", "-loggerLevel=WARN"],
              port=va_port,
              extra={"url": service_url(lab, VMALERT), "rules": rules_glob,
                     "scrape": {"job": "vmalert", "path": "/metrics", "labels": {}}},
              wait_ready=_ready(lab, VMALERT, f"{service_url(lab, VMALERT)}/health"))

    logs_stack.up(lab, getattr(args, "logs_retention", None) or logs_stack.RETENTION)
    start_vmalert_logs(lab)
    change_detector.ensure_judge(lab)
    door_service.up(lab)
    write_scrape_config(lab)
    print(f"lab: monitoring up: VictoriaMetrics {vm_url}, vmalert {service_url(lab, VMALERT)},"
          f" Alertmanager {service_url(lab, AM)}, VictoriaLogs {logs_stack.vlogs_url(lab)},"
          f" the door {door_service.url(lab)} (credentials in {door_service.home(lab)}),"
          f" notifications in {out}", flush=True)


def start_vmalert_logs(lab: Lab) -> None:
    """vmalert for the log rules: the same flags as vmalert but the datasource, VictoriaLogs
    (VictoriaLogs v1.52.1 docs/victorialogs/vmalert.md). Each rule names its own window
    (`_time:10m`), so vmalert adds none (VictoriaMetrics v1.151.0 app/vmalert/datasource/
    client_vlogs.go: start/end only when the expression has no time filter); VictoriaLogs
    has no search latency offset, and a line is searchable once stored: 1 s of delay."""
    port = lab.port(VMALERT_LOGS)
    lab.spawn(VMALERT_LOGS, NAME, "vmalert evaluating the log rules (rules/vlogs/) against"
              " VictoriaLogs every 5 s",
              [_binary("vmalert"), f"-rule={log_rules_glob(lab)}",
               f"-datasource.url={logs_stack.vlogs_url(lab)}", "-rule.evalDelay=1s",
               f"-remoteWrite.url={service_url(lab, VM)}",
               f"-remoteRead.url={service_url(lab, VM)}",
               f"-notifier.url={service_url(lab, AM)}", f"-evaluationInterval={EVAL_INTERVAL}",
               "-remoteWrite.flushInterval=1s", f"-httpListenAddr=127.0.0.1:{port}",
               "-configCheckInterval=10s", f"-external.url={service_url(lab, WEBHOOK)}",
               "-loggerLevel=WARN"],
              port=port,
              extra={"url": service_url(lab, VMALERT_LOGS), "rules": log_rules_glob(lab),
                     "scrape": {"job": "vmalert", "path": "/metrics", "labels": {}}},
              wait_ready=_ready(lab, VMALERT_LOGS, f"{service_url(lab, VMALERT_LOGS)}/health"))


def after_lab_change(lab: Lab) -> None:
    lab_description.write(lab)
    write_scrape_config(lab)
    if lab.service(logs_stack.OTELCOL) is not None:
        logs_stack.refresh(lab)


def get_json(url: str) -> dict:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return json.loads(resp.read())
    except (urllib.error.URLError, OSError, json.JSONDecodeError) as exc:
        raise LabError(f"{url}: {exc}") from exc


def received(lab: Lab) -> list[dict]:
    """One row per alert per notification the webhook got, oldest first."""
    rows = []
    for n in read_notifications(notifications_file(lab)):
        for alert in n.get("alerts", []):
            labels = alert.get("labels", {})
            rows.append({"received_at": n["received_at"], "status": alert.get("status"),
                         "receiver": n.get("receiver"), "path": n.get("path"),
                         "alertname": labels.get("alertname"), "labels": labels,
                         "annotations": alert.get("annotations", {}),
                         "startsAt": alert.get("startsAt"), "endsAt": alert.get("endsAt")})
    return rows


def firing_now(lab: Lab) -> list[dict]:
    alerts = []
    for name in (VMALERT, VMALERT_LOGS):
        if lab.service(name) is not None:
            data = get_json(f"{service_url(lab, name)}/api/v1/alerts")
            alerts += (data.get("data") or {}).get("alerts") or []
    return [{"alertname": a.get("name"), "state": a.get("state"), "labels": a.get("labels", {}),
             "value": a.get("value"), "activeAt": a.get("activeAt")}
            for a in alerts]
