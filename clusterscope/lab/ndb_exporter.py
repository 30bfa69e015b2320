"""The lab's ndbinfo_exporter: every NDB cluster of the lab's description, as deployed.

The NDB part calls `up(lab)` at the end of its own `up()`. The exporter runs as in the
deployment: the description names the cluster and its SQL nodes (it reads through the first
that answers), the exporters' option file holds the login (section `client.ndb`), and
VictoriaMetrics scrapes `/probe?cluster=lab-ndb` through the inventory's service discovery.
"""

from __future__ import annotations

import sys

from clusterscope.lab import exporters, lab_description
from clusterscope.lab.core import Lab, Service

NAME = "ndb-exporter"


def up(lab: Lab) -> Service:
    port = lab.port(NAME)
    home = lab.path(NAME)
    argv = [sys.executable, "-m", "ndbinfo_exporter",
            "--config.clusters", str(lab_description.path(lab)),
            "--config.my-cnf", str(exporters.option_file(lab)),
            "--web.listen-address", f"127.0.0.1:{port}",
            # the lab scrapes every 5 s: finish well inside that
            "--scrape.timeout", "4s",
            # the slow collectors (per-fragment views, histograms, memory per table) are
            # tiny here, and a lab scenario lasts minutes: every 10 s, so rate() over 5m
            # sees the histograms move within a scenario (60 s by default)
            "--scrape.slow-interval", "10s",
            "--state.dir", str(home)]
    return lab.spawn(NAME, "ndb", "ndbinfo_exporter reading the simulated ndbinfo", argv,
                     port=port, cwd=home, simulated=True, ready_timeout=30,
                     extra={"scrape": {"job": "ndbinfo_exporter", "path": "/metrics",
                                       "labels": {}}})


def down(lab: Lab) -> None:
    lab.stop(NAME)
