"""What the lab's Galera and NDB parts share: the exporters' option file and the one
mysqld_exporter that probes every node of every cluster (multi-target `/probe`).

As in the deployment, one option file holds every login, one section per auth_module
(mysqld_exporter's format: `[client.x]` inherits from `[client]`), and both exporters read
it: mysqld_exporter for its probes, ndbinfo_exporter for the NDB SQL nodes. Which section a
node uses comes from the description (clusterscope/lab/lab_description.py).

mysqld_exporter's /probe takes any target and any section: as in compose, it listens behind
its guard, a vmauth that forwards a probe only for a described node, with that node's
section (clusterscope_inventory/probes.py). The guard holds the port scrapes use; the lab
writes its allow-list beside the description whenever that changes.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

from clusterscope import gotools
from clusterscope.lab import lab_description, mariadb
from clusterscope.lab.core import Lab, LabError, wait_http

MYSQLD_EXPORTER = "mysqld-exporter"
MYSQLD_EXPORTER_BACKEND = lab_description.PROBE_BACKEND  # its port: mysqld_exporter itself
GUARD = "probe-guard"  # the service; it listens on MYSQLD_EXPORTER's port
# the part its service is listed under: neither galera's nor ndb's (it serves both, and it
# is real while the NDB part's services are simulated)
PART = "exporters"
# Galera: the account every node but node2 uses, and node2's own (another password: the
# lab always runs per-node credentials). NDB: the exporter account on every SQL node.
GALERA_USER = "clusterscope_exporter"
NODE2_USER = "clusterscope_exporter_node2"
NDB_USER = "ndbinfo_exporter"
# Only what the dashboards and rules read: global_status (all wsrep_* incl. EVS latency,
# mysql_galera_status_info, threads_connected, Ndb_api_*) and global_variables
# (max_connections, wsrep_desync, gcache size), neither of which needs a privilege. The
# processlist collector would need PROCESS and nothing reads its series: off, so the
# accounts hold no privilege.
FLAGS = ("--collect.global_status", "--collect.global_variables",
         "--no-collect.info_schema.processlist", "--no-collect.slave_status",
         "--no-collect.info_schema.innodb_cmp", "--no-collect.info_schema.innodb_cmpmem",
         "--no-collect.info_schema.query_response_time")


def option_file(lab: Lab) -> Path:
    return lab.path("clients") / "exporters.my.cnf"


def write_option_file(lab: Lab) -> Path:
    """Every login the exporters need for the parts that are up (0600: the lab's exporters
    run as root here; compose hands the same file to them as a secret)."""
    sections: dict[str, dict[str, str | int | None]] = {}
    if lab.settings("galera"):
        sections[lab_description.GALERA_CREDENTIALS] = {
            "user": GALERA_USER, "password": mariadb.password(lab, GALERA_USER)}
        sections[lab_description.NODE2_CREDENTIALS] = {
            "user": NODE2_USER, "password": mariadb.password(lab, NODE2_USER)}
    if lab.settings("ndb"):
        sections[lab_description.NDB_CREDENTIALS] = {
            "user": NDB_USER, "password": mariadb.password(lab, NDB_USER)}
    return mariadb.write_option_file(option_file(lab), sections, 0o600)


def _binary(name: str = "mysqld_exporter") -> str:
    try:
        return str(gotools.build(gotools.TOOLS[name]))
    except gotools.ToolError as exc:
        raise LabError(f"{name}: {exc}") from exc


def ensure_guard(lab: Lab) -> None:
    """The probe guard on the port scrapes use (idempotent)."""
    port = lab.port(MYSQLD_EXPORTER)
    lab_description.write(lab)  # and the allow-list beside it
    cfg = lab_description.probes_path(lab)
    lab.spawn(GUARD, PART, "vmauth: mysqld_exporter's /probe for described nodes only",
              [_binary("vmauth"), f"-auth.config={cfg}", f"-httpListenAddr=127.0.0.1:{port}",
               "-configCheckInterval=5s", "-loggerLevel=WARN"],
              port=port, extra={"url": f"http://127.0.0.1:{port}", "fronts": MYSQLD_EXPORTER},
              wait_ready=lambda: wait_http(f"http://127.0.0.1:{port}/health", 60,
                                           lambda: lab.running(GUARD)))


def ensure_mysqld_exporter(lab: Lab) -> None:
    """Start the lab's mysqld_exporter, or make the running one re-read the option file
    (mysqld_exporter's POST /-/reload, mysqld_exporter.go v0.19.0)."""
    cnf = write_option_file(lab)
    port = lab.port(MYSQLD_EXPORTER_BACKEND)
    url = f"http://127.0.0.1:{port}"
    ensure_guard(lab)
    if lab.running(MYSQLD_EXPORTER):
        req = urllib.request.Request(f"{url}/-/reload", method="POST")
        try:
            urllib.request.urlopen(req, timeout=10).close()
        except OSError as exc:
            raise LabError(f"mysqld_exporter did not reload {cnf}: {exc}") from exc
        return
    lab.spawn(MYSQLD_EXPORTER, PART, f"mysqld_exporter {gotools.MYSQLD_EXPORTER_VERSION}"
              " probing every node (multi-target /probe, behind its guard)",
              [_binary(), f"--config.my-cnf={cnf}", f"--web.listen-address=127.0.0.1:{port}",
               *FLAGS],
              # not scraped on /metrics: that page probes the option file's default target
              # (--mysqld.address, localhost:3306) and would say mysql_up 0 for nothing;
              # the exporter being down shows as up 0 on every one of its probes
              port=port, extra={"my_cnf": str(cnf)},
              wait_ready=lambda: wait_http(f"{url}/metrics", 60,
                                           lambda: lab.running(MYSQLD_EXPORTER)))
