"""`python -m clusterscope.rulegen [--check]`: write rules/*.yml and runbooks/*.md.

Both come from code plus rules/config.yaml; `--check` exits 1 when a file is stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clusterscope import monitoring_rules
from clusterscope.monitoring_runbooks import RUNBOOKS, page

REPO = monitoring_rules.REPO


def expected_files() -> dict[Path, str]:
    c = monitoring_rules.load_config()
    out = {REPO / "rules" / f: text for f, text in monitoring_rules.render_files(c).items()}
    index = ["# Runbooks", "", "One page per alert (generated; edit"
             " `clusterscope/monitoring_runbooks.py` and run `python -m clusterscope.rulegen`).",
             ""]
    for g in monitoring_rules.all_groups(c):
        for a in g.alerts:
            if a.name not in RUNBOOKS:
                raise SystemExit(f"rulegen: alert {a.name} has no runbook in"
                                 " clusterscope/monitoring_runbooks.py")
            out[REPO / "runbooks" / f"{a.name}.md"] = page(a.name, monitoring_rules._fold(a.expr),
                                                           a.severity)
            index.append(f"- [{a.name}]({a.name}.md) ({a.severity}): {a.summary}")
    out[REPO / "runbooks" / "README.md"] = "\n".join(index) + "\n"
    return out


def stale() -> list[str]:
    problems = []
    want = expected_files()
    for path, text in want.items():
        if not path.exists() or path.read_text() != text:
            problems.append(f"{path.relative_to(REPO)} is out of date")
    for d, pattern in (("rules", "*.yml"), ("runbooks", "*.md")):
        for path in (REPO / d).glob(pattern):
            if path not in want:
                problems.append(f"{path.relative_to(REPO)} is not generated any more (remove it)")
    return problems


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m clusterscope.rulegen", description=__doc__)
    p.add_argument("--check", action="store_true", help="only check; exit 1 if stale")
    args = p.parse_args(argv)
    if args.check:
        problems = stale()
        for line in problems:
            print(f"rulegen: {line}", file=sys.stderr)
        return 1 if problems else 0
    for path, text in expected_files().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"rulegen: wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
