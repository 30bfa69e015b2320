"""`clusterscope demo` (`make demo`): the main job in one command (clusterscope/demo.py)."""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from clusterscope.demo import Demo, DemoError


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="the main job: lab, scenario, alert, comparison, report")
    p.add_argument("--lab-dir", help="lab directory (default ./.lab or $CLUSTERSCOPE_LAB_DIR)")
    p.add_argument("--short", action="store_true",
                   help="a shorter scenario (CI): fewer windows and restarts")
    p.add_argument("--down", action="store_true", help="stop the lab at the end")
    p.add_argument("--time-scale", type=float, default=120.0,
                   help="simulated NDB cluster seconds per wall second (default 120; a"
                        " restart runs slower where it would end within two scrapes)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    demo = Demo(args)

    def on_term(signum, frame):  # noqa: ANN001 - signal handler signature
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    try:
        result = demo.run()
    except (KeyboardInterrupt, DemoError, subprocess.TimeoutExpired) as exc:
        print(f"\ndemo stopped: {exc if not isinstance(exc, KeyboardInterrupt) else 'Ctrl-C'};"
              " stopping the lab ...", file=sys.stderr, flush=True)
        demo.cs("lab", "down", check=False, timeout=600)
        return 130 if isinstance(exc, KeyboardInterrupt) else 1
    report = Path(result["report"])
    (demo.lab_dir / "demo-result.json").write_text(json.dumps(result, indent=1, default=str))
    print(f"\nDone in {time.monotonic() - demo.t_start:.0f}s.\n"
          f"  Report:      {report}  (open it in a browser; works offline)\n"
          f"  Lab status:  clusterscope lab status   (VictoriaMetrics, VictoriaLogs ...)\n"
          f"  Stop it:     .venv/bin/clusterscope lab down   (add --wipe to delete {demo.lab_dir})")
    if args.down:
        demo.cs("lab", "down", check=False, timeout=600)
        print("  (lab stopped: --down)")
    return 0
