"""`make bench`: every benchmark in one run, each printing the ratios it measured.

Speed and memory targets live here, not in timed tests: the figures depend on a machine
that other work shares, so they are reported, compared within one run, and never asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

from clusterscope.bench import (
    ab_calibration,
    ab_validity,
    exporter,
    galera,
    loadgen,
    loadgen_ab,
    logs,
    monitoring,
    ndbsim,
    soak,
)

# name -> a function of no arguments returning a dict of figures (at least one key
# containing "ratio").
BENCHMARKS: dict[str, Callable[[], dict]] = {
    "loadgen": loadgen.run,
    "loadgen-designs": loadgen_ab.run_designs,
    # A/A on two tables and injected server-side costs: false positives and coverage
    "loadgen-calibration": ab_calibration.run,
    # known server-side costs: what the A/B designs measure, against long separate runs
    "ab-validity": ab_validity.run,
    "galera": galera.run,
    "exporter": exporter.run,
    "ndbsim": ndbsim.run,
    "logs": logs.run,
    "monitoring": monitoring.run,
    # the always-on soak (issue 28): faults for --minutes, judged; `ok` false fails the bench
    "soak": soak.run,
}
# benchmarks that take the bench's options: name -> option -> keyword of its function
OPTIONS = {"soak": {"minutes": "minutes"}, "ab-validity": {"quick": "quick"},
           "loadgen-calibration": {"quick": "quick"}}


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run the benchmarks and print the measured ratios")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these benchmarks")
    p.add_argument("--json", action="store_true")
    soak.add_arguments(p)
    p.add_argument("--quick", action="store_true", default=None,
                   help="ab-validity, loadgen-calibration: a few units of everything")
    p.set_defaults(func=run)


def table(rows: dict[str, dict], indent: str = "") -> str:
    """Rows of figures (e.g. one per component) as aligned text columns; "-" where a row
    has no such figure."""
    columns = list(dict.fromkeys(k for r in rows.values() for k in r))
    cells = [["", *columns]] + [[name, *(str(r.get(c, "-")) for c in columns)]
                                for name, r in rows.items()]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return "\n".join(indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths,
                                                                        strict=True)).rstrip()
                     for row in cells)


def run(args: argparse.Namespace) -> int:
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}",
              file=sys.stderr)
        return 2
    results: dict[str, dict] = {}
    failed = False
    for name in args.names or list(BENCHMARKS):
        print(f"bench: {name} ...", flush=True)
        t0 = time.monotonic()
        try:
            kwargs = {kw: getattr(args, opt) for opt, kw in OPTIONS.get(name, {}).items()
                      if getattr(args, opt, None) is not None}
            figures = BENCHMARKS[name](**kwargs)
            if figures.get("ok") is False:
                failed = True
        except Exception as exc:  # noqa: BLE001 - report and go on with the others
            failed = True
            figures = {"error": f"{type(exc).__name__}: {exc}"}
        figures["bench_wall_seconds"] = round(time.monotonic() - t0, 1)
        results[name] = figures
        if not args.json:
            for key, value in figures.items():
                if isinstance(value, dict) and value and all(isinstance(v, dict)
                                                             for v in value.values()):
                    print(f"  {name}.{key}:")
                    print(table(value, indent="    "))
                else:
                    print(f"  {name}.{key} = {value}")
    if args.json:
        print(json.dumps(results, indent=2))
    return 1 if failed else 0
