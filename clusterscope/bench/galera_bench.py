"""`make bench` entry: how fast the tracker parses real error-log lines.

The ratio compares parsing with just reading and splitting the same bytes, so it holds
on a shared machine whose absolute speed varies.
"""

from __future__ import annotations

import time

from galera_tracker.parser import NodeParser, Recovery

from clusterscope.paths import REPO

FIXTURES = REPO / "tests" / "fixtures" / "galera"


def run() -> dict:
    lines = [line for f in sorted(FIXTURES.glob("restart-*.log"))
             for line in f.read_text().splitlines()] * 200
    data = "\n".join(lines)
    t0 = time.perf_counter()
    n_split = sum(1 for _ in data.split("\n"))
    t_split = time.perf_counter() - t0
    parser = NodeParser(node="node3")
    t0 = time.perf_counter()
    found = sum(1 for line in data.split("\n") for e in parser.feed(line)
                if isinstance(e, Recovery))
    t_parse = time.perf_counter() - t0
    return {"lines": n_split, "recoveries_found": found,
            "parse_lines_per_second": round(n_split / t_parse),
            "parse_vs_split_time_ratio": round(t_parse / t_split, 1)}
