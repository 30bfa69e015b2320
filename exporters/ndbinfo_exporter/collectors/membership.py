"""Arbitration and the president: `membership`, one row per running data node.

A cluster without a connected arbitrator survives no network split: the half that cannot
reach an arbitrator shuts down (manual, "Defining an NDB Cluster Management Server",
ArbitrationRank). The arbitrator and president are node ids, exported as values rather
than labels, so a change of arbitrator moves a value instead of creating series.
"""

from __future__ import annotations

from ndbinfo_exporter import schema
from ndbinfo_exporter.collectors.base import Collector, Context, Desc
from ndbinfo_exporter.families import Families, state_set

ARB_STATES = tuple(text for _, text in schema.ARB_STATE)

SQL_MEMBERSHIP = ("SELECT node_id, group_id, president, successor, arbitrator, arb_state,"
                  " arb_connected FROM ndbinfo.membership")

NODE_GROUP = Desc("ndb_node_group", "Node group of the data node (membership.group_id).",
                  ("node_id",))
PRESIDENT = Desc("ndb_president_node_id", "The node this data node sees as president (QMGR);"
                 " all nodes should agree.", ("node_id",))
PRESIDENT_SUCCESSOR = Desc("ndb_president_successor_node_id", "The node this data node"
                           " expects to become president next.", ("node_id",))
ARBITRATOR = Desc("ndb_arbitrator_node_id", "The arbitrator this data node knows (0: none).",
                  ("node_id",))
ARBITRATOR_CONNECTED = Desc("ndb_arbitrator_connected", "1 if the data node is connected to"
                            " its arbitrator (membership.arb_connected = Yes).", ("node_id",))
ARBITRATION_STATE = Desc("ndb_arbitration_state", "Arbitration state (membership.arb_state):"
                         " 1 for the current one; ARBIT_RUN in a healthy cluster.",
                         ("node_id", "state"))


def collect_membership(ctx: Context, fam: Families) -> None:
    rows = ctx.query(SQL_MEMBERSHIP)
    group, president = NODE_GROUP.of(fam), PRESIDENT.of(fam)
    successor, arbitrator = PRESIDENT_SUCCESSOR.of(fam), ARBITRATOR.of(fam)
    connected, state = ARBITRATOR_CONNECTED.of(fam), ARBITRATION_STATE.of(fam)
    for node_id, group_id, pres, succ, arb, arb_state, arb_connected in rows:
        group.add((node_id,), group_id)
        president.add((node_id,), pres)
        successor.add((node_id,), succ)
        arbitrator.add((node_id,), arb)
        if arb_connected is not None:
            connected.add((node_id,), 1 if arb_connected == "Yes" else 0)
        for s, on in state_set(ARB_STATES, arb_state or ""):
            state.add((node_id, s), on)


COLLECTORS = [
    Collector("membership", "membership: president, arbitrator and arbitration state",
              ("membership",), collect_membership),
]
