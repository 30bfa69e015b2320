# ruff: noqa: E501  (the cases read better on one line)
"""The description of what is monitored (clusterscope_inventory): a user's mistakes get a
message naming the place, and the inventory serves what follows from the description, also
while a broken edit is in progress."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from clusterscope_inventory.description import DescriptionError, load, parse, parse_text
from clusterscope_inventory.server import Inventory
from clusterscope_inventory.targets import stack_targets, targets
from helpers import Samples, eventually, val

GOOD = """
clusters:
  - name: g
    kind: galera
    nodes:
      - {name: n1, address: h1:3306, log: /l/n1.err}
      - {name: n2, address: h2:3306, credentials: client.n2}
      - {name: arb, role: garbd}
  - name: d
    kind: ndb
    credentials: client.ndb
    nodes:
      - {name: sql1, address: "[::1]:3306", node_exporter: h9:9100}
      - {name: m, role: mgmd, log: /l/c.log}
"""


@pytest.mark.parametrize("text,message", [
    ("clusters: [{name: g, kind: galara, nodes: []}]", r"clusters\[0\] \(g\)\.kind: must be one of galera, ndb"),
    ("clusters: [{name: g, kind: galera, nodes: [{name: a, adress: 'h:1'}]}]",
     r"nodes\[0\] \(a\): unknown key\(s\) adress"),
    ("clusters: [{name: g, kind: galera, nodes: [{name: a}]}]", r"\(a\)\.address: expected host:port"),
    ("clusters: [{name: g, kind: galera, nodes: [{name: a, address: 'h:99999'}]}]", "expected host:port"),
    ("clusters: [{name: g, kind: galera, nodes: [{name: a, role: garbd}]}]", "needs at least a node of role galera"),
    ("clusters: [{name: g, kind: galera, nodes: [{name: a, role: garbd, address: 'h:1'}]}]",
     "a garbd node has no mysqld"),
    ("clusters: [{name: g, kind: ndb, nodes: [{name: a, role: mgmd}]}]", r"needs at least an SQL node"),
    ("clusters: [{name: g, kind: galera, nodes: [{name: a, address: 'h:1'}, {name: a, address: 'h:2'}]}]",
     "two nodes are named 'a'"),
    ("clusters: [{name: 'bad name', kind: galera, nodes: []}]", r"clusters\[0\]\.name: expected a name"),
    ("clusters: [{name: g, kind: galera, nodes: [{name: a, address: 'h:1', log: rel.err}]}]",
     "expected an absolute path"),
    ("clusters:\n  - name: g\n   kind: galera\n", r"not valid YAML at line 3"),
    ("- just a list", "expected a mapping with `clusters:`"),
    ("clusters: [{name: d, kind: ndb, wsrep_cluster_name: x, nodes: [{name: a, address: 'h:1'}]}]",
     r"\(d\)\.wsrep_cluster_name: expected the Galera cluster's own name"),
])
def test_a_mistake_is_named_with_its_place(text: str, message: str) -> None:
    with pytest.raises(DescriptionError, match=message):
        parse_text(text, "clusterscope.yml")


def test_what_follows_from_a_description() -> None:
    d = parse_text(GOOD)
    assert [(s.cluster, s.node, s.component) for s in d.log_sources()] == [
        ("g", "n1", "mariadb"), ("d", "m", "ndb_mgmd")]
    assert d.cluster("g").expected_members() == 3  # garbd counts in wsrep_cluster_size
    assert targets(d, "galera") == [
        {"targets": ["h1:3306"], "labels": {"cluster": "g", "node": "n1",
                                            "__param_auth_module": "client"}},
        {"targets": ["h2:3306"], "labels": {"cluster": "g", "node": "n2",
                                            "__param_auth_module": "client.n2"}}]
    assert targets(d, "ndbinfo") == [{"targets": ["d"], "labels": {"cluster": "d"}}]
    assert targets(d, "ndb_sql")[0]["labels"]["__param_auth_module"] == "client.ndb"
    assert targets(d, "node") == [{"targets": ["h9:9100"], "labels": {
        "cluster": "d", "node": "sql1", "role": "sql"}}]
    assert stack_targets(d, "galera_tracker", "t:9199") == [{"targets": ["t:9199"],
                                                              "labels": {}}]
    assert stack_targets(d, "loadgen", None) == []  # not configured: no target
    galera_only = parse_text("clusters: [{name: g, kind: galera, nodes: [{name: a, address: 'h:1'}]}]")
    assert stack_targets(galera_only, "ndbinfo_exporter", "x:1") == []
    assert stack_targets(galera_only, "galera_tracker", "t:1") == []  # no log to follow
    # the change detector reads every node with a mysqld
    assert stack_targets(galera_only, "clusterscope_changes", "c:9125") == [
        {"targets": ["c:9125"], "labels": {}}]
    assert stack_targets(parse_text("clusters: []"), "clusterscope_changes", "c:9125") == []


def test_the_inventory_serves_the_last_good_description(tmp_path: Path) -> None:
    desc = tmp_path / "clusterscope.yml"
    desc.write_text(GOOD)
    inv = Inventory(desc)
    assert inv.ok and len(inv.current().clusters) == 2
    time.sleep(0.01)
    desc.write_text(GOOD + "  - oops\n")  # an edit that breaks it
    assert len(inv.current().clusters) == 2 and not inv.ok
    assert "clusters[2]" in inv.error
    desc.write_text(GOOD.replace("n2, address: h2", "n3, address: h3"))
    assert [n.name for n in inv.current().cluster("g").nodes][1] == "n3" and inv.ok
    with pytest.raises(DescriptionError, match="cannot read"):
        load(tmp_path / "missing.yml")


@pytest.mark.tools("python")
def test_the_inventory_process_over_http(tmp_path: Path) -> None:
    from test_deploy_shapes import free_port

    desc = tmp_path / "clusterscope.yml"
    desc.write_text(GOOD)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "clusterscope_inventory",
                             f"--config.file={desc}", f"--web.listen-address=127.0.0.1:{port}",
                             "--target.galera-tracker=t:9199",
                             "--logs.changes-file=/var/lib/clusterscope-changes/changes.jsonl"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        def get(path: str) -> bytes:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.read()
        sd = eventually(lambda: json.loads(get("/sd/galera")), 20, "the inventory's /sd")
        assert len(sd) == 2
        assert json.loads(get("/sd/galera_tracker")) == [{"targets": ["t:9199"], "labels": {}}]
        # the shipper's configuration takes the change detector's file with its own fields
        shipper = yaml.safe_load(get("/config/otelcol.yaml"))
        changes = [r for r in shipper["receivers"].values()
                   if r["include"] == ["/var/lib/clusterscope-changes/changes.jsonl"]]
        assert len(changes) == 1 and changes[0]["resource"]["component"] == "changes"
        ss = Samples.of_text(get("/metrics").decode())
        assert val(ss, "clusterscope_cluster_members", cluster="g", kind="galera",
                   role="garbd") == 1
        assert val(ss, "clusterscope_node_info", cluster="d", node="sql1", role="sql") == 1
        assert val(ss, "clusterscope_inventory_config_last_reload_successful") == 1
        desc.write_text("clusters: [")
        ss = eventually(lambda: (s := Samples.of_text(get("/metrics").decode())) and val(
            s, "clusterscope_inventory_config_last_reload_successful") == 0 and s, 10, "0")
        assert val(ss, "clusterscope_cluster_info", cluster="g", kind="galera") == 1
        with pytest.raises(urllib.error.HTTPError):
            get("/sd/nope")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "not valid YAML" in err and "still serving the last good description" in err
    bad = subprocess.run([sys.executable, "-m", "clusterscope_inventory",
                          f"--config.file={tmp_path / 'nope.yml'}"], capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 2 and "cannot read the description" in bad.stderr


@pytest.mark.parametrize("log,why", [
    ("/srv/logs/*.err", "no *"),
    ("/srv/logs/node{1,2}.err", "no { }"),
    ("/srv/logs/${env:X${file:/etc/shadow}}", "no $ { }"),
    ("/srv/logs/../../etc/shadow", "no `..`"),
    ("/srv/logs/./n1.err", "a plain path"),
    ("/srv/logs/n1.err\n", "a plain path"),
])
def test_a_log_path_is_one_file_named_as_it_is(log: str, why: str) -> None:
    """The collector reads every match of a glob and expands `${...}` (its `file` and `http`
    providers read files and fetch URLs): a log path is refused unless it is plain."""
    desc = {"clusters": [{"name": "g", "kind": "galera",
                          "nodes": [{"name": "n1", "address": "h:3306", "log": log}]}]}
    with pytest.raises(DescriptionError, match=r"\(n1\)\.log: ") as err:
        parse(desc)
    assert why in str(err.value)


def test_the_collector_configuration_expands_only_its_own_placeholders() -> None:
    """A nested reference inside an allowed one is caught however it got there (confmap
    resolves the innermost first)."""
    from clusterscope_logs import collector
    for value in ("/srv/${env:X${file:/etc/shadow}}", "${file:/etc/shadow}",
                  "${http://evil.example/}", "${env:X$}"):
        with pytest.raises(ValueError, match="the collector would expand"):
            collector.render({"receivers": {"r": {"include": [value]}}})
    assert "${env:OTELCOL_STORAGE_DIR:-/var/lib/otelcol}" in collector.render(
        {"x": collector.CONTAINER["storage_dir"]})
