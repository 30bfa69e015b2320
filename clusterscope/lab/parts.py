"""The lab's parts, in start order. A part is a module with:

- `NAME`, `HELP`: its flag on `lab up` (`--<NAME>`) and a one-line description;
- `up(lab, options) -> None`: bring it up (idempotent; `options` holds its `lab up` flags);
- optionally `before_down(lab)`, and `after_lab_change(lab)` (called on every part that is
  up whenever any part came up, e.g. to regenerate scrape targets).

Their `lab up` options and `lab <NAME> ...` commands live in clusterscope/commands/.
"""

from __future__ import annotations

from types import ModuleType

from clusterscope.lab import galera_part, monitoring_part, ndb_part

PARTS: dict[str, ModuleType] = {"ndb": ndb_part, "galera": galera_part,
                                 "monitoring": monitoring_part}


def lab_changed(lab: object) -> list[str]:
    """Let every part that is up take a change of the lab's services (e.g. new scrape
    targets); returns the problems, which never stop the caller."""
    problems = []
    for part in lab.parts_up():  # type: ignore[attr-defined]
        hook = getattr(PARTS.get(part), "after_lab_change", None)
        if hook:
            try:
                hook(lab)
            except Exception as exc:  # noqa: BLE001 - the change itself happened
                problems.append(f"{part} did not take the change: {exc}")
    return problems
