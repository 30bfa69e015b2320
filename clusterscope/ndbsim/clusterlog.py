"""The simulated cluster log, in ndb_mgmd's format and wording.

`2024-05-02 10:11:12 [MgmtSrvr] INFO     -- Node 2: Start phase 1 completed (node restart)`
Timestamps are wall-clock time (log shippers need current times); durations inside a
restart are therefore compressed by the restart's --time-scale. SIMULATED.
"""

from __future__ import annotations

import time
from pathlib import Path


class ClusterLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, lines: list[tuple[str, str]], when: float | None = None) -> None:
        if not lines:
            return
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when or time.time()))
        with open(self.path, "a") as f:
            for level, text in lines:
                f.write(f"{stamp} [MgmtSrvr] {level:<8} -- {text}\n")
