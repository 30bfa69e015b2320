"""`clusterscope rules generate|check`: rules/*.yml and runbooks/*.md from
clusterscope/rules/."""

from __future__ import annotations

import argparse

from clusterscope import paths
from clusterscope.rules import generate


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="recording/alerting rules and runbooks: generate, check")
    rsub = p.add_subparsers(dest="rules_cmd", required=True)
    rsub.add_parser("generate", help="write rules/*.yml and runbooks/*.md").set_defaults(
        func=cmd, check=False)
    rsub.add_parser("check", help="fail if a committed rule file or runbook is stale"
                    ).set_defaults(func=cmd, check=True)


def cmd(args: argparse.Namespace) -> int:
    return paths.generate("rules", generate.expected_files(), args.check, generate.OWNED,
                          generate.COMMAND)
