"""A local Alertmanager webhook receiver: every notification becomes one JSON line.

`python -m clusterscope.lab.webhook --listen 127.0.0.1:PORT --out FILE [--runbooks DIR
--vmalert URL]`. Each line is the notification Alertmanager posted plus `received_at` (unix
seconds), appended and flushed before the HTTP answer, so a test or the demo reading the
file sees everything acknowledged.

It also stands in for the deployment's Grafana as vmalert's `-external.url`, so the links
in the lab's notifications work: `/public/clusterscope/runbooks/<Alert>.md` serves the
runbook page (as Grafana serves the runbooks mounted under its public/ directory in
compose), `/vmalert/...` (an alert's source link) redirects to vmalert, and `/d/<uid>`
says the lab has no Grafana.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

RUNBOOK_PATH = "/public/clusterscope/runbooks/"


def make_handler(out: Path, runbooks: Path | None = None,
                 vmalert: str | None = None) -> type[BaseHTTPRequestHandler]:
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

        def _answer(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            path = self.path.split("?", 1)[0]
            if path.startswith(RUNBOOK_PATH) and runbooks is not None:
                name = path[len(RUNBOOK_PATH):]
                page = runbooks / name
                if re.fullmatch(r"[A-Za-z0-9]+\.md", name) and page.is_file():
                    self._answer(200, page.read_bytes(), "text/markdown; charset=utf-8")
                else:
                    self._answer(404, f"no runbook {name}\n".encode(), "text/plain")
                return
            if path.startswith("/vmalert/") and vmalert:
                self.send_response(302)
                self.send_header("Location", vmalert.rstrip("/") + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if path.startswith("/d/"):
                self._answer(404, b"The lab runs no Grafana: the dashboards are in"
                             b" dashboards/json/ (import them into a Grafana).\n", "text/plain")
                return
            # readiness probe and a quick look: how many notifications so far
            n = sum(1 for _ in open(out)) if out.exists() else 0
            self._answer(200, json.dumps({"notifications": n, "file": str(out)}).encode(),
                         "application/json")

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
    p.add_argument("--runbooks", type=Path, help="directory of runbook pages to serve")
    p.add_argument("--vmalert", help="vmalert's URL (alert source links redirect there)")
    args = p.parse_args(argv)
    host, port = args.listen.rsplit(":", 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    handler = make_handler(args.out, args.runbooks, args.vmalert)
    server = ThreadingHTTPServer((host, int(port)), handler)
    print(f"webhook: listening on {args.listen}, recording to {args.out}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
