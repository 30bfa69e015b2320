"""`make bench` entry `monitoring`: what monitoring costs the monitored cluster.

A lab Galera runs sysbench oltp_read_write on node1 in alternating windows: every exporter
scraped every 5 s (the normal scrape config) vs none scraped (an empty scrape config, which
VictoriaMetrics re-reads within 5 s). Alternating windows in one run let drift cancel; the
figure is the mean paired throughput ratio (scraped / not scraped) with its 95% interval.
Target: at most 1% lower.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from clusterscope.stats import paired

WINDOW_SECONDS = int(os.environ.get("CLUSTERSCOPE_BENCH_MONITORING_WINDOW", "10"))
PAIRS = int(os.environ.get("CLUSTERSCOPE_BENCH_MONITORING_PAIRS", "6"))
OLTP = "/usr/share/sysbench/oltp_read_write.lua"


def _cli(env: dict, *args: str, timeout: float = 900) -> str:
    proc = subprocess.run([sys.executable, "-m", "clusterscope.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"clusterscope {' '.join(args)}: {proc.stderr[-2000:]}")
    return proc.stdout


def _sysbench(cnf: Path, command: str, seconds: int = 0) -> float:
    c = configparser.ConfigParser()
    c.read(cnf)
    cl = c["client"]
    env = dict(os.environ, MYSQL_PWD=cl["password"])  # never in argv
    argv = ["sysbench", OLTP, f"--mysql-host={cl['host']}", f"--mysql-port={cl['port']}",
            f"--mysql-user={cl['user']}", "--mysql-db=sbtest", "--tables=2",
            "--table-size=10000", "--threads=4", "--db-ps-mode=disable"]
    if command == "run":
        argv += [f"--time={seconds}", "--events=0"]
    proc = subprocess.run([*argv, command], env=env, capture_output=True, text=True,
                          timeout=seconds + 300)
    if proc.returncode != 0:
        raise RuntimeError(f"sysbench {command}: {proc.stderr[-1500:] or proc.stdout[-1500:]}")
    m = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", proc.stdout)
    return float(m.group(1)) if m else 0.0


def run() -> dict:
    root = Path(tempfile.mkdtemp(prefix="cs-bench-mon-"))
    root.chmod(0o755)  # the MariaDB servers run as `mysql`
    base = os.environ.get("CLUSTERSCOPE_BENCH_PORT_BASE", "26300")
    env = dict(os.environ, CLUSTERSCOPE_LAB_DIR=str(root), CLUSTERSCOPE_PORT_BASE=base)
    try:
        _cli(env, "lab", "up", "--galera", "--monitoring")
        from clusterscope.lab.core import Lab
        lab = Lab(root)
        cnf = Path(lab.service("galera-node1").client_config)
        scrape = Path(lab.service("victoria-metrics").extra["scrape_config"])
        full = scrape.read_text()
        none = yaml.safe_dump({"global": yaml.safe_load(full)["global"], "scrape_configs": []})
        _sysbench(cnf, "prepare")
        _sysbench(cnf, "run", 5)  # warm-up
        ratios, on_tps, off_tps = [], [], []
        for i in range(PAIRS):
            # alternate which goes first so a trend within a pair cancels over pairs
            order = ("on", "off") if i % 2 == 0 else ("off", "on")
            got = {}
            for mode in order:
                scrape.write_text(full if mode == "on" else none)
                time.sleep(6)  # VM re-reads the scrape file every 5 s
                got[mode] = _sysbench(cnf, "run", WINDOW_SECONDS)
            on_tps.append(got["on"])
            off_tps.append(got["off"])
            ratios.append(got["on"] / got["off"])
        est = paired(ratios)
        mean, lo, hi = est.mean, est.low, est.high
        return {"pairs": PAIRS, "window_seconds": WINDOW_SECONDS,
                "tps_scraped_mean": round(sum(on_tps) / PAIRS, 1),
                "tps_unscraped_mean": round(sum(off_tps) / PAIRS, 1),
                "tps_ratio_scraped_vs_not": round(mean, 4),
                "tps_ratio_ci95": [round(lo, 4), round(hi, 4)],
                "target": "ratio >= 0.99"}
    finally:
        subprocess.run([sys.executable, "-m", "clusterscope.cli", "lab", "down"], env=env,
                       capture_output=True, timeout=600)
        shutil.rmtree(root, ignore_errors=True)
