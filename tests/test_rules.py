"""The generated rules as a whole: promtool and vmalert accept every file, the files are
current, every alert carries its labels, annotations and a runbook that starts with its own
component's first steps and resolves where the lab serves it; and the loadgen's alerts
(`promtool test rules` with series built from the field facts)."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml
from helpers import REPO
from rules_scenarios import (
    RULE_FILES,
)

from clusterscope import paths
from clusterscope.rules import generate

# the alerts on log lines: LogsQL (tests/test_logs_alerts.py runs them), not for promtool
LOG_RULE_FILES = sorted((REPO / "rules" / "vlogs").glob("*.yml"))


@pytest.mark.tools("promtool")
def test_promtool_check_rules_accepts_every_file() -> None:
    assert RULE_FILES, "no rules/*.yml: run clusterscope rules generate"
    proc = subprocess.run(["promtool", "check", "rules", *map(str, RULE_FILES)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.tools("vmalert")
def test_vmalert_accepts_the_rules() -> None:
    proc = subprocess.run(["vmalert", f"-rule={REPO}/rules/*.yml", "-dryRun"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_generated_rules_are_current() -> None:
    assert paths.stale(generate.expected_files(), generate.OWNED) == [], \
        "run clusterscope rules generate"


def test_every_alert_has_labels_annotations_and_a_runbook_page() -> None:
    seen = []
    for f in [*RULE_FILES, *LOG_RULE_FILES]:
        for group in yaml.safe_load(f.read_text())["groups"]:
            for rule in group["rules"]:
                if "record" in rule:
                    assert re.fullmatch(r"[a-z_]+:[a-z0-9_]+:[a-z0-9_]+", rule["record"]), rule
                    continue
                name = rule["alert"]
                seen.append(name)
                assert re.fullmatch(
                    r"(Ndb|Galera|Host|Loadgen|Experiment|Clusterscope|Change)[A-Za-z]+", name)
                assert rule["labels"]["severity"] in ("critical", "warning", "info")
                ann = rule["annotations"]
                assert {"summary", "description", "runbook_url", "dashboard_url"} <= set(ann)
                assert ann["runbook_url"].endswith(f"/runbooks/{name}.md")
                page = REPO / "runbooks" / f"{name}.md"
                text = page.read_text()
                for section in ("## Meaning", "## Impact", "## Diagnosis", "## Mitigation"):
                    assert section in text, f"{page} lacks {section}"
    pages = {p.stem for p in (REPO / "runbooks").glob("*.md")} - {"README"}
    assert sorted(pages) == sorted(seen), "alerts and runbook pages must be one to one"


def test_a_runbook_starts_with_its_own_components_first_steps() -> None:
    """An on-call reader of a stack alert is told to look at the stack, not the loadgen: each
    component's pages open their Diagnosis with that component's commands."""
    opening = {"Ndb": "ndb_mgm -e show", "Galera": "SHOW GLOBAL STATUS WHERE Variable_name",
               "Host": "df -h; df -i", "Clusterscope": "docker compose ps",
               "Loadgen": "loadgen_(window|pair|overhead|unit)",
               "Experiment": "loadgen_(window|pair|overhead|unit)",
               "Change": "clusterscope changes --since"}
    for page in (REPO / "runbooks").glob("*.md"):
        if page.stem == "README":
            continue
        prefix = re.match(r"[A-Z][a-z]+", page.stem).group(0)
        diagnosis = page.read_text().split("## Diagnosis", 1)[1].split("## Mitigation")[0]
        assert opening[prefix] in diagnosis, f"{page.name}: not its component's first steps"


def test_runbook_links_resolve_where_the_lab_serves_them(tmp_path) -> None:
    """Every alert's runbook_url, with vmalert's external URL in place of
    {{ $externalURL }} (the lab's webhook server, standing in for compose's Grafana), serves
    that alert's page."""
    import threading
    import urllib.request
    from http.server import ThreadingHTTPServer

    from clusterscope.lab.webhook import make_handler

    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(
        tmp_path / "n.jsonl", REPO / "runbooks", "http://127.0.0.1:1"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for f in RULE_FILES:
            for group in yaml.safe_load(f.read_text())["groups"]:
                for rule in group["rules"]:
                    if "alert" not in rule:
                        continue
                    url = rule["annotations"]["runbook_url"].replace("{{ $externalURL }}", base)
                    assert url.startswith(base), url  # no placeholder host left
                    with urllib.request.urlopen(url, timeout=5) as r:
                        assert r.read().decode().startswith(f"# {rule['alert']}\n")
    finally:
        server.shutdown()
