"""A small VictoriaLogs HTTP client: LogsQL queries, stats, field values, waiting for lines.

The endpoints and their answers are VictoriaLogs v1.52.1's (VictoriaMetrics/VictoriaLogs
app/vlselect/main.go, app/vlselect/logsql/logsql.go; docs/victorialogs/querying/README.md):
/select/logsql/query answers one JSON object per line (with `limit=N`, the newest N);
stats_query and stats_query_range answer Prometheus' instant/range query shapes;
field_values answers {"values": [{"value": ..., "hits": ...}]}. `start`, `end` and `time`
take Unix seconds (lib/timeutil ParseTimeAt).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from clusterscope.clients.credentials import NONE, Access


class VLogsError(RuntimeError):
    pass


@dataclass
class Entry:
    ts_ns: int
    labels: dict[str, str]   # every field of the entry but _time and _msg
    line: str


def ns_of(rfc3339: str) -> int:
    """`2026-11-22T03:59:35.999999999Z` -> Unix nanoseconds, without losing digits."""
    head, _, frac = rfc3339.rstrip("Z").partition(".")
    secs = int(datetime.fromisoformat(head).replace(tzinfo=UTC).timestamp())
    return secs * 1_000_000_000 + int((frac + "000000000")[:9])


def _secs(t: float) -> str:
    return f"{t:.6f}"


class VLogs:
    def __init__(self, url: str, timeout: float = 10.0, access: Access = NONE) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.access = access  # the door's credentials and CA (clients/credentials.py)

    def _post(self, path: str, params: dict) -> bytes:
        body = urllib.parse.urlencode(params).encode()
        req = urllib.request.Request(f"{self.url}{path}", data=body)
        try:
            with self.access.open(req, self.timeout) as resp:
                return resp.read()
        except urllib.error.HTTPError as exc:
            text = exc.read().decode(errors="replace")[:500]
            raise VLogsError(f"VictoriaLogs {path} answered {exc.code}: {text}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise VLogsError(f"VictoriaLogs at {self.url} is unreachable: {exc}") from exc

    def _json(self, path: str, params: dict) -> dict:
        raw = self._post(path, params)
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise VLogsError(f"VictoriaLogs {path}: not JSON: {raw[:200]!r}") from exc

    # -- logs ---------------------------------------------------------------------------
    def query(self, expr: str, start: float, end: float | None = None,
              limit: int | None = None) -> list[dict]:
        """The rows /select/logsql/query returns (every field, as strings)."""
        params = {"query": expr, "start": _secs(start), "end": _secs(end or time.time() + 1)}
        if limit:
            params["limit"] = str(limit)
        raw = self._post("/select/logsql/query", params)
        return [json.loads(line) for line in raw.splitlines() if line.strip()]

    def entries(self, expr: str, start: float, end: float | None = None,
                limit: int = 5000) -> list[Entry]:
        """Log lines of a query, oldest first (`limit` keeps the newest)."""
        out = []
        for row in self.query(expr, start, end, limit):
            if "_time" not in row:
                raise VLogsError(f"{expr!r} returns no _time: a stats query, not a log query")
            fields = {k: v for k, v in row.items() if k not in ("_time", "_msg")}
            out.append(Entry(ns_of(row["_time"]), fields, row.get("_msg", "")))
        return sorted(out, key=lambda e: e.ts_ns)

    # -- stats ----------------------------------------------------------------------------
    def stats(self, expr: str, at: float | None = None) -> list[dict]:
        """A `| stats` query at one time: Prometheus-style [{metric, value}]."""
        out = self._json("/select/logsql/stats_query",
                         {"query": expr, "time": _secs(at or time.time())})
        if out.get("status") != "success":
            raise VLogsError(f"stats query failed: {out}")
        return out["data"]["result"]

    def stats_range(self, expr: str, start: float, end: float, step: str) -> list[dict]:
        """A `| stats` query per step: Prometheus-style [{metric, values}]."""
        out = self._json("/select/logsql/stats_query_range",
                         {"query": expr, "start": _secs(start), "end": _secs(end),
                          "step": step})
        if out.get("status") != "success":
            raise VLogsError(f"stats range query failed: {out}")
        return out["data"]["result"]

    def field_values(self, field: str, query: str = "*", start: float | None = None,
                     end: float | None = None) -> list[str]:
        params = {"query": query, "field": field}
        if start is not None:
            params["start"] = _secs(start)
        if end is not None:
            params["end"] = _secs(end)
        return sorted(v["value"] for v in
                      self._json("/select/logsql/field_values", params).get("values", []))

    def stream_field_names(self, query: str = "*", start: float | None = None) -> list[str]:
        params = {"query": query}
        if start is not None:
            params["start"] = _secs(start)
        return sorted(v["value"] for v in
                      self._json("/select/logsql/stream_field_names", params).get("values", []))

    # -- waiting --------------------------------------------------------------------------
    def wait_for(self, expr: str, start: float, timeout: float = 30.0, min_count: int = 1,
                 predicate: Callable[[Entry], bool] | None = None,
                 interval: float = 0.5) -> list[Entry]:
        """Poll until the query returns at least `min_count` matching entries."""
        deadline = time.monotonic() + timeout
        last: list[Entry] = []
        while True:
            try:
                last = [e for e in self.entries(expr, start)
                        if predicate is None or predicate(e)]
            except VLogsError:
                last = []
            if len(last) >= min_count:
                return last
            if time.monotonic() > deadline:
                raise VLogsError(f"{expr!r}: {len(last)} entries after {timeout:.0f} s"
                                 f" (wanted {min_count})")
            time.sleep(interval)
