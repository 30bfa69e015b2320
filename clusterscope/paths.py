"""Where the repository is, and the one write-or-check path every generator uses.

Rules, runbooks, dashboards and compose/config are generated from code and committed; each
generator hands `generate()` the files it would write, so "stale" means the same thing for
all of them and `clusterscope lint` reports them alike.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def stale(expected: dict[Path, str], owned: Iterable[tuple[Path, str]] = ()) -> list[str]:
    """What differs between the committed files and `expected`.

    `owned` lists (directory, glob) pairs the generator owns entirely: a file there that
    `expected` does not name is reported as no longer generated.
    """
    problems = []
    for path, text in expected.items():
        if not path.exists():
            problems.append(f"{_rel(path)} is missing")
        elif path.read_text() != text:
            problems.append(f"{_rel(path)} is out of date")
    for directory, pattern in owned:
        for path in sorted(directory.glob(pattern)):
            if path not in expected:
                problems.append(f"{_rel(path)} is not generated any more (remove it)")
    return problems


def write(expected: dict[Path, str], say: Callable[[str], None] = print) -> list[Path]:
    """Write the files whose content changed; returns them."""
    written = []
    for path, text in expected.items():
        if path.exists() and path.read_text() == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
        say(f"wrote {_rel(path)}")
    return written


def generate(name: str, expected: dict[Path, str], check: bool,
             owned: Iterable[tuple[Path, str]] = (), hint: str = "") -> int:
    """`generate` or `check` one generator's files; the exit status of its command."""
    if not check:
        write(expected, lambda line: print(f"{name}: {line}"))
        return 0
    problems = stale(expected, owned)
    for line in problems:
        print(f"{name}: {line}", file=sys.stderr)
    if problems:
        if hint:
            print(f"{name}: run `{hint}` and commit", file=sys.stderr)
        return 1
    print(f"{name}: up to date")
    return 0


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)
