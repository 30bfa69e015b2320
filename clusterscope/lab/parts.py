"""The lab's parts, in start order. A part is a module with:

- `NAME`, `HELP`: its flag on `lab up` (`--<NAME>`) and a one-line description;
- `up(lab, options) -> None`: bring it up (idempotent);
- optionally `add_up_arguments(parser)`, `add_commands(subparsers)` (for `lab <NAME> ...`),
  `before_down(lab)`, and `after_lab_change(lab)` (called on every part that is up whenever
  any part came up, e.g. to regenerate scrape targets).
A part whose module does not exist yet is skipped, so `lab up` means "all parts that exist".
"""

from __future__ import annotations

import importlib
from types import ModuleType

PART_MODULES: dict[str, str] = {
    "ndb": "clusterscope.lab.ndb",
    "galera": "clusterscope.lab.galera",
    "monitoring": "clusterscope.lab.monitoring",
}


def load_parts() -> dict[str, ModuleType]:
    parts: dict[str, ModuleType] = {}
    for name, module in PART_MODULES.items():
        try:
            parts[name] = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    return parts
