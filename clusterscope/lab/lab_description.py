"""The lab's description of what it monitors: `<lab>/clusterscope.yml`, in the format a user
writes for their own clusters (exporters/clusterscope_inventory/description.py).

The lab writes it from its parts' settings (how many Galera nodes, garbd or not, how many
NDB SQL nodes), never from what happens to be running: a killed node stays described, so
the expected sizes do not shrink with it. Everything the deployment derives from a user's
description (scrape targets, the exporters' targets, the tracker's logs, log shipping,
expected sizes) the lab derives from this file the same way.

Alerting: the lab's webhook receiver (clusterscope/lab/webhook.py) stands in for every
integration, one path per receiver (critical, default for warnings, info, and the
Watchdog's heartbeat), its URLs in secret files as a deployment keeps them
(<lab>/monitoring/alerting/), so the lab's Alertmanager configuration is rendered from this
file by the inventory exactly as compose's is.

The loadgen may write to both of the lab's clusters (`loadgen: true`): they exist to be
loaded.

Credentials: the lab's Galera nodes log in with `[client]` of the exporters' option file,
except node2, which has an account and password of its own (`[client.node2]`), so the lab
always runs the per-node credentials path; the NDB SQL nodes use `[client.ndb]`.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from clusterscope_inventory import probes
from clusterscope_inventory.description import Description, parse

from clusterscope.lab import galera_nodes as gn
from clusterscope.lab.core import Lab
from clusterscope.ndbsim import scenario as scenarios

FILE = "clusterscope.yml"
PROBES_FILE = "probes.yml"
# the port mysqld_exporter listens on behind its guard (clusterscope/lab/exporters.py)
PROBE_BACKEND = "mysqld-exporter-backend"
GALERA_CLUSTER = "lab-galera"
NDB_CLUSTER = "lab-ndb"
GALERA_CREDENTIALS = "client"
NODE2_CREDENTIALS = "client.node2"  # node2's own account (different password)
NDB_CREDENTIALS = "client.ndb"


def path(lab: Lab) -> Path:
    return lab.root / FILE


def probes_path(lab: Lab) -> Path:
    """The probe guard's allow-list, written with the description (as compose's inventory
    serves it at /config/probes.yml)."""
    return lab.root / PROBES_FILE


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


# The NDB part's SQL node services: named here, beside the Galera nodes' (galera_nodes.py),
# because the description names every node's address and the part starts them.
SQL = "ndb-sql"
DEFAULT_SQL_NODES = 2


def sql_service(i: int) -> str:
    """SQL node i's service: `ndb-sql` for the first (its name before there were more)."""
    return SQL if i == 1 else f"{SQL}{i}"


def sql_nodes(lab: Lab) -> list[int]:
    return list(range(1, int(lab.settings("ndb").get("sql_nodes", DEFAULT_SQL_NODES)) + 1))


ALERTING_DIR = ("monitoring", "alerting")
# receiver -> the webhook's path (what `lab monitoring alerts` and the tests read)
LAB_RECEIVERS = {"critical": "critical", "default": "alerts", "info": "info"}


def alerting_dir(lab: Lab) -> Path:
    return lab.path(*ALERTING_DIR)


def _alerting(lab: Lab) -> dict:
    """Every severity to its own path of the lab's webhook; the URLs in files."""
    base = f"http://127.0.0.1:{lab.port('webhook')}"
    secrets = alerting_dir(lab)
    for name, path in [*LAB_RECEIVERS.items(), ("heartbeat", "heartbeat")]:
        f = secrets / f"{name}_url"
        text = f"{base}/{path}\n"
        if not f.exists() or f.read_text() != text:
            f.write_text(text)
    return {"critical": "critical", "warning": "default", "info": "info",
            "heartbeat": {"url_file": "heartbeat_url"},
            "receivers": {name: {"webhook": {"url_file": f"{name}_url",
                                             "send_resolved": True}}
                          for name in LAB_RECEIVERS}}


def ndb_data_nodes(lab: Lab) -> list[int]:
    """The simulated cluster's data node ids (its scenario's)."""
    path = lab.settings("ndb").get("scenario_path")
    try:
        return list(scenarios.load(path).data_nodes) if path else []
    except (OSError, ValueError):
        return []


def build(lab: Lab) -> dict:
    """The description as data, for the parts the lab has brought up. Every node lives on
    this one host, so every node names the lab's one node_exporter."""
    host = f"127.0.0.1:{lab.port('node-exporter')}"
    clusters: list[dict] = []
    if lab.settings("ndb"):
        nodes = [{"name": f"sql{i}", "address": f"127.0.0.1:{lab.port(sql_service(i))}",
                  "node_exporter": host}
                 for i in sql_nodes(lab)]
        nodes.append({"name": "mgmd", "role": "mgmd",
                      "log": str(lab.path("ndb") / "cluster.log")})
        nodes += [{"name": f"data{i}", "role": "data", "node_exporter": host}
                  for i in ndb_data_nodes(lab)]
        clusters.append({"name": NDB_CLUSTER, "kind": "ndb", "simulated": True,
                         "credentials": NDB_CREDENTIALS, "log_timezone": machine_timezone(),
                         "loadgen": True, "nodes": nodes})
    if lab.settings("galera"):
        nodes = []
        for n in galera_nodes(lab):
            node = {"name": f"node{n}", "address": f"127.0.0.1:{lab.port(gn.node_name(n))}",
                    "log": str(gn.error_log(lab, n)), "node_exporter": host}
            if n == 2:
                node["credentials"] = NODE2_CREDENTIALS
            nodes.append(node)
        if lab.settings("galera").get("garbd"):
            nodes.append({"name": "garbd", "role": "garbd", "log": str(gn.garbd_log(lab))})
        clusters.append({"name": GALERA_CLUSTER, "kind": "galera",
                         "credentials": GALERA_CREDENTIALS, "log_timezone": machine_timezone(),
                         "loadgen": True, "nodes": nodes})
    return {"clusters": clusters, "alerting": _alerting(lab)}


def write(lab: Lab) -> Description:
    """(Re)write the description; readers (inventory, exporter, tracker) notice the change."""
    data = build(lab)
    desc = parse(data, str(path(lab)))  # the lab must write what a user may write
    text = ("# Written by the lab from its parts' settings (clusterscope/lab/lab_description.py);"
            " the format\n# a user writes for their own clusters.\n"
            + yaml.safe_dump(data, sort_keys=False))
    target = path(lab)
    _replace(target, text)
    _replace(probes_path(lab), probes.render(desc, f"127.0.0.1:{lab.port(PROBE_BACKEND)}"))
    return desc


def _replace(target: Path, text: str) -> None:
    if not target.exists() or target.read_text() != text:
        tmp = target.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.chmod(0o644)
        tmp.replace(target)
