"""A small Loki HTTP client: query_range, push, and waiting for lines to arrive."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass


class LokiError(RuntimeError):
    pass


@dataclass
class Entry:
    ts_ns: int
    labels: dict[str, str]
    line: str


class Loki:
    def __init__(self, url: str, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout

    def _get(self, path: str, params: dict) -> dict:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            body = exc.read().decode(errors="replace")[:500]
            raise LokiError(f"Loki {path} answered {exc.code}: {body}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise LokiError(f"Loki at {self.url} is unreachable: {exc}") from exc

    def query_range(self, expr: str, start: float, end: float | None = None,
                    limit: int = 5000, direction: str = "forward", step: str | None = None
                    ) -> dict:
        """The raw `data` of /loki/api/v1/query_range (streams or matrix)."""
        params = {"query": expr, "start": str(int(start * 1e9)),
                  "end": str(int((end or time.time() + 1) * 1e9)), "limit": str(limit),
                  "direction": direction}
        if step:
            params["step"] = step
        out = self._get("/loki/api/v1/query_range", params)
        if out.get("status") != "success":
            raise LokiError(f"query failed: {out}")
        return out["data"]

    def entries(self, expr: str, start: float, end: float | None = None,
                limit: int = 5000) -> list[Entry]:
        """Log lines of a log query, oldest first, with their stream's labels."""
        data = self.query_range(expr, start, end, limit)
        if data["resultType"] != "streams":
            raise LokiError(f"{expr!r} is a metric query, not a log query")
        out = [Entry(int(ts), r["stream"], line) for r in data["result"]
               for ts, line in r["values"]]
        return sorted(out, key=lambda e: e.ts_ns)

    def instant(self, expr: str, at: float | None = None) -> list[dict]:
        """A metric query at one time: Prometheus-style `result` ({metric, value})."""
        out = self._get("/loki/api/v1/query", {"query": expr,
                                                "time": str(int((at or time.time()) * 1e9))})
        if out.get("status") != "success":
            raise LokiError(f"query failed: {out}")
        return out["data"]["result"]

    def labels(self, name: str | None = None) -> list[str]:
        path = f"/loki/api/v1/label/{name}/values" if name else "/loki/api/v1/labels"
        return self._get(path, {}).get("data", [])

    def push(self, labels: dict[str, str], lines: list[tuple[float, str]]) -> None:
        body = json.dumps({"streams": [{"stream": labels, "values": [
            [str(int(ts * 1e9)), line] for ts, line in lines]}]}).encode()
        req = urllib.request.Request(f"{self.url}/loki/api/v1/push", data=body,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout):
                pass
        except urllib.error.HTTPError as exc:
            raise LokiError(f"push answered {exc.code}: {exc.read()[:300]!r}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise LokiError(f"Loki at {self.url} is unreachable: {exc}") from exc

    def wait_for(self, expr: str, start: float, timeout: float = 30.0, min_count: int = 1,
                 predicate=None, interval: float = 0.5) -> list[Entry]:
        """Poll until the query returns at least `min_count` matching entries."""
        deadline = time.monotonic() + timeout
        last: list[Entry] = []
        while True:
            try:
                last = [e for e in self.entries(expr, start)
                        if predicate is None or predicate(e)]
            except LokiError:
                last = []
            if len(last) >= min_count:
                return last
            if time.monotonic() > deadline:
                raise LokiError(f"{expr!r}: {len(last)} entries after {timeout:.0f} s"
                                f" (wanted {min_count})")
            time.sleep(interval)
