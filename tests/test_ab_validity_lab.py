"""`clusterscope bench ab-validity --quick` end to end on the lab's Galera: every injected
server-side mechanism gets both readings with intervals, the truth from separate runs, and
their ratios. The figures themselves are the benchmark's (docs/loadgen.md); here the run
must simply produce them for every mechanism, from valid windows."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from clusterscope_loadgen.target import Target, connection
from helpers import REPO

pytestmark = pytest.mark.lab


def test_ab_validity_quick_reports_both_readings_per_mechanism(galera_lab) -> None:
    env = {**galera_lab.env, "CLUSTERSCOPE_BENCH_LAB_DIR": str(galera_lab.root)}
    proc = subprocess.run([sys.executable, "-m", "clusterscope.cli", "bench", "ab-validity",
                           "--quick", "--json"], env=env, cwd=REPO, text=True,
                          capture_output=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    figures = json.loads(proc.stdout[proc.stdout.index("{"):])["ab-validity"]
    assert "error" not in figures, figures
    assert figures["estimand_designs"]["mixed_statement"] == "interleaved"
    rows = figures["conditions"]
    kinds = {key.split("/")[0] for key in rows}
    assert kinds >= {"sleep", "cpu", "hot", "pad"}, rows
    for key, row in rows.items():
        for reading in ("mixed_statement", "whole_workload", "truth"):
            low, high = row[f"{reading}_ci_pct"]
            assert row[f"{reading}_n"] >= 2, (key, reading)
            assert low is not None and high is not None and low <= row[f"{reading}_pct"] <= high
        assert row["ratio_mixed_to_whole"] is not None and math.isfinite(
            row["ratio_mixed_to_whole"]), key
        assert len(row["ratio_mixed_to_whole_ci"]) == 2  # None where the data do not bound it
        assert row["invalid_windows"] == 0, key
    # the upserts keep each table at its size and spread over it (a variant's own row
    # counter once shadowed the size option: every upsert hit id 1, a hot row for all)
    cnf = galera_lab.service("galera-node1")["client_config"]
    with connection(Target.from_cnf(cnf), database="cs_bench_inject_2000") as conn, \
            conn.cursor() as cur:
        cur.execute("SELECT COUNT(*), SUM(k > 0) FROM inj_cpu_b WHERE id <= 2000")
        size, touched = cur.fetchone()
    assert size == 2000 and touched > 200, (size, touched)
