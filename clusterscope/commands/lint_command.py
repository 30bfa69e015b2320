"""`clusterscope lint`: every generated file is what its generator makes now."""

from __future__ import annotations

import argparse
import subprocess
import sys

# Each entry: a command (run with this Python) that exits non-zero when its output is stale.
CHECKS: dict[str, list[str]] = {
    "dashboards": ["-m", "clusterscope.cli", "dashboards", "check"],
    "rules": ["-m", "clusterscope.cli", "rules", "check"],
    "compose config": ["-m", "clusterscope.cli", "deploy", "check"],
    "dockerfiles": ["-m", "clusterscope.cli", "deploy", "lint-dockerfiles"],
}


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lint", help="check that generated files are up to date")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    failed = []
    for name, cmd in CHECKS.items():
        proc = subprocess.run([sys.executable, *cmd], capture_output=True, text=True)
        status = "ok" if proc.returncode == 0 else "STALE/FAILED"
        print(f"lint: {name}: {status}")
        if proc.returncode != 0:
            failed.append(name)
            print((proc.stdout + proc.stderr)[-3000:], file=sys.stderr)
    return 1 if failed else 0
