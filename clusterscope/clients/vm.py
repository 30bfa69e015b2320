"""A small VictoriaMetrics (Prometheus API) client: stdlib only, clear errors."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable


class VMError(RuntimeError):
    pass


class VM:
    def __init__(self, url: str, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout

    def _post(self, path: str, params: dict | list) -> dict:
        # POST: long PromQL (the dashboards' and rules') would overflow a GET URL
        data = urllib.parse.urlencode(params).encode()
        req = urllib.request.Request(f"{self.url}{path}", data=data, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise VMError(f"{path} failed ({exc.code}): {exc.read()[:500]!r}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise VMError(f"VictoriaMetrics at {self.url} unreachable: {exc}") from exc
        if body.get("status") != "success":
            raise VMError(f"{path}: {body.get('error', body)}")
        return body["data"]

    def query(self, expr: str, time_: float | None = None) -> list[dict]:
        params = {"query": expr}
        if time_ is not None:
            params["time"] = f"{time_:.3f}"
        return self._post("/api/v1/query", params)["result"]

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[dict]:
        params = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step}s"}
        return self._post("/api/v1/query_range", params)["result"]

    def series(self, match: str, start: float | None = None, end: float | None = None
               ) -> list[dict]:
        params: list[tuple[str, str]] = [("match[]", match)]
        if start is not None:
            params.append(("start", f"{start:.3f}"))
        if end is not None:
            params.append(("end", f"{end:.3f}"))
        return self._post("/api/v1/series", params)

    def label_values(self, label: str, match: str | None = None, start: float | None = None,
                     end: float | None = None) -> list[str]:
        params: list[tuple[str, str]] = []
        if start is not None:
            params.append(("start", f"{start:.0f}"))
        if end is not None:
            params.append(("end", f"{end:.0f}"))
        if match:
            params.append(("match[]", match))
        return self._post(f"/api/v1/label/{label}/values", params)

    def import_prometheus(self, text: str) -> None:
        """Write samples in the Prometheus text format (lines may carry a ms timestamp)."""
        req = urllib.request.Request(f"{self.url}/api/v1/import/prometheus", data=text.encode(),
                                     method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                resp.read()
        except (urllib.error.URLError, OSError) as exc:
            raise VMError(f"import into {self.url} failed: {exc}") from exc

    def flush(self) -> None:
        """Make just-imported samples searchable now (VictoriaMetrics' internal cache)."""
        try:
            with urllib.request.urlopen(f"{self.url}/internal/force_flush",
                                        timeout=self.timeout) as resp:
                resp.read()
        except (urllib.error.URLError, OSError) as exc:
            raise VMError(f"force_flush on {self.url} failed: {exc}") from exc

    def wait_for(self, expr: str, timeout: float = 60.0,
                 predicate: Callable[[list[dict]], bool] | None = None,
                 interval: float = 1.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        result: list[dict] = []
        while time.monotonic() < deadline:
            try:
                result = self.query(expr)
            except VMError:
                result = []
            if (predicate(result) if predicate else bool(result)):
                return result
            time.sleep(interval)
        raise VMError(f"{expr!r} did not give the expected result within {timeout:.0f} s;"
                      f" last: {result!r:.500}")

