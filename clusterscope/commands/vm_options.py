"""The options that say which VictoriaMetrics a command reads and writes (`--vm`,
`--vm-write`, `--lab-dir`); lab/endpoints.py decides what they, the environment or the
lab select."""

from __future__ import annotations

import argparse

from clusterscope.lab.endpoints import VM_URL_ENV, VM_WRITE_URL_ENV, Source, metrics


def add_arguments(p: argparse.ArgumentParser, *, write: bool = False) -> None:
    p.add_argument("--vm", metavar="URL",
                   help=f"VictoriaMetrics or Prometheus to read (default ${VM_URL_ENV}, else"
                        " the lab's): http://HOST:8428, or vmselect's"
                        " http://HOST:8481/select/0/prometheus")
    if write:
        p.add_argument("--vm-write", metavar="URL",
                       help=f"where pins are written (default ${VM_WRITE_URL_ENV}, else the"
                            " read URL): vminsert's http://HOST:8480/insert/0/prometheus with"
                            " the cluster version")
    p.add_argument("--lab-dir",
                   help="read the VictoriaMetrics of this lab (default ./.lab or"
                        " $CLUSTERSCOPE_LAB_DIR, when neither --vm nor $CLUSTERSCOPE_VM_URL"
                        " is given)")


def source(args: argparse.Namespace) -> Source:
    """The VictoriaMetrics for a command's arguments (lab/endpoints.py's order)."""
    return metrics(getattr(args, "vm", None), getattr(args, "vm_write", None),
                   getattr(args, "lab_dir", None))
