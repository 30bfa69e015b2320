"""What the rules test rooms share: the simulated NDB cluster's labels, a node's and a Galera
node's label sets, steps of the scenarios' 5 s interval, the inventory's series, and a pin
as `clusterscope baseline pin` writes it."""

from __future__ import annotations

from rules_scenarios import (
    GALERA,
    NDB,
    STEP,
    const,
)


def pin(name: str, restart_seconds: float, created: int, steps: int) -> list[dict]:
    """A pin as `clusterscope baseline pin` writes it: one sample of each series."""
    return [const("clusterscope_pinned_restart_total_seconds",
                  {"cluster": "lab-ndb", "node_id": "2", "pin": name},
                  [None] * created + [restart_seconds] + [None] * (steps - created - 1)),
            const("clusterscope_pin_created_timestamp_seconds", {"pin": name},
                  [None] * created + [created * STEP] + [None] * (steps - created - 1))]

INVENTORY = {"job": "clusterscope_inventory", "instance": "inventory:9110"}

C = {"cluster": "lab-ndb", "simulated": "true"}

def steps(minutes: float) -> int:
    return int(minutes * 60 // STEP)

def node(i: int | str) -> dict:
    return {**NDB, "node_id": str(i)}

def gnode(i: int, cluster: str = "lab-galera") -> dict:
    return {**GALERA, "cluster": cluster, "node": f"node{i}", "instance": f"127.0.0.1:{i}"}
