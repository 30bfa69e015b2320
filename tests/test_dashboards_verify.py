"""The panel verifier itself, against a real VictoriaMetrics holding known series: it must
report a panel whose metric is absent, resolve variables as Grafana does, and fill macros."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest
from helpers import REPO

from clusterscope.dashboards.verify import Runner, verify_model
from clusterscope.lab.endpoints import Source

PROM = {"type": "prometheus", "uid": "victoriametrics"}


def _model(panels: list[tuple[str, str]], cluster_query: str) -> dict:
    return {
        "uid": "verify-test",
        "templating": {"list": [
            {"name": "cluster", "query": cluster_query, "datasource": PROM},
            {"name": "node", "query": 'label_values(vt_up{cluster="$cluster"}, node)',
             "datasource": PROM, "multi": True, "includeAll": True, "allValue": ".*"},
        ]},
        "panels": [{"title": title, "type": "timeseries", "datasource": PROM,
                    "targets": [{"refId": "A", "expr": expr, "datasource": PROM}]}
                   for title, expr in panels],
    }


def test_verifier_finds_data_reports_absence_and_tries_each_cluster(scratch_vm) -> None:
    now = time.time()
    lines = []
    for k in range(20):  # ten minutes of 30 s samples
        ts = int((now - 600 + 30 * k) * 1000)
        lines += [f'vt_up{{cluster="c1",node="a"}} 1 {ts}',
                  f'vt_up{{cluster="c2",node="b"}} 1 {ts}',
                  f'vt_ops_total{{cluster="c1",node="a"}} {100 * k} {ts}']
    scratch_vm.import_prometheus("\n".join(lines) + "\n")
    scratch_vm.flush()
    scratch_vm.wait_for('count(vt_up) == 2', timeout=30)
    runner = Runner(Source(scratch_vm), now - 900, now, step=15)

    model = _model([
        ("rate", 'sum(rate(vt_ops_total{cluster="$cluster", node=~"$node"}[$__rate_interval]))'),
        ("absent", 'vt_nothing{cluster="$cluster"}'),
        ("only in c2", 'vt_up{cluster="$cluster", node="b"}'),
    ], "label_values(vt_up, cluster)")
    assert [s["cluster"] for s in runner.selections(model)] == ["c1", "c2"]
    results = {r.panel: r for r in verify_model(runner, model)}
    assert results["rate"].ok
    assert results["rate"].expr == 'sum(rate(vt_ops_total{cluster="c1", node=~".*"}[20s]))'
    assert not results["absent"].ok and results["absent"].series == 0
    assert results["only in c2"].ok and 'cluster="c2"' in results["only in c2"].expr


def test_verifier_reports_a_variable_without_values(scratch_vm) -> None:
    now = time.time()
    runner = Runner(Source(scratch_vm), now - 900, now, step=15)
    model = _model([("any", "vt_up")], "label_values(vt_no_such_metric, cluster)")
    [result] = verify_model(runner, model)
    assert result.panel == "(variables)" and not result.ok


# -- a Prometheus of one's own -------------------------------------------------------------
@pytest.fixture(scope="module")
def own_prometheus(monitoring_lab, ndb_lab, galera_lab, tmp_path_factory):
    """Debian's real Prometheus scraping the lab with the lab's own scrape configuration
    (the jobs of the contract, targets from the inventory), and no rules: what a user who
    brings their own Prometheus has before loading rules/*.yml."""
    from clusterscope.clients.vm import VM
    from clusterscope.lab.core import Lab

    root = tmp_path_factory.mktemp("own-prometheus")
    lab = Lab(monitoring_lab.root)
    port = lab.port("prometheus")
    lab.spawn("prometheus", "test", "Prometheus scraping the lab (dashboards verify --vm)",
              ["prometheus", f"--config.file={monitoring_lab.root / 'monitoring' / 'scrape.yml'}",
               f"--storage.tsdb.path={root / 'data'}",
               f"--web.listen-address=127.0.0.1:{port}"], port=port)
    prom = VM(f"http://127.0.0.1:{port}")
    try:
        # a minute of scrapes: rates over $__rate_interval have two samples
        prom.wait_for('count(count_over_time(mysql_global_status_wsrep_cluster_size[1m]) >= 6)'
                      ' >= 3', timeout=180, interval=3)
        yield prom
    finally:
        lab.stop("prometheus")


@pytest.mark.lab
def test_verify_on_a_prometheus_says_which_panels_fill_and_why_the_others_are_empty(
        own_prometheus, monitoring_lab) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "clusterscope.cli", "dashboards", "verify", "--vm",
         own_prometheus.url, "--minutes", "1", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={k: v for k, v in os.environ.items() if not k.startswith("CLUSTERSCOPE_VM")})
    assert proc.returncode == 1, proc.stderr  # some panels are empty there, and it says so
    results = {(r["dashboard"], r["panel"], r["ref"]): r for r in json.loads(proc.stdout)}
    ok = {k for k, r in results.items() if r["ok"]}
    # panels on the exporters' own series fill on a plain Prometheus
    for panel in ("Cluster size per node", "Nodes up", "Replication latency"):
        assert ("clusterscope-galera", panel, "A") in ok, results[("clusterscope-galera",
                                                                    panel, "A")]
    assert any(k[0] == "clusterscope-ndb-node" for k in ok)
    # every empty one has its reason; those on recorded series name the rule file
    empty = [r for r in results.values() if not r["ok"]]
    assert empty and all(r["reason"] for r in empty), [r for r in empty if not r["reason"]]
    recorded = [r for r in empty if re.search(r"\b[a-z_]+:[a-z_]+:[a-z0-9_]+\b", r["expr"])
                and r["datasource"] == "prometheus"]
    assert recorded
    for r in recorded:
        assert "evaluates none of rules/*.yml" in r["reason"], r
    size = results[("clusterscope-galera", "Cluster size", "A")]
    assert not size["ok"] and "cluster:mysql_global_status_wsrep_cluster_size:max" in \
        size["reason"] and "rules/galera.yml" in size["reason"]
    # the experiments dashboard: no loadgen is scraped there, said as such
    exp = results[("clusterscope-experiments", "(variables)", "")]
    assert "job loadgen: not scraped here" in exp["reason"]
