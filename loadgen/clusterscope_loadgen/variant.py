"""One variant of an experiment: what it writes, and on how many threads and nodes.

Its own room because both the config reader (config.py) and the designs (designs.py) need it,
and the config reader validates against the designs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Variant:
    name: str
    table: str
    baseline: str | None = None
    threads: int | None = None  # None: the run's thread count
    writers: int = 1
    reader: str = "writer"
    engines: tuple[str, ...] = ()
    rows_per_event: int = 1
    options: dict[str, Any] = field(default_factory=dict)
    design: str | None = None  # a baseline's: the design of its group

    def runs_on(self, engine: str) -> bool:
        return not self.engines or engine in self.engines

    @property
    def needs_peer(self) -> bool:
        return self.writers > 1 or self.reader == "peer"
