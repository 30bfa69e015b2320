"""The `clusterscope` command: the list of its sub-commands (clusterscope/commands/)."""

from __future__ import annotations

import argparse
import sys

from clusterscope.analysis.periods import argv_with_periods
from clusterscope.commands import (
    analysis_command,
    bench_command,
    changes_command,
    dashboards_command,
    demo_command,
    deploy_command,
    lab_command,
    lint_command,
    loadgen_command,
    logs_command,
    maintenance_command,
    rules_command,
    tools_command,
)
from clusterscope.rules.rules_config import RulesConfigError

# Each provides `add_arguments(subparsers)`; the order is the order of `--help`.
COMMANDS = [lab_command, tools_command, loadgen_command, analysis_command, changes_command,
            logs_command,
            dashboards_command, rules_command, maintenance_command, deploy_command,
            demo_command, bench_command, lint_command]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clusterscope",
        description="Observability and continuous benchmarks for MySQL NDB Cluster and Galera.")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.add_arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        # rules/config.yaml is read when first needed: some options' defaults come from it
        # `--before -2h..-1h`: argparse would take the period for an option
        args = build_parser().parse_args(argv_with_periods(sys.argv[1:] if argv is None
                                                           else argv))
        return int(args.func(args) or 0)
    except RulesConfigError as exc:
        print(f"clusterscope: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
