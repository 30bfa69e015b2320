"""The lab's change detector (exporters/clusterscope_changes), run as the deployment runs it.

It reads the lab's description and the exporters' option file, so every node is read with
the login mysqld_exporter and ndbinfo_exporter use (no account of its own, no privilege
added), writes its change lines to `<lab>/changes/changes.jsonl`, which the lab's log
shipper sends to VictoriaLogs (clusterscope/lab/logs_stack.py), and serves its counters for
VictoriaMetrics. The Galera and NDB parts call `ensure(lab)` once their nodes are up.
"""

from __future__ import annotations

import sys
from pathlib import Path

from clusterscope.lab import exporters, lab_description
from clusterscope.lab.core import Lab, wait_http

NAME = "change-detector"
JUDGE = "change-judge"
# how often the judge looks for changes whose period after has ended
JUDGE_EVERY = "30s"
# the lab polls every 5 s, as it scrapes: a test sees a change within seconds (compose:
# the product's default, 30 s)
POLL = "5s"


def changes_file(lab: Lab) -> Path:
    return lab.path("changes") / "changes.jsonl"


def ensure(lab: Lab) -> None:
    """Start it once (it re-reads the description and the option file by itself)."""
    if lab.running(NAME):
        return
    port = lab.port(NAME)
    home = lab.path("changes")
    argv = [sys.executable, "-m", "clusterscope_changes",
            "--config.clusters", str(lab_description.path(lab)),
            "--config.my-cnf", str(exporters.option_file(lab)),
            "--changes.file", str(changes_file(lab)),
            "--state.file", str(home / "state.json"),
            "--web.listen-address", f"127.0.0.1:{port}",
            "--poll.interval", POLL]
    lab.spawn(NAME, exporters.PART, "change detector: variables, provider options, NDB"
              " parameters and versions of every node", argv, port=port, cwd=home,
              extra={"changes_file": str(changes_file(lab)),
                     "scrape": {"job": "clusterscope_changes", "path": "/metrics",
                                "labels": {}}},
              wait_ready=lambda: wait_http(f"http://127.0.0.1:{port}/metrics", 60,
                                           lambda: lab.running(NAME)))


def ensure_judge(lab: Lab) -> None:
    """`clusterscope changes --notify --watch`: each change's verdict, once its period
    after has ended, written to VictoriaMetrics for the alert rules (the monitoring part
    starts it; it reads the lab's VictoriaMetrics and VictoriaLogs)."""
    if lab.running(JUDGE):
        return
    lab.spawn(JUDGE, "monitoring", "compares each change on its own and writes the verdicts"
              " for the alert rules", [sys.executable, "-m", "clusterscope.cli", "changes",
                                        "--notify", "--watch", JUDGE_EVERY, "--since", "2d",
                                        "--lab-dir", str(lab.root)],
              port=None, cwd=lab.path("changes"), wait_ready=lambda: None)
