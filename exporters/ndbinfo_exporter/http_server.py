"""The HTTP(S) endpoint: the telemetry path, a landing page, and the web config's door (TLS,
client certificates, basic auth, response headers, rate limit; see the web package)."""

from __future__ import annotations

import base64
import binascii
import html
import logging
import socket
import ssl
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from prometheus_client import ProcessCollector
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector as _RegistryCollector

from ndbinfo_exporter.clusters import ClusterSet
from ndbinfo_exporter.errors import ConfigError
from ndbinfo_exporter.families import Family
from ndbinfo_exporter.scraper import Scraper
from ndbinfo_exporter.web.tls_context import allowed_sans_reject
from ndbinfo_exporter.web.webconfig import WebConfig

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


HANDSHAKE_TIMEOUT = 10.0
# Go's net/http answers a plain HTTP request on a TLS port with this 400 (golang/go
# src/net/http/server.go, conn.serve: tls.RecordHeaderError, tlsRecordHeaderLooksLikeHTTP);
# exporter-toolkit's test expects it ("HTTP Request to HTTPS server").
_PLAIN_ON_TLS = b"HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
_HTTP_STARTS = (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO")


def basic_auth(header: str | None) -> tuple[bytes | None, bytes | None]:
    """(user, password) of an `Authorization: Basic` header, as Go's Request.BasicAuth reads
    it (case-insensitive scheme, strict base64, split at the first colon); (None, None)
    when there is none or it is malformed."""
    if not header or header[:6].lower() != "basic ":
        return None, None
    try:
        decoded = base64.b64decode(header[6:].encode("latin-1"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None, None
    user, sep, password = decoded.partition(b":")
    return (user, password) if sep else (None, None)


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
        # a client that stops sending or reading frees its thread after this long
        timeout = 30
        extra_headers: tuple[tuple[str, str], ...] = ()

        def log_message(self, fmt: str, *args: object) -> None:  # quiet access log
            pass

        def end_headers(self) -> None:
            for name, value in self.extra_headers:  # http_server_config.headers
                self.send_header(name, value)
            super().end_headers()

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            try:
                settings = web.current()
            except ConfigError:  # logged once by current()
                self._send(500, "text/plain; charset=utf-8", b"Internal Server Error\n")
                return
            self.extra_headers = settings.headers
            if not web.allow(settings):
                self._send(429, "text/plain; charset=utf-8", b"Too Many Requests\n")
                return
            if not web.authorised(settings, *basic_auth(self.headers.get("Authorization"))):
                self._send(401, "text/plain; charset=utf-8", b"Unauthorized\n",
                           [("WWW-Authenticate", 'Basic realm="ndbinfo_exporter"')])
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
                # probes that arrive during a scrape share it (Scraper.scrape)
                self._send(200, CONTENT_TYPE, encode(target.scrape(self._budget())))
            elif url.path == "/":
                self._send(200, "text/html; charset=utf-8",
                           f"<html><head><title>ndbinfo_exporter</title></head><body>"
                           f"<h1>ndbinfo_exporter</h1><p><a href=\"{html.escape(path)}\">"
                           f"Metrics</a></p></body></html>".encode())
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

        def _send(self, code: int, ctype: str, body: bytes | list[bytes],
                  headers: list[tuple[str, str]] | None = None) -> None:
            chunks = [body] if isinstance(body, bytes) else body
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(sum(len(c) for c in chunks)))
            for name, value in headers or ():
                self.send_header(name, value)
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(chunk)

    host, port = address
    server = type("Server", (_Server,), {
        "address_family": socket.AF_INET6 if ":" in host else socket.AF_INET, "web": web})
    return server((host, port), Handler)


class _Server(ThreadingHTTPServer):
    """Each connection in its own thread, TLS set up there with the web config in force."""

    daemon_threads = True
    web: WebConfig

    def finish_request(self, request, client_address) -> None:  # noqa: ANN001
        # Runs in the connection's own thread, so a slow TLS client or a re-read of the
        # web config never stalls the accept loop.
        conn = secure(self.web, request, client_address) if self.web.tls else request
        if conn is None:
            return
        try:
            self.RequestHandlerClass(conn, client_address, self)
        finally:
            if conn is not request:
                self.shutdown_request(conn)

    def handle_error(self, request, client_address) -> None:  # noqa: ANN001
        log.debug("request from %s failed", client_address, exc_info=True)


def secure(web: WebConfig, raw: socket.socket, client: tuple) -> ssl.SSLSocket | None:
    """The TLS side of one connection with the web config as it is now (upstream
    re-reads it per connection, GetConfigForClient); None when refused."""
    raw.settimeout(HANDSHAKE_TIMEOUT)
    first = raw.recv(5, socket.MSG_PEEK)
    if first[:1] != b"\x16":  # not a TLS handshake record
        if first in _HTTP_STARTS:
            raw.sendall(_PLAIN_ON_TLS)
        return None
    try:
        settings = web.current()
    except ConfigError:
        return None
    if settings.ssl_context is None:
        log.warning("web config %s has no TLS any more: refusing TLS connections (the"
                    " port's protocol is chosen at start; restart for plain HTTP)",
                    web.path)
        return None
    conn = settings.ssl_context.wrap_socket(raw, server_side=True,
                                            do_handshake_on_connect=False)
    try:
        conn.do_handshake()
        if settings.allowed_sans is not None:
            why = allowed_sans_reject(settings.allowed_sans,
                                      conn.getpeercert(binary_form=True))
            if why:
                # upstream fails the handshake (bad certificate); Python's ssl has no
                # hook there, so the connection is closed before any request is read
                log.warning("refused the client certificate of %s: %s", client[0], why)
                conn.close()
                return None
    except BaseException:
        conn.close()
        raise
    return conn
