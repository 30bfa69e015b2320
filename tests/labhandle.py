"""The tests' handle on a lab: its directory, its port range, and the real CLI run against
it (`lab.cli("lab", "up", "--ndb")`), parts brought up once and kept for the session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import REPO


class LabHandle:
    def __init__(self, root: Path, port_base: int) -> None:
        self.root = root
        self.port_base = port_base
        self.env = dict(os.environ, CLUSTERSCOPE_LAB_DIR=str(root),
                        CLUSTERSCOPE_PORT_BASE=str(port_base))
        self.parts: set[str] = set()

    def cli(self, *args: str, check: bool = True, timeout: float = 900,
            **kw) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-m", "clusterscope.cli", *args], env=self.env,
                              cwd=REPO, text=True, capture_output=True, timeout=timeout, **kw)
        if check and proc.returncode != 0:
            raise AssertionError(f"clusterscope {' '.join(args)} exited {proc.returncode}\n"
                                 f"stdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}")
        return proc

    def ensure(self, *parts: str) -> LabHandle:
        missing = [p for p in parts if p not in self.parts]
        if missing:
            self.cli("lab", "up", *[f"--{p}" for p in missing], timeout=1800)
            self.parts.update(missing)
        return self

    def status(self) -> dict:
        return json.loads(self.cli("lab", "status", "--json").stdout)

    def service(self, name: str) -> dict:
        for s in self.status()["services"]:
            if s["name"] == name:
                return s
        raise KeyError(f"no lab service {name!r}")

    def port(self, name: str) -> int:
        from clusterscope.lab.ports import port
        return port(self.port_base, name)
