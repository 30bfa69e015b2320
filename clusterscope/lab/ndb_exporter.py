"""The lab's ndbinfo_exporter: reads the NDB simulator's SQL node, serves `ndb-exporter`.

The NDB part calls `up(lab)` at the end of its own `up()`; the exporter connects with the
ndb-sql service's least-privilege client config (credentials stay in that 0600 file).
"""

from __future__ import annotations

import sys

from clusterscope.deploy.scrape import NDB as SCRAPE
from clusterscope.lab.core import Lab, LabError, Service

NAME = "ndb-exporter"


def up(lab: Lab) -> Service:
    sql = lab.service("ndb-sql")
    if sql is None or not sql.client_config:
        raise LabError("ndb-exporter needs the ndb-sql service (with its client config);"
                       " bring up the ndb part first")
    port = lab.port(NAME)
    home = lab.path(NAME)
    argv = [sys.executable, "-m", "ndbinfo_exporter",
            "--config.my-cnf", sql.client_config,
            "--web.listen-address", f"127.0.0.1:{port}",
            # the lab scrapes every 5 s: finish well inside that
            "--scrape.timeout", "4s",
            "--state.file", str(home / "state.json")]
    return lab.spawn(NAME, "ndb", "ndbinfo_exporter reading the simulated ndbinfo", argv,
                     port=port, cwd=home, simulated=True, ready_timeout=30,
                     extra={"scrape": SCRAPE})


def down(lab: Lab) -> None:
    lab.stop(NAME)
