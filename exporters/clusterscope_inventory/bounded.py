"""An HTTP server that a held connection cannot stall: each connection's reads and writes
time out, and at most MAX_CONNECTIONS are served at once (the rest get a 503 at once).

http.server's ThreadingHTTPServer starts one thread per connection with no limit and a
handler without `timeout` blocks in readline() forever (CPython Lib/socketserver.py
StreamRequestHandler.setup: `if self.timeout is not None: settimeout`), so a client that
sends half a request line holds a thread and a descriptor until it goes away; a thousand of
them exhaust the usual 1024 descriptors and nothing is accepted any more. The inventory,
the tracker, the change detector and the loadgen serve through this one;
prometheus_client's start_http_server (used before) has the same unbounded server.
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import CollectorRegistry

# Long enough for a scrape of a slow network, short enough that a stalled client is gone
# before its scrape interval comes round again.
TIMEOUT = 15.0
MAX_CONNECTIONS = 64
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
         b"Content-Length: 22\r\nConnection: close\r\n\r\ntoo many connections\r\n")


class BoundedHandler(BaseHTTPRequestHandler):
    """A request handler whose socket reads and writes time out (the base of ours)."""
    timeout = TIMEOUT

    def log_message(self, fmt: str, *args: object) -> None:  # quiet access log
        pass


class BoundedServer(ThreadingHTTPServer):
    daemon_threads = True
    max_connections = MAX_CONNECTIONS

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 max_connections: int | None = None) -> None:
        if max_connections is not None:
            self.max_connections = max_connections
        self._slots = threading.BoundedSemaphore(self.max_connections)
        if ":" in address[0]:  # an IPv6 literal such as ::
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)

    def process_request(self, request: socket.socket, client_address: tuple) -> None:
        if not self._slots.acquire(blocking=False):
            try:
                request.settimeout(1.0)
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: socket.socket, client_address: tuple) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def metrics_server(address: tuple[str, int], registry: CollectorRegistry,
                   name: str) -> BoundedServer:
    """`registry`'s exposition on /metrics (and any path, as prometheus_client's server
    answered), bounded; `serve_forever` it in a thread."""
    class Handler(BoundedHandler):
        server_version = name

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            body = generate_latest(registry)
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE_LATEST)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return BoundedServer(address, Handler)


def serve_metrics(listen: tuple[str, int], registry: CollectorRegistry,
                  name: str) -> BoundedServer:
    """metrics_server() started in a daemon thread (as start_http_server does)."""
    server = metrics_server(listen, registry, name)
    threading.Thread(target=server.serve_forever, daemon=True, name=f"{name}-http").start()
    return server
