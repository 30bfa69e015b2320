"""What pytest-xdist workers must not share (`TEST_WORKERS=2 make test`): each worker's lab
gets its own port range and directory."""

from __future__ import annotations

import os


def worker_ports() -> None:
    """Under pytest-xdist (`TEST_WORKERS=2 make test`) each worker runs a lab of its own:
    its own port range, 1,000 above the previous worker's (a lab and the labs tests start
    beside it use fewer than 300 ports), and its own kept directory if one is asked for."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ...
    if not worker.startswith("gw") or os.environ.get("CLUSTERSCOPE_TEST_WORKER_PORTS"):
        return
    n = int(worker[2:])
    base = int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300"))
    os.environ["CLUSTERSCOPE_TEST_PORT_BASE"] = str(base + 1000 * n)
    os.environ["CLUSTERSCOPE_TEST_WORKER_PORTS"] = "1"  # once per worker process
    keep = os.environ.get("CLUSTERSCOPE_TEST_LAB_DIR")
    if keep:
        os.environ["CLUSTERSCOPE_TEST_LAB_DIR"] = f"{keep}-{worker}"
