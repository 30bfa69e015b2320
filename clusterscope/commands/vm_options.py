"""The options that say which VictoriaMetrics a command reads and writes (`--vm`,
`--vm-write`, `--lab-dir`) and how it proves who it is to the door (`--vm-credentials`,
`--vm-ca`); lab/endpoints.py decides what they, the environment or the lab select."""

from __future__ import annotations

import argparse

from clusterscope.lab.endpoints import VM_ENV, VM_URL_ENV, VM_WRITE_URL_ENV, Source, metrics


def add_access_arguments(p: argparse.ArgumentParser) -> None:
    """The door's credentials (a file, never the password itself) and CA."""
    p.add_argument("--vm-credentials", metavar="FILE",
                   help=f"a file holding USER:PASSWORD of a door role (read; write for pins);"
                        f" default ${VM_ENV}_CREDENTIALS, or ${VM_ENV}_USER and"
                        f" ${VM_ENV}_PASSWORD")
    p.add_argument("--vm-ca", metavar="FILE",
                   help=f"the CA the door's certificate is checked against (default"
                        f" ${VM_ENV}_CA, else the system's)")


def add_arguments(p: argparse.ArgumentParser, *, write: bool = False) -> None:
    p.add_argument("--vm", metavar="URL",
                   help=f"VictoriaMetrics or Prometheus to read (default ${VM_URL_ENV}, else"
                        " the lab's): the deployment's door https://HOST:8427, or"
                        " http://HOST:8428, or vmselect's http://HOST:8481/select/0/prometheus")
    if write:
        p.add_argument("--vm-write", metavar="URL",
                       help=f"where pins are written (default ${VM_WRITE_URL_ENV}, else the"
                            " read URL): vminsert's http://HOST:8480/insert/0/prometheus with"
                            " the cluster version")
    add_access_arguments(p)
    p.add_argument("--lab-dir",
                   help="read the VictoriaMetrics of this lab (default ./.lab or"
                        " $CLUSTERSCOPE_LAB_DIR, when neither --vm nor $CLUSTERSCOPE_VM_URL"
                        " is given)")


def source(args: argparse.Namespace) -> Source:
    """The VictoriaMetrics for a command's arguments (lab/endpoints.py's order)."""
    return metrics(getattr(args, "vm", None), getattr(args, "vm_write", None),
                   getattr(args, "lab_dir", None), getattr(args, "vm_credentials", None),
                   getattr(args, "vm_ca", None))
