"""The door: the one authenticating proxy in front of the stack's APIs (VictoriaMetrics'
vmauth), its configuration generated here for compose (compose/config/door.yml and
door-scale.yml) and for the lab, so both run the same routes.

Three roles, one user each, cumulative:

- read: queries and federation (the Prometheus query API, `/federate`, raw export), log
  queries (VictoriaLogs' `/select/logsql/`), the rules' state (`/vmalert/api/v1/`,
  `/vmalert-logs/api/v1/`) and the stack's own exporters' `/metrics` (`/metrics/<service>`);
- write: read, and pins (`/api/v1/import/prometheus`);
- operate: read, and silences (`/alertmanager/api/v2/silences`, `/alertmanager/api/v2/silence/ID`:
  `clusterscope maintenance`).

Nothing else is routed: no delete, snapshot, reload or pprof endpoint, no alert injection,
no probe. vmauth answers a request without credentials with 401 (VictoriaMetrics v1.151.0
app/vmauth/main.go, requestHandler: no auth tokens and no `unauthorized_user` ->
handleMissingAuthorizationError). A user's request that matches none of the user's routes
goes to its `default_url`, with the path in `request_path` (processRequest, `isDefault`):
here the inventory's `/door/denied?role=ROLE`, which answers 403 and names the role, so a
refusal reads as one (without a default_url vmauth says 400 "missing route").

Routes match the whole path (auth_config.go Regex.UnmarshalYAML anchors `^(?:...)$`), and
query args of a backend URL win over the client's (target_url.go mergeURLs: "Skip clashed
client query params"), so `?role=` cannot be forged. Passwords are never in the file: each
is `%{DOOR_<ROLE>_PASSWORD}`, which vmauth replaces from its environment before parsing
(auth_config.go parseAuthConfig -> lib/envtemplate.ReplaceBytes); compose's entrypoint
reads them from the secret files, refuses an empty or unsafe one (an unset variable would
stay the literal text `%{...}`, a password anyone could read here), and the lab sets them
from its own files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ROLES = ("read", "write", "operate")
PORT = 8427            # vmauth's default -httpListenAddr
INTERNAL_PORT = 8426   # /health, /metrics, /-/reload: never the published port
# Passwords the door takes: letters, digits and `-_.~+/=` (base64 and URL-safe tokens,
# `openssl rand -base64 32`), at least 16: inserted into the YAML inside double quotes before
# it is parsed, so a quote or backslash would change what it says.
PASSWORD = re.compile(r"^[A-Za-z0-9._~+/=-]{16,256}$")
PASSWORD_CHARS = "A-Za-z0-9._~+/=-"
MIN_PASSWORD = 16


def password_env(role: str) -> str:
    return f"DOOR_{role.upper()}_PASSWORD"


# The Prometheus query API a dashboard, `compare` or a federating Prometheus reads.
QUERY_PATHS = ("/api/v1/query", "/api/v1/query_range", "/api/v1/series", "/api/v1/labels",
               "/api/v1/label/[^/]+/values", "/api/v1/metadata", "/api/v1/export",
               "/api/v1/status/buildinfo", "/federate")


@dataclass(frozen=True)
class Backends:
    """Where each route goes (URL prefixes as the door reaches them)."""
    query: str                 # the Prometheus API of VictoriaMetrics (or vmselect's prefix)
    write: str                 # its import API (VictoriaMetrics, or vminsert's prefix)
    logs: str                  # VictoriaLogs (or vlselect)
    vmalert: str
    vmalert_logs: str
    alertmanager: str
    denied: str                # answers 403 (the inventory's /door/denied)
    targets: str | None = None  # whoever scrapes (VictoriaMetrics, or vmagent): /api/v1/targets
    flush: bool = True         # single-node VictoriaMetrics serves /internal/force_flush
    exporters: dict[str, str] = field(default_factory=dict)  # name -> its /metrics URL


def _route(paths: list[str] | tuple[str, ...], prefix: str, drop: int = 0) -> dict:
    route: dict = {"src_paths": list(paths), "url_prefix": prefix}
    if drop:
        route["drop_src_path_prefix_parts"] = drop
    return route


def routes(role: str, b: Backends) -> list[dict]:
    """The role's url_map (cumulative: write and operate read too)."""
    if role not in ROLES:
        raise ValueError(f"no door role {role!r} (roles: {', '.join(ROLES)})")
    out = [_route(QUERY_PATHS, b.query)]
    if b.targets:
        out.append(_route(["/api/v1/targets"], b.targets))
    out += [_route(["/select/logsql/[a-z_]+"], b.logs),
            _route(["/vmalert/api/v1/[a-z_]+"], b.vmalert, drop=1),
            _route(["/vmalert-logs/api/v1/[a-z_]+"], b.vmalert_logs, drop=1)]
    # /metrics/<name> -> that service's /metrics (two parts dropped: nothing is appended)
    out += [_route([f"/metrics/{name}"], url, drop=2) for name, url in sorted(b.exporters.items())]
    if role == "write":
        out.append(_route(["/api/v1/import/prometheus"], b.write))
        if b.flush:
            out.append(_route(["/internal/force_flush"], b.query))
    if role == "operate":
        out.append(_route(["/alertmanager/api/v2/silences", "/alertmanager/api/v2/silence/[^/]+"],
                          b.alertmanager, drop=1))
    return out


def config(b: Backends) -> dict:
    """vmauth's -auth.config: one user per role, anything else refused."""
    return {"users": [{"username": role, "password": f"%{{{password_env(role)}}}",
                       "url_map": routes(role, b),
                       "default_url": f"{b.denied}?role={role}"}
                      for role in ROLES]}


# The stack's own exporters whose /metrics a user's Prometheus may scrape through the door
# (compose service name -> port); the probes (mysqld_exporter, ndbinfo_exporter's /probe)
# are never routed.
EXPORTERS = {"inventory": 9110, "ndbinfo-exporter": 9723, "galera-tracker": 9199,
             "change-detector": 9125, "loadgen": 9500}


def compose_backends(scale: bool = False) -> Backends:
    """The compose network's names (docker-compose.yml, docker-compose.scale.yml)."""
    exporters = {n: f"http://{n}:{p}/metrics" for n, p in EXPORTERS.items()}
    common = {"vmalert": "http://vmalert:8880", "vmalert_logs": "http://vmalert-logs:8880",
              "alertmanager": "http://alertmanager:9093",
              "denied": "http://inventory:9110/door/denied", "exporters": exporters}
    if scale:
        # docs.victoriametrics.com/cluster-victoriametrics: vmselect serves
        # /select/<accountID>/prometheus/..., vminsert /insert/<accountID>/prometheus/...
        return Backends(query="http://vmselect:8481/select/0/prometheus",
                        write="http://vminsert:8480/insert/0/prometheus",
                        logs="http://vlselect:9428", targets="http://vmagent:8429",
                        flush=False, **common)
    return Backends(query="http://victoria-metrics:8428", write="http://victoria-metrics:8428",
                    logs="http://victoria-logs:9428", targets="http://victoria-metrics:8428",
                    **common)
