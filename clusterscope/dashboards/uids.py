"""Stable dashboard uids: alerts' `dashboard_url`s and links between dashboards use them."""

from __future__ import annotations

TAG = "clusterscope"

NDB_OVERVIEW = "clusterscope-ndb-overview"
NDB_NODE = "clusterscope-ndb-node"
NDB_RESTARTS = "clusterscope-ndb-restarts"
GALERA = "clusterscope-galera"
EXPERIMENTS = "clusterscope-experiments"
LOGS = "clusterscope-logs"

ALL = (NDB_OVERVIEW, NDB_NODE, NDB_RESTARTS, GALERA, EXPERIMENTS, LOGS)
