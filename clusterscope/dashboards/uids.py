"""Stable dashboard uids: alerts' `dashboard_url`s and links between dashboards use them.

They live in rules/config.yaml (`dashboards:`), which the rules read too.
"""

from __future__ import annotations

from clusterscope.rules.rules_config import shared

TAG = "clusterscope"
_UIDS: dict[str, str] = shared()["dashboards"]

NDB_OVERVIEW = _UIDS["ndb_overview"]
NDB_NODE = _UIDS["ndb_node"]
NDB_RESTARTS = _UIDS["ndb_restarts"]
GALERA = _UIDS["galera"]
EXPERIMENTS = _UIDS["experiments"]
LOGS = _UIDS["logs"]

ALL = (NDB_OVERVIEW, NDB_NODE, NDB_RESTARTS, GALERA, EXPERIMENTS, LOGS)
