"""What follows from the description in the shared lab: NDB read through another SQL node
when the one serving dies, and Galera nodes probed with their own logins, through the real
scrape path (inventory -> VictoriaMetrics -> the exporters)."""

from __future__ import annotations

import configparser
import time

import pytest
from helpers import eventually, scrape, val

from clusterscope.lab import exporters
from clusterscope.lab.core import Lab
from clusterscope.lab.endpoints import lab_metrics

pytestmark = pytest.mark.lab
NDB = 'cluster="lab-ndb"'


def test_ndb_fails_over_to_the_other_sql_node_within_a_scrape(lab) -> None:
    lab.ensure("ndb", "monitoring")
    vm = lab_metrics(lab.root).vm
    # the exporter keeps reading through the SQL node that answered last: kill that one
    serving = vm.wait_for(f'ndb_sql_node_serving{{{NDB}}} == 1', timeout=90)
    dead = serving[0]["metric"]["sql_node"]
    other = "sql2" if dead == "sql1" else "sql1"
    vm.wait_for(f'ndb_sql_node_up{{{NDB},sql_node="{other}"}} == 1', timeout=60)
    killed = time.time()
    lab.cli("lab", "ndb", "kill-sql", dead[-1])
    gone = time.time()  # the command returns once the process is gone
    try:
        # the dead SQL node is named, and another one serves
        vm.wait_for(f'ndb_sql_node_up{{{NDB},sql_node="{dead}"}} == 0'
                    f' and on (cluster) ndb_sql_node_serving{{{NDB},sql_node="{other}"}} == 1',
                    timeout=30, interval=0.5)
        def first_after(series: str, value: str | None) -> float | None:
            # the raw samples (VictoriaMetrics answers with a 1 s latency offset)
            rows = vm.query(f'{series}[{int(time.time() - gone) + 10}s]')
            stamps = [float(t) for r in rows for t, v in r.get("values", [])
                      if float(t) >= gone and value in (None, v)]
            return min(stamps) if stamps else None
        first = eventually(lambda: first_after(
            f'ndb_sql_node_serving{{{NDB},sql_node="{other}"}}', "1"), 20,
            f"a sample read through {other}")
        print(f"failover: {first - killed:.1f} s from the kill of {dead} to the first sample"
              f" read through {other} (scrape interval 5 s)")
        # within a scrape: the first scrape that began once the node was gone already read
        # through the other (by the samples' own times, whatever the machine's load)
        assert first == first_after(f'ndb_up{{{NDB}}}', None)
        # ndb_up never dropped: every scrape after the kill answered through sql2
        time.sleep(12)  # a few more scrapes
        low = vm.query(f'min_over_time(ndb_up{{{NDB}}}[{int(time.time() - killed) + 10}s])')
        assert low and float(low[0]["value"][1]) == 1, low
        assert val(scrape(lab.port("ndb-exporter"), "/probe?cluster=lab-ndb"),
                   "ndb_exporter_sql_node_failovers_total") >= 1
    finally:
        lab.cli("lab", "ndb", "start-sql", dead[-1])
    vm.wait_for(f'ndb_sql_node_up{{{NDB},sql_node="{dead}"}} == 1', timeout=60)


def test_galera_nodes_with_different_passwords_are_all_up(lab) -> None:
    """One mysqld_exporter in multi-target mode, node2 logging in with its own account and
    password (section client.node2 of the exporters' option file)."""
    lab.ensure("galera", "monitoring")
    cnf = configparser.ConfigParser(interpolation=None)
    cnf.read(exporters.option_file(Lab(lab.root, lab.port_base)))
    assert cnf["client"]["user"] != cnf["client.node2"]["user"]
    assert cnf["client"]["password"] != cnf["client.node2"]["password"]
    vm = lab_metrics(lab.root).vm
    up = vm.wait_for('mysql_up{job="galera",cluster="lab-galera"} == 1', timeout=90,
                     predicate=lambda r: len(r) == 3)
    assert {r["metric"]["node"] for r in up} == {"node1", "node2", "node3"}
    # mysqld_exporter itself honours auth_module: a section that does not exist is refused
    # (HTTP 400, mysqld_exporter probe.go), so node2's mysql_up 1 came from client.node2
    target = f"127.0.0.1:{lab.port('galera-node2')}"
    backend = lab.port("mysqld-exporter-backend")
    assert val(scrape(backend, f"/probe?target={target}&auth_module=client.node2"),
               "mysql_up") == 1
    with pytest.raises(Exception, match="400"):
        scrape(backend, f"/probe?target={target}&auth_module=client.nobody")
    # the port scrapes use is its guard: the description's section for a described node,
    # whatever was asked, and nothing for a node the description does not list
    port = lab.port("mysqld-exporter")
    assert val(scrape(port, f"/probe?target={target}&auth_module=client.nobody"),
               "mysql_up") == 1
    with pytest.raises(Exception, match="400"):
        scrape(port, f"/probe?target=127.0.0.1:{lab.port('victoria-metrics')}")
