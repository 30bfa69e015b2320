"""`clusterscope lab up|status|down`, and each part's options and commands
(`lab ndb ...`, `lab galera ...`, `lab monitoring ...`)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys

from clusterscope.commands import lab_galera_command, lab_monitoring_command, lab_ndb_command
from clusterscope.lab.core import Lab, LabError, open_lab, pid_alive
from clusterscope.lab.parts import PARTS, lab_changed

# Each part's `lab up` options and `lab <part> ...` commands, by part name (lab/parts.py).
PART_COMMANDS = {"ndb": lab_ndb_command, "galera": lab_galera_command,
                 "monitoring": lab_monitoring_command}


def add_arguments(sub: argparse._SubParsersAction) -> None:
    parts = PARTS
    p = sub.add_parser("lab", help="the local lab: NDB simulator, Galera, monitoring")
    p.add_argument("--lab-dir", help="lab directory (default ./.lab or $CLUSTERSCOPE_LAB_DIR)")
    p.add_argument("--port-base", type=int,
                   help="first port of the lab's range (default 13300 or"
                        " $CLUSTERSCOPE_PORT_BASE); kept for the lab's lifetime")
    lsub = p.add_subparsers(dest="lab_cmd", required=True)

    up = lsub.add_parser("up", help="bring parts up (no flag: every part)")
    for name, mod in parts.items():
        up.add_argument(f"--{name}", action="store_true", help=mod.HELP)
        PART_COMMANDS[name].add_up_arguments(up)
    up.set_defaults(func=cmd_up)

    st = lsub.add_parser("status", help="every service: what, where, pid, log, client config")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=cmd_status)

    down = lsub.add_parser("down", help="stop every process the lab started")
    down.add_argument("--wipe", action="store_true", help="also delete the lab directory")
    down.set_defaults(func=cmd_down)

    for name in parts:
        PART_COMMANDS[name].add_commands(lsub)


def cmd_up(args: argparse.Namespace) -> int:
    parts = PARTS
    lab = open_lab(args)
    chosen = [n for n in parts if getattr(args, n, False)] or list(parts)
    try:
        for name in chosen:
            print(f"lab: bringing up {name}", flush=True)
            parts[name].up(lab, args)
        problems = lab_changed(lab)
        if problems:
            raise LabError("; ".join(problems))
    except LabError as exc:
        print(f"lab up failed: {exc}", file=sys.stderr)
        return 1
    print(f"lab: up ({', '.join(chosen)}) in {lab.root}; `clusterscope lab status` lists it,"
          " `clusterscope lab down` stops it")
    return 0


def status_rows(lab: Lab) -> list[dict]:
    rows = []
    for s in lab.services():
        row = {k: v for k, v in vars(s).items() if k not in ("start_time",)}
        row["running"] = pid_alive(s.pid, s.start_time)
        rows.append(row)
    return rows


def cmd_status(args: argparse.Namespace) -> int:
    lab = open_lab(args)
    rows = status_rows(lab)
    if args.json:
        print(json.dumps({"lab_dir": str(lab.root), "port_base": lab.port_base,
                          "services": rows}, indent=2))
        return 0
    if not rows:
        print(f"lab {lab.root}: nothing running")
        return 0
    print(f"lab {lab.root} (port base {lab.port_base})")
    fmt = "{:<22} {:<8} {:<6} {:>7} {:<8} {}"
    print(fmt.format("SERVICE", "PART", "PORT", "PID", "STATE", "WHAT / LOG / CLIENT CONFIG"))
    for r in rows:
        state = "running" if r["running"] else "DEAD"
        what = r["what"] + (" [SIMULATED]" if r["simulated"] else "")
        print(fmt.format(r["name"], r["part"], r["port"] or "-", r["pid"] or "-", state, what))
        print(fmt.format("", "", "", "", "", f"log: {r['log']}"))
        if r["client_config"]:
            print(fmt.format("", "", "", "", "", f"client config: {r['client_config']}"))
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    parts = PARTS
    lab = open_lab(args)
    failed = False
    for name in reversed(lab.parts_up()):
        hook = getattr(parts.get(name), "before_down", None)
        if hook:
            try:
                hook(lab)
            except Exception as exc:  # noqa: BLE001 - still stop the processes
                print(f"lab down: {name} cleanup failed: {exc}", file=sys.stderr)
    for s in reversed(lab.services()):
        try:
            lab.stop(s.name)
            print(f"lab: stopped {s.name}", flush=True)
        except LabError as exc:
            failed = True
            print(f"lab down: {s.name}: {exc}", file=sys.stderr)
    if args.wipe and not failed and lab.root.exists():
        shutil.rmtree(lab.root)
        print(f"lab: removed {lab.root}")
    return 1 if failed else 0
