"""The `clusterscope` command: each sub-command lives in its own module."""

from __future__ import annotations

import argparse
import sys

from clusterscope.rules.config import RulesConfigError

try:
    from clusterscope import bench, demo, gotools, lint, maintenance
    from clusterscope.analysis import cli as analysis_cli
    from clusterscope.analysis.periods import argv_with_periods
    from clusterscope.dashboards import cli as dashboards_cli
    from clusterscope.deploy import compose
    from clusterscope.lab import cli as lab_cli
    from clusterscope.lab import loadgen as lab_loadgen
    from clusterscope.logs import cli as logs_cli
    from clusterscope.rules import generate as rules_cli
except RulesConfigError as exc:  # the dashboards read rules/config.yaml when imported
    raise SystemExit(f"clusterscope: {exc}") from None

# Each provides `add_arguments(subparsers)`; the order is the order of `--help`.
COMMANDS = [lab_cli, gotools, lab_loadgen, analysis_cli, logs_cli, dashboards_cli, rules_cli,
            maintenance, compose, demo, bench, lint]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clusterscope", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.add_arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # `--before -2h..-1h`: argparse would take the period for an option
    args = build_parser().parse_args(argv_with_periods(sys.argv[1:] if argv is None else argv))
    try:
        return int(args.func(args) or 0)
    except RulesConfigError as exc:
        print(f"clusterscope: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
