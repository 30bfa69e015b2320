"""`rules/config.yaml`: every threshold, window, selector, link and dashboard uid.

The monitoring-mixin pattern: one configuration read by the rules, the runbooks and the
dashboards, so a selector or a uid is written once.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from clusterscope.paths import REPO

# The checkout's file; an installed toolkit (`pip install .`, no checkout) reads the copy
# the wheel carries: clusterscope/rules/config.yaml is a symlink to it, which the build
# copies as package data.
CONFIG = REPO / "rules" / "config.yaml"
if not CONFIG.is_file():
    CONFIG = Path(__file__).with_name("config.yaml")


def load_config(path: Path = CONFIG) -> dict:
    return yaml.safe_load(path.read_text())


@cache
def shared() -> dict:
    """The committed configuration, read once per process (dashboards, uids)."""
    return load_config()
