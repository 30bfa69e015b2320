"""The inventory service: the description, re-read when it changes, served as HTTP service
discovery (`/sd/<job>`), as metrics (`/metrics`) that rules and dashboards join on, and as
the log shipper's configuration (`/config/otelcol.yaml`: the OpenTelemetry Collector reads
it with its `http` config provider, so the shipped files follow the description).

It also serves the allow-list of mysqld_exporter's probe guard (`/config/probes.yml`,
probes.py) and the door's refusal (`/door/denied`: 403 for a role's request the door does not
route, clusterscope.deploy.door_config).

A description that stops parsing keeps the last good one in service (nothing the scrapes
depend on disappears because of a typo), says why in the log once, and reports
`clusterscope_inventory_config_last_reload_successful 0` until it parses again.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from clusterscope_logs.collector import container_config
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector, CollectorRegistry

from clusterscope_inventory import probes
from clusterscope_inventory.bounded import BoundedHandler, BoundedServer
from clusterscope_inventory.description import (
    ROLES,
    Description,
    DescriptionError,
    load,
)
from clusterscope_inventory.targets import JOBS, STACK_JOBS, stack_targets, targets

log = logging.getLogger("clusterscope_inventory")


class Inventory:
    """The current description of `path`; `current()` re-reads it when the file changed.
    `on_load` is called with every description that parsed (the first one included), e.g.
    to rewrite Alertmanager's configuration."""

    def __init__(self, path: str | os.PathLike,
                 on_load: Callable[[Description], None] | None = None) -> None:
        self.path = Path(path)
        self.lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self.on_load = on_load
        self.description = load(self.path)  # the first read must succeed: no last good one
        self._loaded()
        self._seen = self._stamp()
        self.ok = True
        self.loaded_at = time.time()
        self.error: str | None = None

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def current(self) -> Description:
        with self.lock:
            stamp = self._stamp()
            if stamp != self._seen:
                self._seen = stamp
                try:
                    self.description = load(self.path)
                    self.ok, self.loaded_at, self.error = True, time.time(), None
                    log.info("%s: reloaded: %d cluster(s)", self.path,
                             len(self.description.clusters))
                    self._loaded()
                except DescriptionError as exc:
                    self.ok, self.error = False, str(exc)
                    log.error("%s; still serving the last good description", exc)
            return self.description


    def _loaded(self) -> None:
        if self.on_load is not None:
            try:
                self.on_load(self.description)
            except Exception:  # noqa: BLE001 - serving the description goes on regardless
                log.exception("after loading %s", self.path)


class InventoryCollector(Collector):
    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory

    def collect(self):  # noqa: ANN201 - prometheus_client's interface
        desc = self.inventory.current()
        info = GaugeMetricFamily("clusterscope_cluster_info", "A cluster the description"
                                 " lists (1), with its kind.", labels=["cluster", "kind"])
        members = GaugeMetricFamily("clusterscope_cluster_members", "How many nodes of each"
                                    " role the description lists for the cluster.",
                                    labels=["cluster", "kind", "role"])
        nodes = GaugeMetricFamily("clusterscope_node_info", "A node the description lists"
                                  " (1), with its role.", labels=["cluster", "node", "role"])
        for c in desc.clusters:
            info.add_metric([c.name, c.kind], 1)
            for role in ROLES[c.kind]:
                members.add_metric([c.name, c.kind, role], len(c.members(role)))
            for n in c.nodes:
                nodes.add_metric([c.name, n.name, n.role], 1)
        yield from (info, members, nodes)
        yield GaugeMetricFamily("clusterscope_inventory_config_last_reload_successful",
                                "1 when the description parsed at its last change.",
                                value=1 if self.inventory.ok else 0)
        yield GaugeMetricFamily(
            "clusterscope_inventory_config_last_reload_success_timestamp_seconds",
            "When the description last parsed.", value=self.inventory.loaded_at)


# what each role of the door may do, said in its refusals (door_config's routes)
DOOR_ROLES = {"read": "queries, federation, logs, rules and the exporters' /metrics",
              "write": "what read may, and pins (/api/v1/import/prometheus)",
              "operate": "what read may, and silences (/alertmanager/api/v2/silences)"}


def denied(query: str) -> bytes:
    """The door's 403 body: the role and what it may do, never the request's content."""
    role = (parse_qs(query).get("role") or [""])[0]
    what = DOOR_ROLES.get(role)
    if what is None:
        return b"forbidden\n"
    return (f"forbidden: the door's {role} role may use {what}; nothing else is routed"
            " (docs/deploy.md, \"The door\")\n").encode()


def make_server(address: tuple[str, int], inventory: Inventory,
                stack: dict[str, str] | None = None,
                probe_backend: str = "127.0.0.1:9104",
                changes_file: str | None = None) -> BoundedServer:
    """`stack`: the addresses of the deployment's own optional services (STACK_JOBS);
    `probe_backend`: where mysqld_exporter listens behind its guard (probes.py);
    `changes_file`: the change detector's file, shipped with the description's logs."""
    stack = stack or {}
    registry = CollectorRegistry(auto_describe=False)
    registry.register(InventoryCollector(inventory))

    class Handler(BoundedHandler):
        server_version = "clusterscope_inventory"

        def _refuse(self) -> None:
            url = urlsplit(self.path)
            if url.path != "/door/denied":
                self._send(405, "text/plain; charset=utf-8", b"method not allowed\n")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if 0 < length <= 1 << 20:
                self.rfile.read(length)  # the proxied body, unread, would stall the door
            self._send(403, "text/plain; charset=utf-8", denied(url.query))

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815 - http.server's naming

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            url = urlsplit(self.path)
            path = url.path
            if path == "/door/denied":
                self._send(403, "text/plain; charset=utf-8", denied(url.query))
            elif path == "/config/probes.yml":
                self._send(200, "application/yaml; charset=utf-8",
                           probes.render(inventory.current(), probe_backend).encode())
            elif path.startswith("/sd/"):
                job = path[len("/sd/"):]
                if job in JOBS:
                    found = targets(inventory.current(), job)
                elif job in STACK_JOBS:
                    found = stack_targets(inventory.current(), job, stack.get(job))
                else:
                    jobs = ", ".join((*JOBS, *STACK_JOBS))
                    self._send(404, "text/plain; charset=utf-8",
                               f"no job {job!r}; jobs: {jobs}\n".encode())
                    return
                self._send(200, "application/json", json.dumps(found).encode())
            elif path == "/config/otelcol.yaml":
                try:
                    body = container_config(inventory.current().log_sources(),
                                            changes_file).encode()
                except ValueError as exc:  # a source the collector could not load
                    self._send(500, "text/plain; charset=utf-8", f"{exc}\n".encode())
                    return
                self._send(200, "application/yaml; charset=utf-8", body)
            elif path == "/metrics":
                self._send(200, "text/plain; version=0.0.4; charset=utf-8",
                           generate_latest(registry))
            elif path in ("/-/healthy", "/-/ready"):
                self._send(200, "text/plain; charset=utf-8", b"ok\n")
            elif path == "/":
                links = "".join(f'<li><a href="/sd/{j}">/sd/{j}</a></li>'
                                for j in (*JOBS, *STACK_JOBS))
                self._send(200, "text/html; charset=utf-8",
                           f"<html><body><h1>clusterscope inventory</h1><ul>{links}"
                           f'<li><a href="/metrics">/metrics</a></li>'
                           f'<li><a href="/config/otelcol.yaml">/config/otelcol.yaml</a></li>'
                           f"</ul></body></html>"
                           .encode())
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found\n")

        def _send(self, code: int, ctype: str, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return BoundedServer(address, Handler)
