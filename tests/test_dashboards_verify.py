"""The panel verifier itself, against a real VictoriaMetrics holding known series: it must
report a panel whose metric is absent, resolve variables as Grafana does, and fill macros."""

from __future__ import annotations

import time

from clusterscope.dashboards.verify import Endpoints, Runner, verify_model

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
    runner = Runner(Endpoints(scratch_vm.url, None), now - 900, now, step=15)

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
    runner = Runner(Endpoints(scratch_vm.url, None), now - 900, now, step=15)
    model = _model([("any", "vt_up")], "label_values(vt_no_such_metric, cluster)")
    [result] = verify_model(runner, model)
    assert result.panel == "(variables)" and not result.ok
