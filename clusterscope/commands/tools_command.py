"""`clusterscope tools build|list`: the Go-built tools (clusterscope/gotools.py)."""

from __future__ import annotations

import argparse
import sys

from clusterscope import gotools


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tools", help="build or locate the Go-built tools (VictoriaMetrics,"
                       " VictoriaLogs, the OpenTelemetry Collector, ...)")
    tsub = p.add_subparsers(dest="tools_cmd", required=True)
    b = tsub.add_parser("build", help="build the named tools (default: all)")
    # No `choices` with a list default: argparse checks the default list against them.
    b.add_argument("names", nargs="*", metavar="NAME", help=f"one of {', '.join(gotools.TOOLS)}")
    tsub.add_parser("list", help="print each tool's cached path")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.tools_cmd == "list":
        for t in gotools.TOOLS.values():
            print(f"{t.name}\t{t.version}\t{t.path}\t{'built' if t.path.exists() else 'missing'}")
        return 0
    unknown = [n for n in args.names if n not in gotools.TOOLS]
    if unknown:
        print(f"unknown tool(s): {', '.join(unknown)}; known: {', '.join(gotools.TOOLS)}",
              file=sys.stderr)
        return 2
    try:
        for name in args.names or list(gotools.TOOLS):
            print(f"{name}: {gotools.build(gotools.TOOLS[name])}")
    except gotools.ToolError as exc:
        print(f"tools: {exc}", file=sys.stderr)
        return 1
    return 0
