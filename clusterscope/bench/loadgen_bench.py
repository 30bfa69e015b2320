"""`make bench` entry: sysbench alone vs the same workload through the loadgen.

A throwaway InnoDB server (own temp lab dir, a free port) runs the fk `nofk` insert
workload; windows alternate raw sysbench (A) and the loadgen's window (B: health snapshots,
row books, metrics export) so drift cancels. The loadgen must keep >= 98% of sysbench's
throughput; `duty_cycle` is the share of wall time spent inside windows.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import time
from pathlib import Path

from clusterscope_loadgen import config, stats, sysbench
from clusterscope_loadgen.metrics import Metrics
from clusterscope_loadgen.runner import Runner
from clusterscope_loadgen.target import Target

from clusterscope.lab import mariadb
from clusterscope.lab.core import Lab

WINDOW = 5.0
PAIRS = 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run() -> dict:
    root = Path(tempfile.mkdtemp(prefix="cs-loadgen-bench-"))
    root.chmod(0o755)
    lab = Lab(root, port_base=40000)
    port = _free_port()
    try:
        base = lab.path("innodb")
        mariadb.prepare_instance(base, port)
        mariadb.start_server(lab, "bench-innodb", "bench", "loadgen bench InnoDB", base, port)
        mariadb.ensure_account(lab, base / "mysqld.sock", "clusterscope_app",
                               ["ALL ON `cs\\_%`.*"])
        cnf = mariadb.client_config(lab, "bench-app", "clusterscope_app", port)
        target = Target.from_cnf(cnf)
        exp = config.experiment("fk")
        runner = Runner(exp, "innodb", [target], window=WINDOW, warmup=0, only=["nofk"],
                        metrics=Metrics(), out=lambda s: None)
        runner.prepare()
        variant = runner.variants[0]
        raw_args = sysbench.argv(exp.script, [target.endpoint], target.user, runner.database,
                                 runner.threads, WINDOW, runner._options(variant,
                                                                          runner.threads))
        sysbench.run(raw_args, target.password, WINDOW + 30)  # warm-up
        raw, through = [], []
        t0 = time.monotonic()
        for i in range(PAIRS):
            order = ("raw", "loadgen") if i % 2 == 0 else ("loadgen", "raw")
            for kind in order:
                if kind == "raw":
                    raw.append(sysbench.run(raw_args, target.password, WINDOW + 30).tps)
                else:
                    through.append(runner.run_window(variant, i + 1, WINDOW).tps)
        wall = time.monotonic() - t0
        ratios = [b / a for a, b in zip(raw, through, strict=True)]
        est = stats.paired(ratios)
        return {"sysbench_tps": round(sum(raw) / len(raw), 1),
                "loadgen_tps": round(sum(through) / len(through), 1),
                "throughput_ratio": round(est.mean, 4),
                "throughput_ratio_ci95": [round(est.low, 4), round(est.high, 4)],
                "target_ratio": 0.98, "meets_target": est.mean >= 0.98,
                "duty_cycle_ratio": round(2 * PAIRS * WINDOW / wall, 3),
                "pairs": PAIRS, "window_seconds": WINDOW}
    finally:
        for s in lab.services():
            lab.stop(s.name)
        shutil.rmtree(root, ignore_errors=True)
