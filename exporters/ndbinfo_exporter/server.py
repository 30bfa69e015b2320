"""The HTTP(S) endpoint: the telemetry path, a landing page, optional basic auth."""

from __future__ import annotations

import base64
import binascii
import logging
import socket
import ssl
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from prometheus_client import ProcessCollector
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector as _RegistryCollector

from ndbinfo_exporter.clusters import ClusterSet
from ndbinfo_exporter.families import Family
from ndbinfo_exporter.scrape import Scraper
from ndbinfo_exporter.webconfig import WebConfig

log = logging.getLogger("ndbinfo_exporter.http")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _Fixed(_RegistryCollector):
    def __init__(self, metrics: list) -> None:
        self.metrics = metrics

    def collect(self):  # noqa: ANN201 - prometheus_client's interface
        return self.metrics


def encode(metrics: list) -> list[bytes]:
    """Text format 0.0.4 (what Prometheus and VictoriaMetrics scrape), as chunks written one
    after the other: joining 25 MB of them (144 data nodes) would hold the answer twice."""
    out: list[bytes] = []
    others = []
    for m in metrics:
        if isinstance(m, Family):
            out.append(m.encode())
        else:
            others.append(m)
    out.append(generate_latest(_Fixed(others)))
    return out


def make_server(address: tuple[str, int], path: str, scraper: Scraper | None,
                web: WebConfig, clusters: ClusterSet | None = None) -> ThreadingHTTPServer:
    """`path` serves the one cluster of the option file (`scraper`), or with a description
    (`clusters`) only the exporter's own process metrics; `/probe?cluster=NAME` serves a
    cluster of the description."""
    process = ProcessCollector(registry=None)

    class Handler(BaseHTTPRequestHandler):
        server_version = "ndbinfo_exporter"
        # headers and body go out in separate writes; Nagle + delayed ACK would add ~40 ms
        disable_nagle_algorithm = True

        def setup(self) -> None:
            if isinstance(self.request, ssl.SSLSocket):
                self.request.settimeout(10)
                self.request.do_handshake()
            super().setup()

        def log_message(self, fmt: str, *args: object) -> None:  # quiet access log
            pass

        def _authorised(self) -> bool:
            if not web.users:
                return True
            header = self.headers.get("Authorization", "")
            if header.startswith("Basic "):
                try:
                    user, _, pw = base64.b64decode(header[6:]).decode().partition(":")
                except (binascii.Error, UnicodeDecodeError):
                    user, pw = "", ""
                if web.check(user, pw):
                    return True
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="ndbinfo_exporter"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return False

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if not self._authorised():
                return
            url = urlsplit(self.path)
            if url.path == path:
                metrics = scraper.scrape(self._budget()) if scraper is not None else []
                self._send(200, CONTENT_TYPE, encode(metrics + list(process.collect())))
            elif url.path == "/probe" and clusters is not None:
                # mysqld_exporter's /probe answers 400 for a missing target or an unknown
                # auth_module (prometheus/mysqld_exporter probe.go, v0.19.0): likewise here,
                # so the scrape fails with the reason in its lastError
                q = parse_qs(url.query)
                name = (q.get("cluster") or q.get("target") or [""])[0]
                if not name:
                    self._send(400, "text/plain; charset=utf-8", b"cluster is required\n")
                    return
                target, problem = clusters.get(name)
                if target is None:
                    self._send(400, "text/plain; charset=utf-8", f"{problem}\n".encode())
                    return
                self._send(200, CONTENT_TYPE, encode(target.scrape(self._budget())))
            elif url.path == "/":
                self._send(200, "text/html; charset=utf-8",
                           f"<html><head><title>ndbinfo_exporter</title></head><body>"
                           f"<h1>ndbinfo_exporter</h1><p><a href=\"{path}\">Metrics</a></p>"
                           f"</body></html>".encode())
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found\n")

        def _budget(self) -> float | None:
            header = self.headers.get("X-Prometheus-Scrape-Timeout-Seconds")
            if header:
                try:  # leave Prometheus a little time to receive the answer
                    return max(0.5, float(header) - 0.5)
                except ValueError:
                    return None
            return None

        def _send(self, code: int, ctype: str, body: bytes | list[bytes]) -> None:
            chunks = [body] if isinstance(body, bytes) else body
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(sum(len(c) for c in chunks)))
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(chunk)

    host, port = address
    family = socket.AF_INET6 if ":" in host else socket.AF_INET

    class Server(ThreadingHTTPServer):
        address_family = family
        daemon_threads = True

        def get_request(self):  # noqa: ANN201
            sock, addr = super().get_request()
            if web.ssl_context is not None:
                # the handshake runs in the handler thread, so a slow client cannot stall
                # the accept loop
                sock = web.ssl_context.wrap_socket(sock, server_side=True,
                                                   do_handshake_on_connect=False)
            return sock, addr

        def handle_error(self, request, client_address) -> None:  # noqa: ANN001
            log.debug("request from %s failed", client_address, exc_info=True)

    return Server((host, port), Handler)
