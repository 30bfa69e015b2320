"""The scrape contract shared by the lab and the Compose deployment.

Job names are what rules/config.yaml's selectors match (`job="ndbinfo"`, ...); the interval
is what the rules' windows and the dashboards' `$__rate_interval` assume.
"""

from __future__ import annotations

SCRAPE_INTERVAL = "5s"
SCRAPE_TIMEOUT = "4s"

# The lab's NDB exporter job: the simulator's series say they are simulated.
NDB = {"job": "ndbinfo", "path": "/metrics",
       "labels": {"cluster": "lab-ndb", "simulated": "true"}}
