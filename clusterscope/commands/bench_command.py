"""`clusterscope bench [NAME...]` (`make bench`): run the benchmarks (clusterscope/bench/) and
print the figures each measured; a failed one fails the command, the others still run."""

from __future__ import annotations

import argparse
import json
import sys
import time

from clusterscope import bench


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run the benchmarks and print the measured ratios")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these benchmarks")
    p.add_argument("--json", action="store_true")
    p.add_argument("--minutes", type=float,
                   help="soak: minutes of faults (default 3; the first cycle always runs whole)")
    p.add_argument("--quick", action="store_true", default=None,
                   help="ab-validity, loadgen-calibration, ab-alarms: a few units of everything")
    p.add_argument("--aa-runs", type=int, default=None, metavar="N",
                   help="loadgen-calibration: only the A/A part, N runs per design (default:"
                        " 300 runs and the injected costs' coverage)")
    p.add_argument("--coverage-only", action="store_true", default=None,
                   help="loadgen-calibration: only the injected costs' coverage (no A/A)")
    p.add_argument("--replay", metavar="FILE", default=None,
                   help="loadgen-calibration: judge a recording of its units again (no lab)")
    p.add_argument("--estimand", choices=("whole_workload", "mixed_statement"), default=None,
                   help="loadgen-calibration: only the design that reads this estimand (the"
                        " default design reads whole_workload; default: both)")
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
    unknown = [n for n in args.names if n not in bench.BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(bench.BENCHMARKS)}",
              file=sys.stderr)
        return 2
    results: dict[str, dict] = {}
    failed = False
    for name in args.names or list(bench.BENCHMARKS):
        print(f"bench: {name} ...", flush=True)
        t0 = time.monotonic()
        try:
            kwargs = {kw: getattr(args, opt) for opt, kw in bench.OPTIONS.get(name, {}).items()
                      if getattr(args, opt, None) is not None}
            figures = bench.BENCHMARKS[name](**kwargs)
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
