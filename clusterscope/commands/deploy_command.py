"""`clusterscope deploy generate|check|lint-dockerfiles`: the Compose deployment's generated
configuration (clusterscope/deploy/compose.py) and its Dockerfiles' lint."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clusterscope import paths
from clusterscope.deploy import compose, dockerfile_lint


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("deploy", help="the Compose deployment: generate/check compose/config,"
                       " lint the Dockerfiles")
    dsub = p.add_subparsers(dest="deploy_cmd", required=True)
    dsub.add_parser("generate", help="write compose/config/ from the lab's code").set_defaults(
        func=cmd_generate, check=False)
    dsub.add_parser("check", help="fail if compose/config/ is stale").set_defaults(
        func=cmd_generate, check=True)
    lint = dsub.add_parser("lint-dockerfiles", help="parse and lint the repository's Dockerfiles")
    lint.add_argument("files", nargs="*", help="default: every Dockerfile in the repository")
    lint.set_defaults(func=cmd_lint_dockerfiles)


def cmd_generate(args: argparse.Namespace) -> int:
    return paths.generate("compose config", compose.files(), args.check, hint=compose.COMMAND)


def cmd_lint_dockerfiles(args: argparse.Namespace) -> int:
    files = [Path(a) for a in args.files] or dockerfile_lint.DOCKERFILES
    problems = [p for path in files for p in dockerfile_lint.lint(path)]
    for p in problems:
        print(f"dockerfile_lint: {p}", file=sys.stderr)
    if not problems:
        print(f"dockerfile_lint: {len(files)} Dockerfiles ok")
    return 1 if problems else 0
