"""Who is told: the `alerting:` section of the description, and the Alertmanager
configuration that follows from it (routes, inhibitions, receivers).

    alerting:
      critical: oncall          # the receiver of critical alerts (pages)
      warning: team             # ... of warnings (and the default)
      info: team                # optional: without it, info alerts stay in Alertmanager's UI
      heartbeat: {url_file: heartbeat_url}   # the Watchdog every minute: a dead man's switch
      receivers:
        oncall:
          pagerduty: {routing_key_file: pagerduty_routing_key}
        team:
          slack: {api_url_file: slack_webhook_url, channel: "#databases"}
          email: {to: dba@example.com, from: alerts@example.com,
                  smarthost: smtp.example.com:587, auth_username: alerts,
                  auth_password_file: smtp_password}
          webhook: {url_file: team_webhook_url}

Each integration is Alertmanager's own (`slack_configs`, `pagerduty_configs`,
`email_configs`, `webhook_configs`; a list gives several) with Alertmanager's own keys, so
its documentation applies. Whatever carries a credential (a Slack or webhook URL, a
PagerDuty key, an SMTP password, the heartbeat URL) is a file: the description names it,
the file lives in the deployment's secrets directory (compose: secrets/alerting/), and
Alertmanager reads it when it sends (the `*_file` keys of Alertmanager v0.28.1,
prometheus/alertmanager config/notifiers.go). A literal secret in the description is an
error, never copied into a generated file, and no refusal repeats the value it refuses: a
value where a file name belongs may be the pasted secret itself. A named file that is not
in the secrets directory holds the whole section back (the last good configuration stays,
or on a first start no receiver at all), so a pasted key is never rendered as a path.

The inventory renders this into alertmanager.yml whenever the description changes and asks
Alertmanager to reload it (`POST /-/reload`); the lab renders the same way.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger("clusterscope_inventory.alerting")

SEVERITIES = ("critical", "warning", "info")
HEARTBEAT = "heartbeat"      # the Watchdog's receiver
NOBODY = "nobody"            # a receiver without endpoints: Alertmanager's UI only
WATCHDOG = "ClusterscopeWatchdog"
DEFAULT_REPEAT = "4h"

# Per integration: Alertmanager's key for the list, the keys a user may set (Alertmanager
# v0.28.1 config/notifiers.go: SlackConfig, PagerdutyConfig, EmailConfig, WebhookConfig),
# which of them name a secret file, which are required, and the literal secret each file
# key stands for (refused with a pointer to the file key).
@dataclass(frozen=True)
class Integration:
    key: str
    allowed: frozenset[str]
    files: frozenset[str]
    required: tuple[tuple[str, ...], ...]  # each tuple: one of these keys must be set
    secret_literals: dict[str, str] = field(default_factory=dict)


_COMMON = {"send_resolved"}
INTEGRATIONS: dict[str, Integration] = {
    "slack": Integration(
        "slack_configs",
        frozenset({*_COMMON, "api_url_file", "channel", "username", "title", "title_link",
                   "text", "pretext", "footer", "fallback", "color", "icon_emoji",
                   "icon_url", "link_names", "short_fields", "mrkdwn_in"}),
        frozenset({"api_url_file"}), (("api_url_file",),),
        {"api_url": "api_url_file"}),
    "pagerduty": Integration(
        "pagerduty_configs",
        frozenset({*_COMMON, "routing_key_file", "service_key_file", "url", "client",
                   "client_url", "description", "severity", "class", "component", "group",
                   "source", "details"}),
        frozenset({"routing_key_file", "service_key_file"}),
        (("routing_key_file", "service_key_file"),),
        {"routing_key": "routing_key_file", "service_key": "service_key_file"}),
    "email": Integration(
        "email_configs",
        frozenset({*_COMMON, "to", "from", "smarthost", "hello", "auth_username",
                   "auth_password_file", "auth_identity", "require_tls", "headers", "html",
                   "text"}),
        frozenset({"auth_password_file"}), (("to",), ("from",), ("smarthost",)),
        {"auth_password": "auth_password_file", "auth_secret": "auth_password_file"}),
    "webhook": Integration(
        "webhook_configs",
        frozenset({*_COMMON, "url_file", "max_alerts", "timeout"}),
        frozenset({"url_file"}), (("url_file",),),
        {"url": "url_file"}),
}
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_RECEIVER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
_DURATION = re.compile(r"^[0-9]+(ms|s|m|h|d)$")
_KEYS = {"critical", "warning", "info", "heartbeat", "receivers", "repeat_interval"}


@dataclass(frozen=True)
class Alerting:
    """Receivers by name (each a list of (integration, its keys)); which receiver gets
    each severity; the heartbeat's URL file."""
    receivers: dict[str, list[tuple[str, dict[str, Any]]]]
    routes: dict[str, str]            # severity -> receiver name ("info" may be NOBODY)
    heartbeat_url_file: str | None = None
    repeat_interval: str = DEFAULT_REPEAT

    def file_refs(self) -> list[tuple[str, str]]:
        """(where in the description, file name) of every secret file it reads."""
        out = ([("alerting.heartbeat.url_file", self.heartbeat_url_file)]
               if self.heartbeat_url_file else [])
        for name, configs in self.receivers.items():
            for kind, cfg in configs:
                out += [(f"alerting.receivers.{name}.{kind}.{k}", cfg[k])
                        for k in sorted(INTEGRATIONS[kind].files) if k in cfg]
        return out

    def files(self) -> list[str]:
        """Every secret file the configuration reads (names in the secrets directory)."""
        return [f for _, f in self.file_refs()]


def parse(data: Any, where: str, fail) -> Alerting:  # noqa: ANN001 - description's fail()
    """The `alerting:` section; `fail(where, problem)` builds the description's error."""
    if not isinstance(data, dict):
        raise fail(where, f"expected a mapping (critical, warning, receivers, ...), got"
                   f" {type(data).__name__}")
    unknown = sorted(str(k) for k in data if k not in _KEYS)
    if unknown:
        raise fail(where, f"unknown key(s) {', '.join(unknown)} (known:"
                   f" {', '.join(sorted(_KEYS))})")
    raw = data.get("receivers")
    if not isinstance(raw, dict) or not raw:
        raise fail(f"{where}.receivers", "expected a mapping of receiver names to their"
                   " integrations (slack, pagerduty, email, webhook)")
    receivers: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for name, integrations in raw.items():
        at = f"{where}.receivers.{name}"
        if not isinstance(name, str) or not _RECEIVER.match(name) or name in (HEARTBEAT, NOBODY):
            raise fail(at, f"a receiver name is letters, digits, `_`, `.` or `-` and not"
                       f" {HEARTBEAT!r} or {NOBODY!r} (the generated configuration's own),"
                       f" got {name!r}")
        if not isinstance(integrations, dict) or not integrations:
            raise fail(at, f"expected one or more of {', '.join(INTEGRATIONS)}")
        configs: list[tuple[str, dict[str, Any]]] = []
        for kind, value in integrations.items():
            if kind not in INTEGRATIONS:
                raise fail(f"{at}.{kind}", f"not an integration clusterscope configures; use"
                           f" one of {', '.join(INTEGRATIONS)}")
            items = value if isinstance(value, list) else [value]
            for i, cfg in enumerate(items):
                configs.append((kind, _integration(kind, cfg, f"{at}.{kind}"
                                                   + (f"[{i}]" if isinstance(value, list) else ""),
                                                   fail)))
        receivers[name] = configs
    routes: dict[str, str] = {}
    for sev in SEVERITIES:
        target = data.get(sev)
        if target is None:
            if sev == "info":
                routes[sev] = NOBODY  # quiet: info alerts stay in Alertmanager's UI
                continue
            raise fail(f"{where}.{sev}", f"name the receiver of {sev} alerts (one of"
                       f" {', '.join(receivers)})")
        if target not in receivers:
            raise fail(f"{where}.{sev}", f"no receiver named {target!r} (receivers:"
                       f" {', '.join(receivers)})")
        routes[sev] = target
    heartbeat = data.get("heartbeat")
    url_file = None
    if heartbeat is not None:
        if not isinstance(heartbeat, dict) or set(heartbeat) != {"url_file"}:
            raise fail(f"{where}.heartbeat", "expected {url_file: <file in the secrets"
                       " directory>} (the dead man's switch URL carries a token: a file)")
        url_file = _file(heartbeat["url_file"], f"{where}.heartbeat.url_file", fail)
    repeat = data.get("repeat_interval", DEFAULT_REPEAT)
    if not isinstance(repeat, str) or not _DURATION.match(repeat):
        raise fail(f"{where}.repeat_interval", f"expected a duration such as 4h, got {repeat!r}")
    return Alerting(receivers, routes, url_file, repeat)


def _integration(kind: str, cfg: Any, where: str, fail) -> dict[str, Any]:  # noqa: ANN001
    spec = INTEGRATIONS[kind]
    if not isinstance(cfg, dict):
        raise fail(where, f"expected a mapping of Alertmanager's {spec.key} keys")
    for literal, file_key in spec.secret_literals.items():
        if literal in cfg:
            raise fail(f"{where}.{literal}", f"a credential stays out of the description:"
                       f" put it in a file in the secrets directory and name the file with"
                       f" `{file_key}`")
    unknown = sorted(str(k) for k in cfg if k not in spec.allowed)
    if unknown:
        raise fail(where, f"unknown key(s) {', '.join(unknown)} for {kind} (known:"
                   f" {', '.join(sorted(spec.allowed))})")
    for one_of in spec.required:
        if not any(k in cfg for k in one_of):
            raise fail(where, f"{kind} needs {' or '.join(one_of)}")
    out: dict[str, Any] = {}
    for k, v in cfg.items():
        if k in spec.files:
            out[k] = _file(v, f"{where}.{k}", fail)
        elif k in ("headers", "details", "short_fields", "mrkdwn_in"):
            out[k] = v
        elif not isinstance(v, str | bool | int) or isinstance(v, bool) != (
                k in ("send_resolved", "require_tls", "link_names", "short_fields")):
            want = "true or false" if k in ("send_resolved", "require_tls", "link_names") \
                else "a string or a number"
            raise fail(f"{where}.{k}", f"expected {want} (a {type(v).__name__} is given)")
        else:
            out[k] = v
    return out


def _file(value: Any, where: str, fail) -> str:  # noqa: ANN001
    if not isinstance(value, str) or not _FILE_NAME.match(value) or ".." in value:
        # the value is not repeated: where a file name belongs, a URL or key is often pasted
        looks = ("looks like a URL or a secret" if isinstance(value, str)
                 and ("://" in value or "/" in value or len(value) > 40)
                 else "is not a file name")
        raise fail(where, f"{looks}; expected the name of a file in the secrets directory"
                   " (letters, digits, `_`, `.`, `-`; no path) that holds it")
    return value


# -- the Alertmanager configuration -----------------------------------------------------
# A cause silences the symptoms it explains (kubernetes-mixin practice), and only symptoms
# of its severity or lower: a warning never mutes a critical alert (a page must not be
# silenced by a lesser cause that happens to be firing).
# (source alert, its severity, target alertname regex, labels both must share)
INHIBIT: list[tuple[str, str, str, list[str]]] = [
    # the exporter process does not answer: the cluster's other NDB warnings are noise
    # (their series are gone); whether the cluster itself is down is not known
    ("NdbExporterDown", "warning", "Ndb.+", ["cluster"]),
    # no SQL node reads the cluster: the cluster's other NDB alerts are symptoms
    ("NdbClusterUnreachable", "critical", "Ndb.+", ["cluster"]),
    # the node group's last replica explains its down nodes
    ("NdbNodeGroupLastReplica", "critical", "NdbDataNodeDown", ["cluster", "node_group"]),
    # a dead data node: its own derived alerts (links, CPU, memory)
    ("NdbDataNodeDown", "warning", "Ndb.+", ["cluster", "node_id"]),
    # the whole Galera cluster down: every other Galera alert of it
    ("GaleraClusterDown", "critical", "Galera.+", ["cluster"]),
    # a node that is down explains its own state. Not the smaller cluster: that is the
    # cluster-level signal (redundancy lost), also for garbd and unmonitored members
    ("GaleraNodeNotReady", "warning", "GaleraNodeOutOfSync|GaleraRecvQueueHigh|"
     "GaleraConnectionsHigh", ["cluster", "node"]),
    # lost quorum explains the rest of that cluster's Galera alerts
    ("GaleraNonPrimary", "critical", "GaleraClusterSizeReduced|GaleraNodeOutOfSync|"
     "GaleraFlowControlHigh", ["cluster"]),
]
_AT_MOST = {"critical": None, "warning": "warning|info", "info": "info"}


def inhibit_rules() -> list[dict]:
    rules = []
    for src, severity, target, equal in INHIBIT:
        targets = [f'alertname=~"{target}"', f'alertname!="{src}"']
        if _AT_MOST[severity]:
            targets.append(f'severity=~"{_AT_MOST[severity]}"')
        rules.append({"source_matchers": [f'alertname="{src}"'],
                      "target_matchers": targets, "equal": equal})
    return rules


def config(alerting: Alerting | None, secrets_dir: str | os.PathLike,
           group_wait: str = "30s", group_interval: str = "5m") -> dict:
    """alertmanager.yml for these settings; without any, every receiver has no endpoint
    (alerts are visible in Alertmanager's UI only)."""
    secrets = Path(secrets_dir)
    if alerting is None:
        alerting = Alerting({}, {sev: NOBODY for sev in SEVERITIES})
    group = {"group_wait": group_wait, "group_interval": group_interval}
    routes: list[dict] = [
        # the dead man's switch: repeated every minute, its absence is the signal
        {"receiver": HEARTBEAT, "matchers": [f'alertname="{WATCHDOG}"'],
         "group_wait": "0s", "group_interval": "1m", "repeat_interval": "1m"},
        {"receiver": alerting.routes["critical"], "matchers": ['severity="critical"']},
        {"receiver": alerting.routes["info"], "matchers": ['severity="info"']},
    ]
    receivers: list[dict] = []
    for name, configs in alerting.receivers.items():
        rec: dict[str, Any] = {"name": name}
        for kind, cfg in configs:
            spec = INTEGRATIONS[kind]
            rendered = {k: (str(secrets / v) if k in spec.files else v) for k, v in cfg.items()}
            rec.setdefault(spec.key, []).append(rendered)
        receivers.append(rec)
    heartbeat: dict[str, Any] = {"name": HEARTBEAT}
    if alerting.heartbeat_url_file:
        heartbeat["webhook_configs"] = [{"url_file": str(secrets / alerting.heartbeat_url_file),
                                         "send_resolved": False}]
    receivers.append(heartbeat)
    if NOBODY in alerting.routes.values():
        receivers.append({"name": NOBODY})
    return {
        "route": {"receiver": alerting.routes["warning"],
                  # one notification per alert and cluster: a rolling restart, or a quorum
                  # loss seen by every node, is one message, not one per node; the alerts
                  # inside still name their nodes
                  "group_by": ["alertname", "cluster"], **group,
                  "repeat_interval": alerting.repeat_interval, "routes": routes},
        "inhibit_rules": inhibit_rules(),
        "receivers": receivers,
    }


def render(alerting: Alerting | None, secrets_dir: str | os.PathLike,
           group_wait: str = "30s", group_interval: str = "5m") -> str:
    return ("# Generated by clusterscope_inventory from the description's `alerting:`"
            " section; do not edit\n# (edit clusterscope.yml: it is rewritten and"
            " Alertmanager reloaded when that changes).\n"
            + yaml.safe_dump(config(alerting, secrets_dir, group_wait, group_interval),
                             sort_keys=False, width=100))


class ConfigWriter:
    """Keeps `path` (Alertmanager's --config.file) equal to what the description says and
    asks Alertmanager at `reload_url` to reload after a change."""

    def __init__(self, path: str | os.PathLike, secrets_dir: str | os.PathLike,
                 reload_url: str | None = None, group_wait: str = "30s",
                 group_interval: str = "5m") -> None:
        self.path = Path(path)
        self.secrets_dir = secrets_dir
        self.reload_url = reload_url.rstrip("/") if reload_url else None
        self.group_wait, self.group_interval = group_wait, group_interval
        self.ok = True

    def update(self, alerting: Alerting | None) -> bool:
        """Write the configuration if it changed (atomically, 0644: Alertmanager runs as
        another user) and reload Alertmanager. True when the file changed.

        A named file missing from the secrets directory holds the section back: the last
        good configuration stays (a first start gets receivers without endpoints), and the
        log names the keys, not the file names (which may be pasted secrets)."""
        missing = [where for where, f in (alerting.file_refs() if alerting else [])
                   if not (Path(self.secrets_dir) / f).is_file()]
        if missing:
            self.ok = False
            log.error("alerting: %s name(s) a file that is not in %s (as this process sees"
                      " it): the `alerting:` section is not applied until it is there%s",
                      ", ".join(missing), self.secrets_dir,
                      "" if self.path.exists() else "; meanwhile alerts reach nobody")
            if self.path.exists():
                return False
            alerting = None
        text = render(alerting, self.secrets_dir, self.group_wait, self.group_interval)
        try:
            if self.path.exists() and self.path.read_text() == text:
                return False
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".alertmanager.", dir=self.path.parent)
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, self.path)
        except OSError as exc:
            self.ok = False
            log.error("cannot write the Alertmanager configuration %s: %s", self.path, exc)
            return False
        self.ok = not missing
        if alerting is None and not missing:
            log.warning("the description has no `alerting:` section: alerts reach nobody"
                        " (Alertmanager's UI only)")
        log.info("wrote %s", self.path)
        self.reload()
        return True

    def reload(self) -> None:
        if not self.reload_url:
            return
        req = urllib.request.Request(f"{self.reload_url}/-/reload", data=b"", method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10):
                log.info("Alertmanager at %s reloaded its configuration", self.reload_url)
        except urllib.error.HTTPError as exc:
            # Alertmanager answers 500 with the reason when it rejects the file
            log.error("Alertmanager at %s rejected the configuration: %s", self.reload_url,
                      exc.read().decode(errors="replace").strip()[:500])
        except (urllib.error.URLError, OSError) as exc:
            # not up yet: it reads the file when it starts
            log.info("Alertmanager at %s not reached for a reload (%s); it reads the file"
                     " when it starts", self.reload_url, getattr(exc, "reason", exc))
