"""A held connection cannot stall the inventory or a product's /metrics (the tracker's, the
change detector's, the loadgen's): read timeouts, a connection limit, the real servers on
real sockets. And a burst of probes costs an NDB cluster one scrape (the exporter's
Scraper, its database stood in by a scrape that takes a known time: what is tested is who
waits for whom)."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from clusterscope_inventory import bounded
from clusterscope_inventory.bounded import metrics_server
from clusterscope_inventory.server import Inventory, make_server
from ndbinfo_exporter.scraper import Scraper
from prometheus_client.registry import CollectorRegistry

DESC = "clusters:\n  - name: g\n    kind: galera\n    nodes: [{name: n1, address: 'h:3306'}]\n"


def _servers(tmp: Path):
    desc = tmp / "clusterscope.yml"
    desc.write_text(DESC)
    yield "inventory", make_server(("127.0.0.1", 0), Inventory(desc)), "/-/ready"
    # the tracker's, the change detector's and the loadgen's /metrics
    yield "metrics", metrics_server(("127.0.0.1", 0), CollectorRegistry(), "t"), "/metrics"


def test_the_loadgens_metrics_are_served_bounded() -> None:
    from clusterscope_loadgen.metrics import Metrics
    server = Metrics().serve(0)
    try:
        assert isinstance(server, bounded.BoundedServer)
        assert _get(server.server_address[1], "/metrics") == 200
    finally:
        server.shutdown()
        server.server_close()


def _get(port: int, path: str) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return r.status


@pytest.mark.parametrize("which", ["inventory", "metrics"])
def test_held_connections_neither_stall_nor_exhaust(tmp_path, monkeypatch, which) -> None:
    monkeypatch.setattr(bounded.BoundedHandler, "timeout", 1.0)
    name, server, path = next(s for s in _servers(tmp_path) if s[0] == which)
    server.max_connections = 4
    server._slots = threading.BoundedSemaphore(4)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        held = []
        for _ in range(4):  # half a request line each, then nothing
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /metr")
            held.append(s)
        time.sleep(0.3)
        # the fifth is told at once, not left hanging
        probe = socket.create_connection(("127.0.0.1", port), timeout=3)
        probe.sendall(b"GET / HTTP/1.0\r\n\r\n")
        assert probe.recv(64).startswith(b"HTTP/1.1 503"), name
        probe.close()
        # the held ones are dropped after the read timeout; the server answers again
        for s in held:  # closed by the server (http.server drops a request that timed out)
            s.settimeout(5)
            assert s.recv(1024) == b"", name
        time.sleep(0.2)
        assert _get(port, path) == 200
    finally:
        server.shutdown()
        server.server_close()


class _Timed(Scraper):
    """A Scraper whose scrape of the database takes `seconds` and counts itself."""

    def __init__(self, seconds: float) -> None:
        self.calls = 0
        self.seconds = seconds
        self.lock = threading.Lock()
        self._gate = threading.Lock()
        self._flight = None
        self.scrape_timeout = 5.0

    def _scrape(self, budget: float) -> list:
        self.calls += 1
        time.sleep(self.seconds)
        return [f"scrape {self.calls}"]


def test_probes_that_arrive_during_a_scrape_share_it() -> None:
    s = _Timed(0.5)
    results: list = []
    threads = [threading.Thread(target=lambda: results.append(s.scrape())) for _ in range(20)]
    for t in threads:
        t.start()
        time.sleep(0.01)
    for t in threads:
        t.join(10)
    assert s.calls == 1 and results == [["scrape 1"]] * 20
    # once it is done, the next request scrapes anew
    assert s.scrape() == ["scrape 2"]
