"""A local Alertmanager webhook receiver: every notification becomes one JSON line.

`python -m clusterscope.lab.webhook --listen 127.0.0.1:PORT --out FILE`. Each line is
the notification Alertmanager posted plus `received_at` (unix seconds), appended and flushed
before the HTTP answer, so a test or the demo reading the file sees everything acknowledged.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def make_handler(out: Path) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            try:
                payload = json.loads(body)
            except json.JSONDecodeError:
                self.send_error(400, "body is not JSON")
                return
            record = {"received_at": time.time(), "path": self.path, **payload}
            with lock, open(out, "a") as f:
                f.write(json.dumps(record, sort_keys=True) + "\n")
                f.flush()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            # readiness probe and a quick look: how many notifications so far
            n = sum(1 for _ in open(out)) if out.exists() else 0
            body = json.dumps({"notifications": n, "file": str(out)}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args: object) -> None:
            print(f"webhook: {self.address_string()} {fmt % args}", flush=True)

    return Handler


def read_notifications(path: Path) -> list[dict]:
    """Every notification recorded so far (a torn last line is skipped, not fatal)."""
    out = []
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--listen", required=True, help="host:port (use 127.0.0.1)")
    p.add_argument("--out", required=True, type=Path, help="JSONL file to append to")
    args = p.parse_args(argv)
    host, port = args.listen.rsplit(":", 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    server = ThreadingHTTPServer((host, int(port)), make_handler(args.out))
    print(f"webhook: listening on {args.listen}, recording to {args.out}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
