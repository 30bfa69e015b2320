"""`clusterscope dashboards generate|check|verify`."""

from __future__ import annotations

import argparse

from clusterscope.commands import vm_options


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dashboards", help="Grafana dashboards: generate, check, verify on a lab")
    dsub = p.add_subparsers(dest="dashboards_cmd", required=True)
    g = dsub.add_parser("generate", help="write dashboards/json/*.json from the Python code")
    g.set_defaults(func=cmd_generate, check=False)
    c = dsub.add_parser("check", help="fail if the committed JSON is not what generate makes")
    c.set_defaults(func=cmd_generate, check=True)
    v = dsub.add_parser("verify", help="run every panel's query against a VictoriaMetrics or"
                        " Prometheus (default: the lab's, and its VictoriaLogs) and say which"
                        " panels fill and why the others are empty")
    vm_options.add_arguments(v)
    v.add_argument("--minutes", type=float, default=30.0, help="time range to query")
    v.add_argument("--json", action="store_true")
    v.set_defaults(func=cmd_verify)


def cmd_generate(args: argparse.Namespace) -> int:
    from clusterscope import paths
    from clusterscope.dashboards.render import OUT_DIR, expected_files

    return paths.generate("dashboards", expected_files(), args.check, ((OUT_DIR, "*.json"),),
                          "clusterscope dashboards generate")


def cmd_verify(args: argparse.Namespace) -> int:
    import json
    import sys
    import time

    from clusterscope.clients.vm import VMError
    from clusterscope.dashboards.verify import verify_all

    end = time.time()
    try:
        src = vm_options.source(args)
        results = verify_all(src, end - args.minutes * 60, end)
    except VMError as exc:
        print(f"dashboards verify: {exc}", file=sys.stderr)
        return 2
    empty = [r for r in results if not r.ok]
    if args.json:
        print(json.dumps([{**vars(r), "ok": r.ok} for r in results], indent=2))
    else:
        print(f"dashboards verify: {src.describe()}, the last {args.minutes:g} minutes")
        for r in results:
            print(f"{'ok   ' if r.ok else 'EMPTY'} {r.dashboard} / {r.panel} / {r.ref}:"
                  f" {r.series} series")
            if not r.ok:
                print(f"      why: {r.reason}")
        print(f"dashboards: {len(results) - len(empty)} of {len(results)} queries returned data")
    return 1 if empty else 0
