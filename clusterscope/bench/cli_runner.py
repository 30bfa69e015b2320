"""The toolkit's own CLI, run by the benchmarks against a lab of their own."""

from __future__ import annotations

import subprocess
import sys


def run_cli(env: dict, *args: str, timeout: float = 900) -> str:
    """`clusterscope ARGS` in a child process with `env` (the lab's directory and ports); its
    stdout, or an error carrying the end of its stderr."""
    proc = subprocess.run([sys.executable, "-m", "clusterscope.cli", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"clusterscope {' '.join(args)}: {proc.stderr[-2000:]}")
    return proc.stdout
