"""Alerts reach a person: the receivers a user writes in the description's `alerting:`
section, rendered into alertmanager.yml by the real inventory, run by the real Alertmanager
and amtool of the version compose pins (built from its Go module).

Every integration delivers to a local receiver its protocol allows: Slack's incoming
webhook, PagerDuty's Events API v2 and the webhook are HTTP (a local server records the
posts, given as the integrations' own URL settings: Slack's api_url and the webhook's URL
from their files, PagerDuty's `url`); e-mail goes to a local SMTP server (aiosmtpd)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from helpers import eventually
from lanes import starts

from clusterscope import gotools
from clusterscope import maintenance as mw
from clusterscope.rules import alertmanager, generate
from clusterscope.rules.rules_config import load_config

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- local receivers --------------------------------------------------------------------------
class Posts:
    """An HTTP server that records every POST (path, JSON body)."""

    def __init__(self) -> None:
        self.got: list[tuple[str, dict]] = []
        lock = threading.Lock()
        got = self.got

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with lock:
                    got.append((self.path, json.loads(body or b"{}")))
                # PagerDuty's Events API answers 202 with a status; the others 200
                self.send_response(202 if self.path.startswith("/pagerduty") else 200)
                out = b'{"status":"success","message":"Event processed"}'
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *a: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def at(self, path: str) -> list[dict]:
        return [body for p, body in list(self.got) if p == path]


class Mails:
    """A local SMTP server (aiosmtpd) keeping every message it receives."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.got: list[tuple[str, list[str], str]] = []
        got = self.got

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # noqa: N802, ANN001, ANN201
                got.append((envelope.mail_from, list(envelope.rcpt_tos),
                            envelope.content.decode(errors="replace")))
                return "250 OK"

        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()


# -- the description a user writes ------------------------------------------------------------
def readme_alerting() -> dict:
    """The `alerting:` block README's "Who is told" shows, as a user copies it."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("<!-- alerting-example -->", 1)[1].split("```yaml", 1)[1]
    return yaml.safe_load(block.split("```", 1)[0])["alerting"]


CLUSTER = {"name": "g", "kind": "galera", "nodes": [{"name": "node1", "address": "127.0.0.1:1"}]}


class Stack:
    """A real inventory writing a real Alertmanager's configuration from a description."""

    def __init__(self, tmp: Path, alerting: dict, secrets: dict[str, str]) -> None:
        self.tmp = tmp
        self.desc = tmp / "clusterscope.yml"
        self.secrets = tmp / "secrets" / "alerting"
        self.secrets.mkdir(parents=True)
        for name, text in secrets.items():
            (self.secrets / name).write_text(text + "\n")
        self.write(alerting)
        self.config = tmp / "am" / "alertmanager.yml"
        self.am_port, inv_port = free_port(), free_port()
        self.am = f"http://127.0.0.1:{self.am_port}"
        self.inventory_url = f"http://127.0.0.1:{inv_port}"
        self.inventory = subprocess.Popen(
            [sys.executable, "-m", "clusterscope_inventory", f"--config.file={self.desc}",
             f"--web.listen-address=127.0.0.1:{inv_port}",
             f"--alertmanager.config-file={self.config}",
             f"--alertmanager.secrets-dir={self.secrets}", f"--alertmanager.url={self.am}",
             "--alertmanager.group-wait=1s", "--alertmanager.group-interval=2s"],
            stdout=subprocess.DEVNULL, stderr=open(tmp / "inventory.log", "w"))  # noqa: SIM115
        eventually(lambda: self.config.exists(), 30, "the inventory wrote alertmanager.yml")
        self.alertmanager = subprocess.Popen(
            [str(gotools.build(gotools.TOOLS["alertmanager"])), f"--config.file={self.config}",
             f"--storage.path={tmp / 'am-data'}", f"--web.listen-address=127.0.0.1:{self.am_port}",
             "--cluster.listen-address="], stdout=subprocess.DEVNULL,
            stderr=open(tmp / "alertmanager.log", "w"))  # noqa: SIM115
        eventually(lambda: urllib.request.urlopen(f"{self.am}/-/ready", timeout=2).status
                   == 200, 30, "Alertmanager ready")

    def write(self, alerting: dict) -> None:
        tmp = self.desc.with_suffix(".tmp")
        tmp.write_text(yaml.safe_dump({"clusters": [CLUSTER], "alerting": alerting}))
        tmp.replace(self.desc)

    def touch_inventory(self) -> None:
        """The inventory re-reads the description when it is asked (a scrape)."""
        urllib.request.urlopen(f"{self.inventory_url}/metrics", timeout=5).read()

    def post(self, alerts: list[dict]) -> None:
        body = json.dumps([{"labels": a, "annotations": {"summary": "test " + a["alertname"]}}
                           for a in alerts]).encode()
        req = urllib.request.Request(f"{self.am}/api/v2/alerts", body,
                                     {"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=5).read()

    def alerts(self) -> list[dict]:
        with urllib.request.urlopen(f"{self.am}/api/v2/alerts", timeout=5) as r:
            return json.load(r)

    def close(self) -> None:
        for p in (self.alertmanager, self.inventory):
            p.terminate()
            p.wait(timeout=10)


def amtool_route(config: Path, labels: str) -> str:
    amtool = gotools.build(gotools.TOOLS["amtool"])
    proc = subprocess.run([str(amtool), "config", "routes", "test", f"--config.file={config}",
                           *labels.split()], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.strip()


# -- routes from the settings a user writes ---------------------------------------------------
def secret_files(tmp: Path, alerting: dict) -> Path:
    """The secrets directory a user makes for an `alerting:` section: each file it names,
    holding a placeholder (the configuration refers to them by path)."""
    from clusterscope_inventory.alerting import parse

    d = tmp / "secrets" / "alerting"
    d.mkdir(parents=True, exist_ok=True)
    for name in parse(alerting, "alerting", lambda w, p: ValueError(f"{w}: {p}")).files():
        (d / name).write_text("placeholder\n")
    return d


@pytest.fixture(scope="module")
@starts("python", "amtool")
def readme_config(tmp_path_factory) -> Path:
    """alertmanager.yml as the inventory renders README's example (no Alertmanager)."""
    tmp = tmp_path_factory.mktemp("readme")
    desc = tmp / "clusterscope.yml"
    desc.write_text(yaml.safe_dump({"clusters": [CLUSTER], "alerting": readme_alerting()}))
    out = tmp / "alertmanager.yml"
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from clusterscope_inventory.description import load;"
         " from clusterscope_inventory.alerting import ConfigWriter;"
         " ConfigWriter(sys.argv[2], sys.argv[3]).update(load(sys.argv[1]).alerting)",
         str(desc), str(out), str(secret_files(tmp, readme_alerting()))],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    amtool = gotools.build(gotools.TOOLS["amtool"])
    check = subprocess.run([str(amtool), "check-config", str(out)], capture_output=True,
                           text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f" - {len(alertmanager.INHIBIT)} inhibit rules" in check.stdout
    return out


@pytest.mark.parametrize("labels,receiver", [
    # a page and a warning reach different people; info stays in Alertmanager's UI
    ("alertname=NdbClusterUnreachable severity=critical cluster=c", "oncall"),
    ("alertname=GaleraClusterDown severity=critical cluster=g", "oncall"),
    ("alertname=NdbRestartTimeRegressed severity=warning cluster=c node_id=2", "team"),
    ("alertname=HostFilesystemFillingUp severity=warning cluster=g node=node1", "team"),
    ("alertname=GaleraNodeRestarted severity=info cluster=g node=node1", "nobody"),
    # the dead man's switch, whatever its severity says
    ("alertname=ClusterscopeWatchdog severity=info", "heartbeat"),
])
@pytest.mark.tools("amtool")
def test_amtool_routes_each_severity_from_the_settings_a_user_writes(
        readme_config, labels, receiver) -> None:
    """Critical has its own receiver, info a quiet one, the Watchdog the heartbeat.
    Before: `critical` and `default` were one webhook URL, info went with warnings, and
    the heartbeat had no setting."""
    assert amtool_route(readme_config, labels) == receiver


def test_the_heartbeat_and_every_credential_are_files(readme_config) -> None:
    cfg = yaml.safe_load(readme_config.read_text())
    receivers = {r["name"]: r for r in cfg["receivers"]}
    hb = receivers["heartbeat"]["webhook_configs"][0]
    assert hb["url_file"].endswith("/secrets/alerting/" + Path(hb["url_file"]).name)
    assert not hb["send_resolved"]
    text = readme_config.read_text()
    assert not re.search(r"(api_url|routing_key|auth_password|service_key|\burl):", text)
    assert receivers["nobody"] == {"name": "nobody"}


@pytest.mark.tools("python")
def test_a_literal_secret_in_the_description_is_refused(tmp_path) -> None:
    desc = tmp_path / "clusterscope.yml"
    desc.write_text(yaml.safe_dump({"clusters": [CLUSTER], "alerting": {
        "critical": "x", "warning": "x",
        "receivers": {"x": {"slack": {"api_url": "https://hooks.example/T0/B0/secret"}}}}}))
    proc = subprocess.run([sys.executable, "-m", "clusterscope_inventory",
                           f"--config.file={desc}", "--check"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "alerting.receivers.x.slack.api_url" in proc.stderr and "api_url_file" in proc.stderr
    assert "hooks.example" not in proc.stderr  # the secret itself is never echoed


# -- delivery by the real Alertmanager --------------------------------------------------------
@pytest.fixture(scope="module")
@starts("alertmanager", "python")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("am")
    posts, mails = Posts(), Mails()
    alerting = {
        "critical": "oncall", "warning": "team", "info": "quiet",
        "heartbeat": {"url_file": "heartbeat_url"},
        "receivers": {
            "oncall": {"pagerduty": {"routing_key_file": "pagerduty_key",
                                     "url": f"{posts.url}/pagerduty"},
                       "slack": {"api_url_file": "slack_url", "channel": "#pages",
                                 "send_resolved": True}},
            "team": {"email": {"to": "dba@example.com", "from": "clusterscope@example.com",
                               "smarthost": f"127.0.0.1:{mails.port}", "require_tls": False},
                     "webhook": {"url_file": "team_url"}},
            "quiet": {"webhook": {"url_file": "quiet_url"}},
        }}
    secrets = {"pagerduty_key": "R0UTINGKEY0123456789abcdef0123456",
               "slack_url": f"{posts.url}/slack", "team_url": f"{posts.url}/team",
               "quiet_url": f"{posts.url}/quiet", "heartbeat_url": f"{posts.url}/heartbeat"}
    s = Stack(tmp, alerting, secrets)
    try:
        yield s, posts, mails
    finally:
        s.close()
        mails.controller.stop()
        posts.server.shutdown()


def test_each_integration_delivers_to_its_receiver(stack) -> None:
    """A critical alert reaches PagerDuty (Events API v2, the routing key read from its
    file) and Slack (the incoming-webhook payload); a warning reaches e-mail and the
    webhook; the Watchdog the heartbeat URL. Before: one webhook URL, and a Slack URL in
    it failed quietly (Slack does not take Alertmanager's webhook payload)."""
    s, posts, mails = stack
    t0 = time.monotonic()
    s.post([{"alertname": "NdbClusterUnreachable", "severity": "critical", "cluster": "c"},
            {"alertname": "HostFilesystemFillingUp", "severity": "warning", "cluster": "c",
             "node": "data1"},
            {"alertname": "ClusterscopeWatchdog", "severity": "info"}])
    pd = eventually(lambda: posts.at("/pagerduty"), 30, "PagerDuty event")[0]
    assert pd["routing_key"] == "R0UTINGKEY0123456789abcdef0123456"
    assert pd["event_action"] == "trigger" and "NdbClusterUnreachable" in pd["payload"]["summary"]
    slack = eventually(lambda: posts.at("/slack"), 30, "Slack message")[0]
    assert slack["channel"] == "#pages" and "NdbClusterUnreachable" in json.dumps(slack)
    hook = eventually(lambda: posts.at("/team"), 30, "webhook")[0]
    assert [a["labels"]["alertname"] for a in hook["alerts"]] == ["HostFilesystemFillingUp"]
    mail = eventually(lambda: mails.got, 30, "e-mail")[0]
    assert mail[1] == ["dba@example.com"] and "HostFilesystemFillingUp" in mail[2]
    beat = eventually(lambda: posts.at("/heartbeat"), 30, "heartbeat")[0]
    assert beat["alerts"][0]["labels"]["alertname"] == "ClusterscopeWatchdog"
    # the critical alert went to the pager only, the warning to the team only
    assert not any("NdbClusterUnreachable" in json.dumps(b) for b in posts.at("/team"))
    assert not any("HostFilesystemFillingUp" in json.dumps(b) for b in posts.at("/slack"))
    print(f"delivered to every integration within {time.monotonic() - t0:.1f} s")


def test_a_changed_description_reaches_alertmanager_without_a_restart(stack) -> None:
    """The user points critical alerts at another receiver: the inventory rewrites the file
    and Alertmanager reloads it."""
    s, posts, _ = stack
    before = yaml.safe_load(s.config.read_text())
    alerting = yaml.safe_load(s.desc.read_text())["alerting"]
    s.write({**alerting, "critical": "quiet"})
    try:
        s.touch_inventory()

        def live_route() -> bool:
            with urllib.request.urlopen(f"{s.am}/api/v2/status", timeout=5) as r:
                live = yaml.safe_load(json.load(r)["config"]["original"])
            crit = [x for x in live["route"]["routes"] if x["matchers"] == ['severity="critical"']]
            return crit and crit[0]["receiver"] == "quiet"
        eventually(live_route, 30, "Alertmanager runs the new route")
    finally:
        s.write(alerting)
        s.touch_inventory()
    eventually(lambda: yaml.safe_load(s.config.read_text()) == before, 30, "restored")


def test_a_cause_silences_its_symptoms_but_a_warning_never_a_critical(stack) -> None:
    """NdbExporterDown (a warning: the exporter process) used to inhibit every NDB
    alert of its cluster, the critical ones included. Now it mutes the cluster's warnings
    only; a critical cause (the cluster unreachable, a node group's last replica, a Galera
    cluster down) mutes what it explains."""
    s, _, _ = stack
    w, c = {"severity": "warning"}, {"severity": "critical"}
    alerts = {
        "exporter": {"alertname": "NdbExporterDown", "cluster": "c1", **w},
        "lcp": {"alertname": "NdbLcpStalled", "cluster": "c1", **w},
        "unreachable": {"alertname": "NdbClusterUnreachable", "cluster": "c1", **c},
        "replica": {"alertname": "NdbNodeGroupLastReplica", "cluster": "c2", "node_group": "0",
                    **c},
        "down": {"alertname": "NdbDataNodeDown", "cluster": "c2", "node_id": "3",
                 "node_group": "0", **w},
        "other": {"alertname": "NdbDataNodeDown", "cluster": "c2", "node_id": "5",
                  "node_group": "1", **w},
        "gdown": {"alertname": "GaleraClusterDown", "cluster": "g", **c},
        "nonprimary": {"alertname": "GaleraNonPrimary", "cluster": "g", "node": "node1", **c},
        "notready": {"alertname": "GaleraNodeNotReady", "cluster": "g", "node": "node2", **w},
    }
    s.post(list(alerts.values()))

    def state() -> dict[str, bool] | None:
        out = {}
        for key, labels in alerts.items():
            match = [a for a in s.alerts() if a["labels"] == labels]
            if match:
                out[key] = bool(match[0]["status"]["inhibitedBy"])
        return out if len(out) == len(alerts) and out["lcp"] else None

    got = eventually(state, 30, "inhibitions applied")
    # the exporter's warning does not mute the unreachable cluster (before: it did); the
    # critical page mutes the cluster's NDB warnings, the exporter's included
    assert {k for k, v in got.items() if v} == {"lcp", "exporter", "down", "nonprimary",
                                                 "notready"}


def test_every_inhibition_names_alerts_the_rules_have() -> None:
    names = {a.name: a.severity for g in generate.all_groups(load_config()) for a in g.alerts}
    for src, severity, target, _ in alertmanager.INHIBIT:
        assert names[src] == severity, src
        assert any(re.fullmatch(target, n) for n in names if n != src), target


def test_a_maintenance_window_silences_the_cluster_and_ends(stack) -> None:
    """`clusterscope maintenance start --cluster X` silences X's alerts in
    Alertmanager (a planned restart pages nobody), not another cluster's and not the
    Watchdog; `stop` ends it."""
    s, _, _ = stack
    env_cli = [sys.executable, "-m", "clusterscope.cli", "maintenance", "--alertmanager", s.am]
    subprocess.run([*env_cli, "start", "--cluster", "maint", "--duration", "30m",
                    "--comment", "rolling restart"], check=True, capture_output=True,
                   text=True, timeout=60)
    ours = {"alertname": "NdbDataNodeDown", "cluster": "maint", "node_id": "2",
            "severity": "warning"}
    theirs = {"alertname": "NdbDataNodeDown", "cluster": "other", "node_id": "2",
              "severity": "warning"}
    s.post([ours, theirs])

    def silenced(labels: dict) -> bool | None:
        match = [a for a in s.alerts() if a["labels"] == labels]
        return bool(match[0]["status"]["silencedBy"]) if match else None

    eventually(lambda: silenced(ours), 30, "the cluster's alert silenced")
    assert silenced(theirs) is False
    listed = subprocess.run([*env_cli, "list"], capture_output=True, text=True, timeout=60)
    assert "cluster=maint" in listed.stdout and "rolling restart" in listed.stdout
    assert len(mw.ours(s.am, "maint")) == 1
    subprocess.run([*env_cli, "stop", "--cluster", "maint"], check=True, timeout=60)
    s.post([ours])
    eventually(lambda: silenced(ours) is False, 30, "the window ended")
    bad = subprocess.run([*env_cli, "start", "--cluster", "x", "--duration", "soon"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "--duration" in bad.stderr
