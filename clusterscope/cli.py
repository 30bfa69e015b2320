"""The `clusterscope` command: each sub-command lives in its own module."""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules that provide `add_arguments(subparsers)`; a module not written yet is skipped.
COMMAND_MODULES = [
    "clusterscope.lab.cli",
    "clusterscope.tools",
    "clusterscope_loadgen.cli",
    "clusterscope.analysis.cli",
    "clusterscope.logs_cli",
    "clusterscope.dashboards.cli",
    "clusterscope.demo",
    "clusterscope.bench",
    "clusterscope.lint",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clusterscope", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue
            raise
        module.add_arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
