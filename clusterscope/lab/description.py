"""The lab's description of what it monitors: `<lab>/clusterscope.yml`, in the format a user
writes for their own clusters (exporters/clusterscope_inventory/description.py).

The lab writes it from its parts' settings (how many Galera nodes, garbd or not, how many
NDB SQL nodes), never from what happens to be running: a killed node stays described, so
the expected sizes do not shrink with it. Everything the deployment derives from a user's
description (scrape targets, the exporters' targets, the tracker's logs, log shipping,
expected sizes) the lab derives from this file the same way.

Credentials: the lab's Galera nodes log in with `[client]` of the exporters' option file,
except node2, which has an account and password of its own (`[client.node2]`), so the lab
always runs the per-node credentials path; the NDB SQL nodes use `[client.ndb]`.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from clusterscope_inventory.description import Description, parse

from clusterscope.lab.core import Lab

FILE = "clusterscope.yml"
GALERA_CLUSTER = "lab-galera"
NDB_CLUSTER = "lab-ndb"
GALERA_CREDENTIALS = "client"
NODE2_CREDENTIALS = "client.node2"  # node2's own account (different password)
NDB_CREDENTIALS = "client.ndb"


def path(lab: Lab) -> Path:
    return lab.root / FILE


def machine_timezone() -> str:
    """The zone this machine's clocks use, by its IANA name: the lab's MariaDB nodes and
    the NDB simulator write their logs in it (Debian: /etc/timezone, or the target of the
    /etc/localtime link); UTC when neither says."""
    try:
        name = Path("/etc/timezone").read_text().strip()
        if name:
            return name
    except OSError:
        pass
    target = Path("/etc/localtime")
    if target.is_symlink():
        parts = target.resolve().parts
        if "zoneinfo" in parts:
            return "/".join(parts[parts.index("zoneinfo") + 1:])
    return "UTC"


def galera_nodes(lab: Lab) -> list[int]:
    return list(range(1, int(lab.settings("galera").get("nodes", 3)) + 1))


def ndb_sql_nodes(lab: Lab) -> list[int]:
    return list(range(1, int(lab.settings("ndb").get("sql_nodes", 2)) + 1))


def build(lab: Lab) -> dict:
    """The description as data, for the parts the lab has brought up."""
    from clusterscope.lab import galera_nodes as gn
    from clusterscope.lab import ndb

    clusters: list[dict] = []
    if lab.settings("ndb"):
        nodes = [{"name": f"sql{i}", "address": f"127.0.0.1:{lab.port(ndb.sql_service(i))}"}
                 for i in ndb_sql_nodes(lab)]
        nodes.append({"name": "mgmd", "role": "mgmd",
                      "log": str(lab.path("ndb") / "cluster.log")})
        clusters.append({"name": NDB_CLUSTER, "kind": "ndb", "simulated": True,
                         "credentials": NDB_CREDENTIALS, "log_timezone": machine_timezone(),
                         "nodes": nodes})
    if lab.settings("galera"):
        nodes = []
        for n in galera_nodes(lab):
            node = {"name": f"node{n}", "address": f"127.0.0.1:{lab.port(gn.node_name(n))}",
                    "log": str(gn.error_log(lab, n))}
            if n == 2:
                node["credentials"] = NODE2_CREDENTIALS
            nodes.append(node)
        if lab.settings("galera").get("garbd"):
            nodes.append({"name": "garbd", "role": "garbd", "log": str(gn.garbd_log(lab))})
        clusters.append({"name": GALERA_CLUSTER, "kind": "galera",
                         "credentials": GALERA_CREDENTIALS, "log_timezone": machine_timezone(),
                         "nodes": nodes})
    return {"clusters": clusters}


def write(lab: Lab) -> Description:
    """(Re)write the description; readers (inventory, exporter, tracker) notice the change."""
    data = build(lab)
    desc = parse(data, str(path(lab)))  # the lab must write what a user may write
    text = ("# Written by the lab from its parts' settings (clusterscope/lab/description.py);"
            " the format\n# a user writes for their own clusters.\n"
            + yaml.safe_dump(data, sort_keys=False))
    target = path(lab)
    if not target.exists() or target.read_text() != text:
        tmp = target.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.chmod(0o644)
        tmp.replace(target)
    return desc
