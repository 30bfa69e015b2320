"""Lock contention and the disk page buffer in the lab, end to end: the simulator's
counters, the exporter, VictoriaMetrics, the recording rules, vmalert and the data node
dashboard's query. The contention is the simulator's `lock-contention` fault (a hot row in
one table: requests queue for it, some time out), not a loadgen run: the lab's SQL nodes
are MariaDB serving ndbinfo, no NDB engine takes the loadgen's writes. SIMULATED figures.
"""

from __future__ import annotations

import glob
import json
import time
from pathlib import Path

import pytest
import yaml
from helpers import eventually, series, val
from test_monitoring import _vm

from clusterscope.dashboards import uids
from clusterscope.dashboards.render import build_all
from clusterscope.dashboards.verify import targets
from clusterscope.lab import mariadb
from clusterscope.ndbsim import control
from clusterscope.ndbsim.workload import TABLE_ID0

pytestmark = pytest.mark.lab
PROBE = "/probe?cluster=lab-ndb"


def _scrape(lab) -> dict:
    import helpers
    return helpers.scrape(lab.service("ndb-exporter")["port"], PROBE)


def _firing(lab, alertname: str, **labels: str) -> bool:
    data = json.loads(lab.cli("lab", "monitoring", "alerts", "--json").stdout)
    return any(a["alertname"] == alertname and a["state"] == "firing"
               and all(a["labels"].get(k) == v for k, v in labels.items())
               for a in data["active"])


def _contention_on(lab, vm, sock: str, profile: str, table_id: int, alert: bool) -> None:
    """A hot row in one table on the current profile: its failed waits grow in the
    exporter and its recorded timeout rate rises; with `alert`, NdbLockWaitTimeouts fires
    for it and the table's recorded mean number of waiting requests exceeds one."""
    table = f"sim/def/t{table_id - TABLE_ID0}"
    control.send(sock, {"cmd": "fault", "fault": "lock-contention", "on": True,
                        "table": table_id})
    lbl = {"table": table, "mode": "exclusive", "outcome": "failed"}

    def failed(ss: dict) -> float:
        return sum(v for s, v in series(ss, "ndb_table_lock_waits_total")
                   if all(s.get(a) == b for a, b in lbl.items()))

    first = eventually(lambda: (s := _scrape(lab)) and failed(s) > 0 and s, 60,
                       f"failed lock waits of {table} on {profile}")
    assert val(first, "ndb_exporter_collector_success", collector="locks_per_fragment") == 1
    eventually(lambda: failed(_scrape(lab)) > failed(first), 60,
               f"the failed waits of {table} growing on {profile}")
    vm.wait_for(f'cluster_table:ndb_lock_wait_timeouts:rate5m{{table="{table}"}} > 0',
                timeout=120)
    if alert:
        eventually(lambda: _firing(lab, "NdbLockWaitTimeouts", table=table), 420,
                   f"NdbLockWaitTimeouts firing for {table} on {profile}")
        # wait time per second: the mean number of requests waiting on the table's hot row,
        # over a 5m window that still holds the quiet time before the fault when the alert
        # fires (on a busy machine, 0.48 then): it exceeds one as the window fills
        vm.wait_for(f'cluster_table:ndb_lock_waiters:mean_rate5m{{table="{table}"}} > 1',
                    timeout=120)
    control.send(sock, {"cmd": "fault", "fault": "lock-contention", "on": False})


def test_lock_contention_fills_from_locks_per_fragment_on_8_0_and_8_4(lab,
                                                                      monitoring_lab) -> None:
    """On each profile a hot row in another table: the exporter's per-table counters grow
    from that profile's locks_per_fragment and the recorded timeout rate of that table
    rises. On 8.0 NdbLockWaitTimeouts then fires for it in vmalert; 8.4 does not wait for
    the alert again: the rules and the alert read only the exporter's series, whose names
    and labels the 8.4 counters above already show to be the same."""
    lab.ensure("ndb", "monitoring")
    vm = _vm(lab)
    sock = lab.service("ndb-model")["extra"]["socket"]
    version = lab.service("ndb-model")["extra"]["version"]
    try:
        for k, profile in enumerate(("8.4", "8.0")):
            lab.cli("lab", "ndb", "set-version", profile)
            _contention_on(lab, vm, sock, profile, TABLE_ID0 + 2 + k, alert=profile == "8.0")
    finally:
        control.send(sock, {"cmd": "fault", "fault": "lock-contention", "on": False})
        lab.cli("lab", "ndb", "set-version", version)


def _dpb_sums(cnf: str, node: int) -> dict[str, float]:
    conn = mariadb.connect(cnf)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT SUM(page_requests_direct_return), SUM(page_requests_wait_queue),"
                        " SUM(page_requests_wait_io) FROM ndbinfo.diskpagebuffer"
                        " WHERE node_id = %s", (node,))
            direct, queue, io = cur.fetchone()
    finally:
        conn.close()
    return {"direct": float(direct), "queue": float(queue), "io": float(io)}


def _lab_record(lab, record: str) -> str:
    """A recording rule's expression as the lab's vmalert runs it (its rule files)."""
    for f in sorted(glob.glob(lab.service("vmalert")["extra"]["rules"])):
        for group in yaml.safe_load(Path(f).read_text())["groups"]:
            for rule in group["rules"]:
                if rule.get("record") == record:
                    return rule["expr"]
    raise AssertionError(f"no recording rule {record} in the lab's vmalert")


def _node_1(result: list[dict]) -> float:
    got = [float(r["value"][1]) for r in result
           if r["metric"].get("cluster") == "lab-ndb" and r["metric"].get("node_id") == "1"]
    assert len(got) == 1, result
    return got[0]


HIT_RATIO = "cluster_node:ndb_disk_page_buffer_hit:ratio_rate5m"
SPAN = 60  # seconds between the two ndbinfo readings: a dozen of the lab's 5 s scrapes


def test_the_hit_ratio_panel_reads_the_manuals_formula(lab, monitoring_lab) -> None:
    """The data node dashboard's "Disk page buffer hit ratio" shows the recorded hit ratio,
    whose formula, evaluated in the lab's VictoriaMetrics, equals the manual's
    direct_return / (direct_return + wait_io) over the same span computed from the ndbinfo
    rows themselves (read through SQL), and not direct returns over all requests: the
    simulator's hot pages queue (wait_queue) without any buffer shortage. The formula is a
    ratio of increases over the same samples, so it is checked over the span of the two
    readings (its 5 minutes substituted) rather than waiting 5 minutes; the recorded
    series the panel reads is that formula over 5 minutes."""
    lab.ensure("ndb", "monitoring")
    vm = _vm(lab)
    cnf = lab.service("ndb-sql")["client_config"]
    model = build_all()[uids.NDB_NODE]
    expr = next(t.expr for t in targets(model) if t.panel == "Disk page buffer hit ratio")
    expr = expr.replace("$cluster", "lab-ndb").replace("$node_id", "1")
    assert expr.startswith(HIT_RATIO + "{"), expr
    formula = _lab_record(lab, HIT_RATIO)
    assert formula.count("[5m]") == 2, formula
    vm.wait_for('ndb_disk_page_buffer_requests_total{node_id="1"}', timeout=60)
    before, t0 = _dpb_sums(cnf, 1), time.time()
    time.sleep(SPAN)
    after, t1 = _dpb_sums(cnf, 1), time.time()
    d = {k: after[k] - before[k] for k in after}
    manual = d["direct"] / (d["direct"] + d["io"])
    every_request = d["direct"] / (d["direct"] + d["queue"] + d["io"])
    assert manual - every_request > 0.01, (manual, every_request)  # the test tells them apart
    time.sleep(10)  # the last scrape and rule evaluation of the span are in
    over_span = formula.replace("[5m]", f"[{round(t1 - t0)}s]")
    got = _node_1(vm.query(over_span, t1))
    assert abs(got - manual) < 0.003, (got, manual, every_request, over_span)
    # what the panel shows is vmalert's recording of that formula (over 5 minutes), a few
    # seconds old at most
    panel = vm.query(expr, t1)
    assert panel, expr
    assert abs(float(panel[0]["value"][1]) - _node_1(vm.query(formula, t1))) < 0.003, expr
