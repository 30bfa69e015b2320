"""`clusterscope maintenance start|stop|list`: a maintenance window as Alertmanager silences.

A planned restart, upgrade or `N STOP` should page nobody: `start` silences a cluster's
alerts (or one node's) for a while, `stop` ends the window early, `list` shows what is
silenced. The silences are Alertmanager's own (API v2 `POST /api/v2/silences`, what
`amtool silence add` sends: prometheus/alertmanager api/v2/openapi.yaml v0.28.1), marked
with `createdBy: clusterscope maintenance` so `stop` ends only these. The Watchdog is never
silenced: its matchers name a cluster, which the Watchdog has not.

Through the door Alertmanager's URL is `https://HOST:8427/alertmanager` and the requests carry
the operate role's credentials: `access` opens them (clusterscope/clients/credentials.py).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

CREATED_BY = "clusterscope maintenance"
DEFAULT_URL = "http://127.0.0.1:9093"
_DURATION = re.compile(r"^(\d+)([mhd])$")


class MaintenanceError(Exception):
    pass


class Opener(Protocol):
    def open(self, req: urllib.request.Request, timeout: float) -> Any: ...


class _Plain:
    def open(self, req: urllib.request.Request, timeout: float) -> Any:
        return urllib.request.urlopen(req, timeout=timeout)


PLAIN = _Plain()


def parse_duration(text: str) -> timedelta:
    m = _DURATION.match(text)
    if not m or int(m.group(1)) == 0:
        raise MaintenanceError(f"--duration {text!r}: expected minutes, hours or days such as"
                               " 90m, 2h or 1d")
    n, unit = int(m.group(1)), m.group(2)
    return timedelta(minutes=n) if unit == "m" else timedelta(hours=n) if unit == "h" \
        else timedelta(days=n)


def _call(url: str, method: str = "GET", body: dict | None = None,
          access: Opener = PLAIN) -> object:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with access.open(req, 10) as resp:
            text = resp.read()
    except urllib.error.HTTPError as exc:
        raise MaintenanceError(f"{method} {url}: {exc.code}"
                               f" {exc.read().decode(errors='replace').strip()[:300]}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise MaintenanceError(f"Alertmanager at {url.split('/api/')[0]} does not answer"
                               f" ({getattr(exc, 'reason', exc)}); --alertmanager URL or"
                               " CLUSTERSCOPE_ALERTMANAGER_URL") from exc
    return json.loads(text) if text else None


def matchers(cluster: str, node: str | None, node_id: str | None) -> list[dict]:
    out = [{"name": "cluster", "value": cluster, "isRegex": False, "isEqual": True}]
    if node:
        out.append({"name": "node", "value": node, "isRegex": False, "isEqual": True})
    if node_id:
        out.append({"name": "node_id", "value": node_id, "isRegex": False, "isEqual": True})
    return out


def start(am: str, cluster: str, node: str | None, node_id: str | None,
          duration: timedelta, comment: str, access: Opener = PLAIN) -> str:
    now = datetime.now(UTC)
    body = {"matchers": matchers(cluster, node, node_id),
            "startsAt": now.isoformat(), "endsAt": (now + duration).isoformat(),
            "createdBy": CREATED_BY, "comment": comment}
    res = _call(f"{am}/api/v2/silences", "POST", body, access)
    return str(res["silenceID"])  # type: ignore[index]


def ours(am: str, cluster: str | None = None, access: Opener = PLAIN) -> list[dict]:
    """Active silences made by this command (of one cluster)."""
    out = []
    for s in _call(f"{am}/api/v2/silences", access=access):  # type: ignore[union-attr]
        if s.get("createdBy") != CREATED_BY or s["status"]["state"] == "expired":
            continue
        names = {m["name"]: m["value"] for m in s["matchers"]}
        if cluster is None or names.get("cluster") == cluster:
            out.append(s)
    return out


def stop(am: str, cluster: str, access: Opener = PLAIN) -> list[str]:
    ended = []
    for s in ours(am, cluster, access):
        _call(f"{am}/api/v2/silence/{s['id']}", "DELETE", access=access)
        ended.append(s["id"])
    return ended


