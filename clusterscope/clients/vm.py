"""A small VictoriaMetrics (Prometheus API) client: stdlib only, clear errors.

Reads go to `url`: a single-node VictoriaMetrics (`http://HOST:8428`), the cluster
version's vmselect (`http://HOST:8481/select/0/prometheus`) or a Prometheus; the paths
below are appended to it. Writes (pinned baselines) go to `write_url`: the same server for
a single node, vminsert (`http://HOST:8480/insert/0/prometheus`) for the cluster version,
whose vminsert serves `/insert/<accountID>/prometheus/api/v1/import/prometheus`
(VictoriaMetrics/VictoriaMetrics, cluster branch, app/vminsert/main.go requestHandler:
the `insert` prefix, then the `prometheus/api/v1/import/prometheus` suffix).

Through the door (clusterscope.deploy.door_config) both are its one URL; `access` carries the
role's credentials and the CA its certificate is checked against.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable

from clusterscope.clients.credentials import NONE, Access


class VMError(RuntimeError):
    pass


class VM:
    def __init__(self, url: str, timeout: float = 30.0, write_url: str | None = None,
                 access: Access = NONE) -> None:
        for what, u in (("read", url), ("write", write_url)):
            if u is not None and not u.startswith(("http://", "https://")):
                raise VMError(f"VictoriaMetrics {what} URL {u!r}: give http://HOST:PORT[/PATH]")
        self.url = url.rstrip("/")
        self.write_url = (write_url or url).rstrip("/")
        self.timeout = timeout
        self.access = access

    @property
    def single_node(self) -> bool:
        """Reads and writes go to one server (a single-node VictoriaMetrics)."""
        return self.write_url == self.url

    def _post(self, path: str, params: dict | list) -> dict:
        # POST: long PromQL (the dashboards' and rules') would overflow a GET URL
        data = urllib.parse.urlencode(params).encode()
        req = urllib.request.Request(f"{self.url}{path}", data=data, method="POST")
        return self._send(req, path)

    def _send(self, req: urllib.request.Request, path: str) -> dict:
        try:
            with self.access.open(req, self.timeout) as resp:
                body = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise VMError(f"{self.url}{path} failed ({exc.code}): {exc.read()[:500]!r}"
                          ) from exc
        except (urllib.error.URLError, OSError) as exc:
            raise VMError(f"VictoriaMetrics at {self.url} unreachable: {exc}") from exc
        except ValueError as exc:
            raise VMError(f"{self.url}{path} did not answer with the Prometheus API's JSON"
                          " (is it a VictoriaMetrics or Prometheus URL?)") from exc
        if not isinstance(body, dict) or body.get("status") != "success":
            raise VMError(f"{path}: {body.get('error', body) if isinstance(body, dict) else body}")
        return body["data"]

    def query(self, expr: str, time_: float | None = None) -> list[dict]:
        params = {"query": expr}
        if time_ is not None:
            params["time"] = f"{time_:.3f}"
        return self._post("/api/v1/query", params)["result"]

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[dict]:
        # step as float seconds: Prometheus reads a duration (15s) or a float number of
        # seconds, never "15.0s" (prometheus/prometheus docs/querying/api.md, "Range
        # queries"); VictoriaMetrics reads both
        params = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
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
        # GET: Prometheus serves label values on GET only (prometheus/prometheus
        # web/api/v1/api.go, v2.42.0: `r.Get("/label/:name/values", ...)`, no Post);
        # VictoriaMetrics takes either
        return self._get(f"/api/v1/label/{label}/values", params)

    def _get(self, path: str, params: list[tuple[str, str]]) -> dict:
        query = urllib.parse.urlencode(params)
        req = urllib.request.Request(f"{self.url}{path}" + (f"?{query}" if query else ""))
        return self._send(req, path)

    def import_prometheus(self, text: str) -> None:
        """Write samples in the Prometheus text format (lines may carry a ms timestamp), to
        the write URL. VictoriaMetrics only: Prometheus has no import endpoint."""
        url = f"{self.write_url}/api/v1/import/prometheus"
        req = urllib.request.Request(url, data=text.encode(), method="POST")
        try:
            with self.access.open(req, self.timeout) as resp:
                resp.read()
        except urllib.error.HTTPError as exc:
            hint = ""
            if exc.code in (400, 404, 405):
                # vmselect answers 400 to a path it does not serve, Prometheus 404/405
                hint = (" (writes need VictoriaMetrics' import API: a single-node"
                        " VictoriaMetrics, or vminsert's http://HOST:8480/insert/0/prometheus"
                        " as the write URL with the cluster version; Prometheus has none)")
            raise VMError(f"import into {url} failed ({exc.code}):"
                          f" {exc.read()[:300]!r}{hint}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise VMError(f"import into {url} failed: {exc}") from exc

    def flush(self) -> None:
        """Make just-imported samples searchable now (VictoriaMetrics' internal cache).

        Single node only: in the cluster version /internal/force_flush is vmstorage's, which
        the client does not know; imported samples become searchable there on their own
        within seconds."""
        if not self.single_node:
            return
        try:
            with self.access.open(urllib.request.Request(f"{self.url}/internal/force_flush"),
                                  self.timeout) as resp:
                resp.read()
        except urllib.error.HTTPError as exc:
            if exc.code in (400, 403, 404):
                return  # not offered here (a door in front of the cluster version)
            raise VMError(f"force_flush on {self.url} failed ({exc.code})") from exc
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

