"""Every lab port, as an offset from the lab's port base (one table, so parts never clash).

The default base keeps all ports below the kernel's ephemeral range (32768+), where a
client socket could take a lab port between `lab down` and the next `lab up`.
"""

from __future__ import annotations

DEFAULT_PORT_BASE = 13300

OFFSETS: dict[str, int] = {
    # NDB simulator
    "ndb-sql": 0,  # SQL node 1; SQL nodes 2 and 3 below
    "ndb-exporter": 1,
    "ndb-sql2": 2,
    "ndb-sql3": 3,
    # Galera: client, gmcast, IST, SST per node; garbd; tracker
    **{f"galera-node{n}": 10 + n for n in (1, 2, 3)},
    **{f"galera-node{n}-gmcast": 14 + n for n in (1, 2, 3)},
    **{f"galera-node{n}-ist": 18 + n for n in (1, 2, 3)},
    **{f"galera-node{n}-sst": 22 + n for n in (1, 2, 3)},
    "garbd": 26,  # its gmcast port
    # one mysqld_exporter probes every node of every cluster: its guard (the allow-list of
    # described nodes) on the port scrapes use, mysqld_exporter itself behind it
    "mysqld-exporter": 27,
    "mysqld-exporter-backend": 28,
    "galera-tracker": 30,
    # configuration and version changes of every node (clusterscope_changes)
    "change-detector": 31,
    # Monitoring
    "victoria-metrics": 40,
    "vmalert": 41,
    "alertmanager": 42,
    "alertmanager-cluster": 43,
    "webhook": 44,
    "victoria-logs": 45,
    "otelcol": 46,          # the collector's own /metrics
    "otelcol-health": 47,   # its health_check extension
    # the description of what is monitored, as service discovery and metrics
    "inventory": 48,
    "vmalert-logs": 49,     # vmalert evaluating the log rules against VictoriaLogs
    # a Prometheus scraping the lab as a user's own would (dashboards verify --vm)
    "prometheus": 50,
    # node_exporter (Debian's prometheus-node-exporter): the lab's one host
    "node-exporter": 51,
    # the door: the authenticating proxy in front of the APIs (TLS), and its own /health
    "door": 52,
    "door-internal": 53,
    # A VictoriaMetrics the tests fill with known series (independent of the lab's)
    "scratch-vm": 98,
    # A VictoriaLogs and a collector the tests ship recorded logs through (and the bench)
    "scratch-vlogs": 94,
    "scratch-otelcol": 95,
    "scratch-otelcol-health": 96,
    "scratch-inventory": 97,
    # the alarm replay's own VictoriaMetrics and vmalert (clusterscope/bench/alarm_vmalert.py)
    "replay-vm": 88,
    "replay-vmalert": 87,
    # the exporter tests' own MariaDB (fixture tables) and exporter processes
    "exporter-test-sql": 90,
    "exporter-test-http": 91,
    "exporter-test-http2": 92,
    "exporter-test-tls-sql": 93,  # a MariaDB that requires TLS
    "exporter-test-web": 89,  # the exporter under its web config (one process at a time)
    # Load generators (one per concurrently running experiment)
    **{f"loadgen{i}": 60 + i for i in range(10)},
}

MAX_OFFSET = 99


def port(base: int, name: str) -> int:
    try:
        return base + OFFSETS[name]
    except KeyError:
        raise KeyError(f"no lab port named {name!r}; add it to clusterscope/lab/ports.py") from None
