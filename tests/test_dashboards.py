"""The generated dashboards: up to date, valid for the SDK's schema, complete panels, stable
uids, and no metric that nothing in the product exports or records."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from grafana_foundation_sdk.cog import plugins
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard

from clusterscope import paths
from clusterscope.dashboards import render, uids
from clusterscope.dashboards.explain import metric_names
from clusterscope.dashboards.verify import targets
from clusterscope.logs import logsql
from clusterscope.logs.logsql import DATASOURCE_TYPE as LOGS_TYPE

REPO = Path(__file__).resolve().parents[1]
JSON_DIR = REPO / "dashboards" / "json"
COMMITTED = {p.stem: json.loads(p.read_text()) for p in sorted(JSON_DIR.glob("*.json"))}
NO_UNIT = {"row", "text", "logs"}
NO_QUERY = {"row", "text"}


def all_panels(model: dict):
    for p in model["panels"]:
        yield p
        yield from p.get("panels", [])


def test_regenerating_changes_nothing(tmp_path: Path) -> None:
    assert paths.stale(render.expected_files(), [(JSON_DIR, "*.json")]) == []
    paths.write(render.expected_files(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in
                                                                JSON_DIR.glob("*.json"))
    for p in tmp_path.iterdir():
        assert p.read_text() == (JSON_DIR / p.name).read_text(), p.name


def test_check_reports_a_hand_edited_file(tmp_path: Path) -> None:
    expected = render.expected_files(tmp_path)
    paths.write(expected)
    victim = tmp_path / f"{uids.GALERA}.json"
    victim.write_text(victim.read_text().replace("Cluster size", "Cluster siz"))
    (tmp_path / "stray.json").write_text("{}")
    problems = paths.stale(expected, [(tmp_path, "*.json")])
    assert any(uids.GALERA in p and "out of date" in p for p in problems)
    assert any("stray.json" in p for p in problems)


def _is_subset(orig: object, back: object, path: str = "") -> list[str]:
    """Paths of `orig` that did not survive the round trip through the SDK's model."""
    if isinstance(orig, dict):
        if not isinstance(back, dict):
            return [path]
        return [m for k, v in orig.items()
                for m in ([f"{path}/{k}"] if k not in back else _is_subset(v, back[k],
                                                                           f"{path}/{k}"))]
    if isinstance(orig, list):
        if not isinstance(back, list) or len(back) != len(orig):
            return [path]
        return [m for i, (a, b) in enumerate(zip(orig, back, strict=True))
                for m in _is_subset(a, b, f"{path}[{i}]")]
    return [] if orig == back else [f"{path}: {orig!r} != {back!r}"]


@pytest.mark.parametrize("uid", sorted(COMMITTED))
def test_json_validates_against_the_sdk_schema(uid: str) -> None:
    # Decoding into the SDK's typed model and encoding again keeps exactly the fields the
    # schema knows: a misspelt or misplaced field would be lost on the way back.
    plugins.register_default_plugins()
    model = COMMITTED[uid]
    back = json.loads(JSONEncoder(sort_keys=True).encode(Dashboard.from_json(model)))
    # except an annotation's `target`: the SDK types it as the built-in Grafana datasource's
    # (limit, matchAny, tags, type; grafana_foundation_sdk models/dashboard.py
    # AnnotationTarget: "TODO: this should be a regular DataQuery"), while a plugin's
    # annotation runs its own query there; test_logs_annotations_carry_the_plugins_query
    # checks that one
    lost = [p for p in _is_subset(model, back)
            if not re.fullmatch(r"/annotations/list\[\d+\]/target/\w+", p)]
    assert lost == []


@pytest.mark.parametrize("uid", sorted(COMMITTED))
def test_logs_annotations_carry_the_plugins_query(uid: str) -> None:
    for a in COMMITTED[uid].get("annotations", {}).get("list", []):
        if a["datasource"]["type"] != LOGS_TYPE:
            continue
        # Grafana runs `target` through the datasource with refId "Anno", which the
        # plugin turns into annotations (victorialogs-datasource v0.30.1
        # src/transformers/types.ts ANNOTATIONS_REF_ID); a log query, not stats
        assert a["target"]["refId"] == "Anno" and a["target"]["queryType"] == "instant"
        assert a["target"]["expr"] in {x["expr"] for x in
                                       [*logsql.ANNOTATIONS, logsql.CHANGES_ANNOTATION]}


@pytest.mark.parametrize("uid", sorted(COMMITTED))
def test_every_dashboard_marks_the_changes_of_its_clusters(uid: str) -> None:
    """Configuration and version changes are annotations on every dashboard, filtered by
    the dashboard's own cluster variable (their query is run in the lab by
    tests/test_walkthrough.py through `dashboards verify`)."""
    model = COMMITTED[uid]
    names = [v["name"] for v in model["templating"]["list"]]
    marks = [a for a in model["annotations"]["list"]
             if a["name"] == logsql.CHANGES_ANNOTATION["name"]]
    assert len(marks) == 1 and "cluster" in names
    assert marks[0]["target"]["expr"].startswith('{component="changes", cluster=~"$cluster"}')
    assert marks[0]["enable"] and marks[0]["datasource"]["type"] == LOGS_TYPE


def test_uids_are_the_published_ones_and_stable() -> None:
    assert sorted(COMMITTED) == sorted(uids.ALL)
    for uid, model in COMMITTED.items():
        assert model["uid"] == uid
    # These uids are a contract (alerts' dashboard_url, links); changing one breaks links.
    assert uids.ALL == ("clusterscope-ndb-overview", "clusterscope-ndb-node",
                        "clusterscope-ndb-restarts", "clusterscope-galera",
                        "clusterscope-experiments", "clusterscope-logs")


def test_alert_dashboard_urls_point_at_existing_dashboards() -> None:
    urls = []
    for f in sorted((REPO / "rules").rglob("*.yml")):  # metric and log rules
        for group in (yaml.safe_load(f.read_text()) or {}).get("groups", []):
            for rule in group.get("rules", []):
                url = rule.get("annotations", {}).get("dashboard_url")
                if url:
                    urls.append((rule["alert"], url))
    for alert, url in urls:
        uid = url.split("/d/", 1)[1].split("?")[0].split("/")[0]
        assert uid in uids.ALL, f"{alert}: dashboard_url {url} names no dashboard"
        variables = {v["name"] for v in COMMITTED[uid]["templating"]["list"]}
        for name in re.findall(r"var-(\w+)=", url):
            assert name in variables, f"{alert}: {uid} has no variable {name!r} ({url})"


def test_links_between_dashboards_resolve() -> None:
    for uid, model in COMMITTED.items():
        links = [lk["url"] for lk in model["links"] if lk["type"] == "link"]
        assert links, f"{uid} links to no other dashboard"
        for url in links:
            assert url.removeprefix("/d/") in uids.ALL, f"{uid}: link {url}"
        for panel in all_panels(model):
            for lk in panel.get("fieldConfig", {}).get("defaults", {}).get("links", []):
                target = lk["url"].split("/d/", 1)[1].split("?")[0]
                assert target in uids.ALL, f"{uid}/{panel['title']}: {lk['url']}"


@pytest.mark.parametrize("uid", sorted(COMMITTED))
def test_every_panel_has_datasource_query_and_unit(uid: str) -> None:
    model = COMMITTED[uid]
    ids = [p["id"] for p in all_panels(model)]
    assert len(ids) == len(set(ids)) and 0 not in ids
    for panel in all_panels(model):
        kind, title = panel["type"], panel.get("title", "")
        if kind not in NO_QUERY:
            # the datasource variables, never a fixed uid (an imported dashboard must work
            # in a Grafana whose datasources carry other uids)
            assert panel.get("datasource", {}).get("uid") in ("${datasource}", "${logs_ds}"), \
                title
            assert panel.get("targets"), f"{title}: no query"
            refs = [t["refId"] for t in panel["targets"]]
            assert all(refs) and len(refs) == len(set(refs)), f"{title}: refIds {refs}"
            for t in panel["targets"]:
                assert t.get("expr", "").strip(), f"{title}: empty query"
                assert t["datasource"] == panel["datasource"], title
        if kind not in NO_UNIT:
            assert panel.get("fieldConfig", {}).get("defaults", {}).get("unit"), \
                f"{title}: no unit"


@pytest.mark.parametrize("uid", sorted(COMMITTED))
def test_variables_have_cluster_and_a_node_or_experiment(uid: str) -> None:
    variables = COMMITTED[uid]["templating"]["list"]
    names = [v["name"] for v in variables if v["type"] == "query"]
    assert names[0] == "cluster"
    assert {"node_id", "node", "experiment"} & set(names[1:])
    for v in variables:
        if v["type"] != "query":
            continue
        assert v["datasource"]["uid"] in ("${datasource}", "${logs_ds}")
        if v["datasource"]["type"] == LOGS_TYPE:
            # the plugin's field values (victorialogs-datasource v0.30.1 src/types.ts
            # VariableQuery): the cluster and node stream fields the shipper writes
            assert v["query"]["type"] == "fieldValue" and v["query"]["field"] == v["name"]
        else:
            assert v["query"].startswith("label_values(")


def provisioned_datasources() -> dict[str, str]:
    spec = yaml.safe_load((REPO / "dashboards" / "provisioning" / "datasources"
                           / "clusterscope.yaml").read_text())
    return {d["type"]: d["uid"] for d in spec["datasources"]}


@pytest.mark.parametrize("uid", sorted(COMMITTED))
def test_datasource_variables_default_to_the_provisioned_uids(uid: str) -> None:
    chosen = {v["name"]: (v["query"], v["current"]["value"])
              for v in COMMITTED[uid]["templating"]["list"] if v["type"] == "datasource"}
    by_type = provisioned_datasources()
    assert chosen == {"datasource": ("prometheus", by_type["prometheus"]),
                      "logs_ds": (LOGS_TYPE, by_type[LOGS_TYPE])}


def thresholds(panel: dict) -> list:
    return panel.get("fieldConfig", {}).get("defaults", {}).get("thresholds", {}).get("steps")


@pytest.mark.parametrize("uid", sorted(COMMITTED))
def test_no_stat_is_coloured_by_grafanas_default_threshold(uid: str) -> None:
    # Grafana's default thresholds (base green, 80 red) paint an uptime of 81 s or a
    # restart of 81 s red; every coloured tile says what its colours mean
    for panel in all_panels(COMMITTED[uid]):
        if panel["type"] in ("stat", "bargauge"):
            defaults = panel["fieldConfig"]["defaults"]
            assert defaults.get("mappings") or thresholds(panel), panel["title"]


def test_alert_thresholds_are_drawn_from_the_rules_config() -> None:
    cfg = yaml.safe_load((REPO / "rules" / "config.yaml").read_text())
    want = {(uids.NDB_OVERVIEW, "REDO used (fullest log part)"): cfg["ndb"]["redo_used_ratio_max"],
            (uids.NDB_OVERVIEW, "Memory used"): cfg["ndb"]["data_memory_used_ratio_max"],
            (uids.NDB_NODE, "CPU per thread"): cfg["ndb"]["ldm_cpu_percent_max"],
            (uids.NDB_NODE, "LDM CPU mean / max"): cfg["ndb"]["ldm_cpu_percent_max"],
            (uids.NDB_NODE, "REDO log space"): cfg["ndb"]["redo_used_ratio_max"],
            (uids.NDB_RESTARTS, "Verdict: ratio to baseline"):
                cfg["ndb"]["restart_regression_factor"],
            (uids.GALERA, "Flow control paused"): cfg["galera"]["flow_control_paused_max"]}
    for (uid, title), value in want.items():
        panel = next(p for p in all_panels(COMMITTED[uid])
                     if p.get("title") == title and p["type"] != "row")
        assert [s["value"] for s in thresholds(panel)][1:] == [value], (uid, title)


def test_a_down_node_and_a_dead_exporter_are_shown_not_blank() -> None:
    overview = {p.get("title"): p for p in all_panels(COMMITTED[uids.NDB_OVERVIEW])}
    exprs = {title: " ".join(t["expr"] for t in p.get("targets", []))
             for title, p in overview.items()}
    # a stopped data node has no ndbinfo.nodes row: DOWN comes from the configured nodes
    assert "ndb_data_node_running" in exprs["Node status"]
    assert "ndb_data_node_running" in exprs["Data nodes started / configured"]
    for title in ("Exporter up", "Alerts firing"):
        assert exprs[title].endswith("or on() vector(0)"), title
    assert 'up{job="ndbinfo"' in exprs["Exporter up"]


def _exprs(uid: str) -> dict[str, str]:
    return {p.get("title"): " ".join(t["expr"] for t in p.get("targets", []))
            for p in all_panels(COMMITTED[uid]) if p["type"] != "row"}


def test_panels_draw_what_the_alerts_judge() -> None:
    """The 90 % line of "CPU per thread" is drawn on the
    quantity NdbLdmCpuSaturated averages (exec|send|buffer_full; before: OS user+system,
    spinning included); "Restarts in progress" leaves out failure handling (2-3: a node
    down; before: counted); a node without a nodes row is STARTING when restart_info shows
    its restart (before: DOWN)."""
    cfg = yaml.safe_load((REPO / "rules" / "config.yaml").read_text())
    node, overview = _exprs(uids.NDB_NODE), _exprs(uids.NDB_OVERVIEW)
    assert f'mode=~"{cfg["ndb"]["ldm_cpu_modes"]}"' in node["CPU per thread"]
    assert "os_user" not in node["CPU per thread"]
    for title in ("Restarts in progress", "Restart status (in progress)"):
        assert "!= 2 != 3" in overview[title], title
    assert "+ 2 and on(node_id)" in overview["Node status"]


def test_node_dashboards_show_their_hosts_with_the_host_alerts_lines() -> None:
    cfg = yaml.safe_load((REPO / "rules" / "config.yaml").read_text())["host"]
    for uid, selector in ((uids.NDB_NODE, 'cluster="$cluster"'),
                          (uids.GALERA, 'cluster="$cluster", node=~"$node"')):
        panels = {p.get("title"): p for p in all_panels(COMMITTED[uid]) if p["type"] != "row"}
        for title, record, line in (
                ("Filesystem used", "cluster_node_mountpoint:node_filesystem_avail:ratio",
                 1 - cfg["filesystem_free_ratio_min"]),
                ("Memory used", "cluster_node:node_memory_available:ratio",
                 1 - cfg["memory_available_ratio_min"]),
                ("CPU busy", "cluster_node:node_cpu_busy:ratio_avg5m",
                 cfg["cpu_busy_ratio_max"])):
            expr = panels[title]["targets"][0]["expr"]
            assert f"{record}{{{selector}}}" in expr, (uid, title)
            assert [t["value"] for t in thresholds(panels[title])][1:] == [line], (uid, title)


def test_links_carry_variables_only_within_a_product() -> None:
    for uid, model in COMMITTED.items():
        for link in model["links"]:
            target = link.get("url", "").removeprefix("/d/")
            if target in uids.ALL:
                same = target.split("-")[1] == uid.split("-")[1]
                assert link["includeVars"] is same, (uid, target)


def test_simulated_data_is_marked_on_every_ndb_dashboard() -> None:
    for uid in (uids.NDB_OVERVIEW, uids.NDB_NODE, uids.NDB_RESTARTS):
        text = json.dumps(COMMITTED[uid])
        assert 'simulated=\\"true\\"' in text and "SIMULATED" in text, uid


# -- metric names -------------------------------------------------------------------------

EXPORTER_SOURCES = [REPO / "exporters" / "ndbinfo_exporter", REPO / "exporters" / "galera_tracker",
                    REPO / "loadgen" / "clusterscope_loadgen"]
# mysqld_exporter (Debian's binary) derives these from SHOW GLOBAL STATUS/VARIABLES, so they
# cannot be listed from source; the lab test proves each one the dashboards use returns data.
MYSQLD_EXPORTER = re.compile(r"^mysql_(up|global_status_wsrep_\w+|galera_\w+)$")
# written by vmalert for firing/pending alerts, and by the scraper for each target
VMALERT = {"ALERTS", "up"}


def test_metric_name_parser() -> None:
    assert metric_names('sum by (node) (rate(a_total{x="y b"}[1m])) / on (c) group_left () '
                        'b:c:d{e=~"f|g"} > 0 and max(h) offset 5m') == {"a_total", "b:c:d", "h"}


def exported_and_recorded() -> set[str]:
    known = set(VMALERT)
    for root in EXPORTER_SOURCES:
        for f in root.rglob("*.py"):
            for lit in re.findall(r'"((?:ndb|galera|loadgen)_[a-z0-9_]+)"', f.read_text()):
                known.update({lit, f"{lit}_total", f"{lit}_bucket", f"{lit}_sum",
                              f"{lit}_count"})
    # names built at run time (e.g. ndb_log_{space,buffer}_used_bytes) are in the docs'
    # metrics tables, which each exporter keeps complete
    readme = "\n".join(p.read_text() for p in [REPO / "README.md",
                                                *sorted((REPO / "docs").glob("*.md"))])
    for lit in re.findall(r"`((?:ndb|galera|loadgen)_[a-z0-9_]+)", readme):
        known.update({lit, f"{lit}_total"})
    for f in (REPO / "rules").glob("*.yml"):
        for group in (yaml.safe_load(f.read_text()) or {}).get("groups", []):
            known.update(r["record"] for r in group.get("rules", []) if "record" in r)
    return known


def test_every_metric_a_panel_uses_is_exported_or_recorded() -> None:
    known = exported_and_recorded()
    unknown = []
    for model in COMMITTED.values():
        for t in targets(model):
            if t.datasource != "prometheus":
                continue
            for name in metric_names(t.expr):
                if name not in known and not MYSQLD_EXPORTER.match(name):
                    unknown.append(f"{t.dashboard} / {t.panel}: {name}")
    assert unknown == []
