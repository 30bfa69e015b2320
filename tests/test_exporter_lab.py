"""ndbinfo_exporter in the lab: against the NDB simulator (real MariaDB serving ndbinfo),
scraped while the simulator restarts a data node."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import scrape, series, val
from ndbinfo_exporter import schema

from clusterscope.lab import mariadb

pytestmark = pytest.mark.lab

COMPLETED = schema.RESTART_COMPLETED


def restart_row(cnf: str, node: int) -> dict:
    conn = mariadb.connect(cnf)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT * FROM ndbinfo.restart_info WHERE node_id = %s", (node,))
            row = cur.fetchone()
            cols = [d[0].lower() for d in cur.description]
    finally:
        conn.close()
    return dict(zip(cols, row, strict=True)) if row else {}


def restart_and_watch(lab, port: int, node: int, profile: str, before: float,
                      on_midway=None, timeout: float = 150) -> list[int]:
    """Run a simulated restart, scraping every 0.5 s; returns the statuses seen."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "clusterscope.cli", "lab", "ndb", "restart-node", str(node),
         "--profile", profile, "--time-scale", "120"],
        env=lab.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen: list[int] = []
    deadline = time.monotonic() + timeout
    midway_done = on_midway is None
    try:
        while time.monotonic() < deadline:
            try:
                ss = scrape(port)
            except OSError:
                time.sleep(0.5)  # the exporter is being restarted
                continue
            st = val(ss, "ndb_restart_status", node_id=node)
            if st is not None and (not seen or seen[-1] != int(st)):
                seen.append(int(st))
            if not midway_done and st is not None and int(st) not in COMPLETED:
                on_midway()
                midway_done = True
                continue
            done = val(ss, "ndb_restarts_completed_total", node_id=node) or 0
            if done > before and proc.poll() is not None:
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"restart of node {node} not seen completed within"
                                 f" {timeout:.0f} s; statuses seen: {seen}")
    finally:
        if proc.poll() is None:
            proc.wait(timeout=120)
    assert proc.returncode == 0, proc.stdout.read() if proc.stdout else ""
    return seen


def test_exporter_in_the_lab_through_restarts(ndb_lab) -> None:
    svc = ndb_lab.service("ndb-exporter")
    assert svc["running"] and svc["simulated"]
    assert svc["extra"]["scrape"]["labels"] == {"cluster": "lab-ndb", "simulated": "true"}
    port = svc["port"]
    cnf = ndb_lab.service("ndb-sql")["client_config"]
    ss = scrape(port)
    assert val(ss, "ndb_up") == 1
    ldm = [lbl for lbl, _ in series(ss, "ndb_thread_cpu_percent")
           if lbl["thread_name"] == "ldm" and lbl["mode"] == "exec"]
    assert ldm, "no LDM CPU series"
    assert [v for _, v in series(ss, "ndb_transporter_sent_bytes_total") if v > 0]
    assert val(ss, "ndb_lcp_progress_ratio") is not None
    node = 2
    before = val(ss, "ndb_restarts_completed_total", node_id=node) or 0

    # a 7.6 restart: its phases appear, and exactly one completed restart is counted
    seen = restart_and_watch(ndb_lab, port, node, "7.6", before)
    print("7.6 restart statuses seen by the exporter:", seen)
    assert len(seen) >= 2 and seen[-1] in COMPLETED, seen
    ss = scrape(port)
    assert val(ss, "ndb_restarts_completed_total", node_id=node) == before + 1
    row = restart_row(cnf, node)
    for col, value in row.items():
        if col.startswith("secs_") and value is not None:
            assert val(ss, "ndb_restart_phase_seconds", node_id=node,
                       phase=col[len("secs_"):]) == value, col
    assert val(ss, "ndb_restart_total_seconds", node_id=node) == row["total_restart_secs"]

    # a 7.5 restart; the exporter is killed and started again half way: counted once
    from clusterscope.lab import ndb_exporter
    from clusterscope.lab.core import Lab

    def kill_and_restart() -> None:
        pid = ndb_lab.service("ndb-exporter")["pid"]
        os.kill(pid, signal.SIGKILL)
        lab = Lab(ndb_lab.root, ndb_lab.port_base)
        deadline = time.monotonic() + 20
        while lab.running("ndb-exporter") and time.monotonic() < deadline:
            time.sleep(0.2)
        ndb_exporter.up(lab)

    restart_and_watch(ndb_lab, port, node, "7.5", before + 1, on_midway=kill_and_restart)
    ss = scrape(port)
    assert val(ss, "ndb_restarts_completed_total", node_id=node) == before + 2
    row = restart_row(cnf, node)
    assert val(ss, "ndb_restart_total_seconds", node_id=node) == row["total_restart_secs"]
    assert val(ss, "ndb_restart_phase_seconds", node_id=node, phase="restore_fragments") == \
        row["secs_restore_fragments"]


def wait_scrape(port: int, pred, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        ss = scrape(port)
        if pred(ss) or time.monotonic() > deadline:
            return ss
        time.sleep(0.5)


def test_exporter_in_the_lab_under_faults(ndb_lab) -> None:
    port = ndb_lab.service("ndb-exporter")["port"]

    # ndbinfo offline: no data and ndb_up 0, said as such (not an empty cluster)
    ndb_lab.cli("lab", "ndb", "fault", "ndbinfo-offline")
    try:
        ss = wait_scrape(port, lambda s: val(s, "ndb_ndbinfo_offline") == 1)
        assert val(ss, "ndb_ndbinfo_offline") == 1 and val(ss, "ndb_up") == 0
        assert not series(ss, "ndb_node_status") and not series(ss, "ndb_thread_cpu_percent")
    finally:
        ndb_lab.cli("lab", "ndb", "fault", "ndbinfo-offline", "--off")
    ss = wait_scrape(port, lambda s: val(s, "ndb_up") == 1)
    assert val(ss, "ndb_up") == 1 and val(ss, "ndb_ndbinfo_offline") == 0

    # NULL columns (version skew): those samples go, the collector still succeeds
    ndb_lab.cli("lab", "ndb", "fault", "null-columns", "--view", "cpustat",
                "--columns", "OS_user")
    try:
        ss = wait_scrape(port, lambda s: not [1 for lbl, _ in series(s, "ndb_thread_cpu_percent")
                                              if lbl["mode"] == "os_user"])
        modes = {lbl["mode"] for lbl, _ in series(ss, "ndb_thread_cpu_percent")}
        assert "os_user" not in modes and "exec" in modes
        assert val(ss, "ndb_exporter_collector_success", collector="cpustat") == 1
    finally:
        ndb_lab.cli("lab", "ndb", "fault", "clear")

    # a view that errors: its collector fails, the others keep working
    ndb_lab.cli("lab", "ndb", "fault", "view-error", "--view", "counters")
    try:
        ss = wait_scrape(port, lambda s: val(s, "ndb_exporter_collector_success",
                                             collector="counters") == 0)
        assert val(ss, "ndb_exporter_collector_success", collector="counters") == 0
        assert val(ss, "ndb_exporter_collector_success", collector="cpustat") == 1
        assert val(ss, "ndb_up") == 1
    finally:
        ndb_lab.cli("lab", "ndb", "fault", "clear")
    ss = wait_scrape(port, lambda s: val(s, "ndb_exporter_collector_success",
                                         collector="counters") == 1)
    assert series(ss, "ndb_counters_total")
