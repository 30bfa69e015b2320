"""The toolkit's own CLI, run by the benchmarks against a lab of their own."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def run_cli(env: dict, *args: str, timeout: float = 900) -> str:
    """`clusterscope ARGS` in a child process with `env` (the lab's directory and ports); its
    stdout, or an error carrying the end of its stderr."""
    proc = subprocess.run([sys.executable, "-m", "clusterscope.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"clusterscope {' '.join(args)}: {proc.stderr[-2000:]}")
    return proc.stdout


def fresh_lab(prefix: str) -> tuple[Path, dict]:
    """A lab directory of the benchmark's own (0755: the MariaDB servers run as `mysql`)
    and the environment pointing the CLI at it, on CLUSTERSCOPE_BENCH_PORT_BASE (26300)."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    base = os.environ.get("CLUSTERSCOPE_BENCH_PORT_BASE", "26300")
    return root, dict(os.environ, CLUSTERSCOPE_LAB_DIR=str(root), CLUSTERSCOPE_PORT_BASE=base)
