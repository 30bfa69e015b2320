"""Which VictoriaMetrics (or Prometheus) a command reads and writes.

Every command that reads or writes metrics (`compare`, `baseline`, `report`, `dashboards
verify`) takes the same options, first match wins:

1. `--vm URL` (reads) and `--vm-write URL` (pins; default: the read URL);
2. `--lab-dir DIR`: that lab's VictoriaMetrics;
3. `$CLUSTERSCOPE_VM_URL` and `$CLUSTERSCOPE_VM_WRITE_URL`;
4. the lab of `$CLUSTERSCOPE_LAB_DIR` (or ./.lab), if its VictoriaMetrics is registered.

Nothing of these: the error says how to point the command at a VictoriaMetrics.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

from clusterscope.clients.vm import VM, VMError

VM_URL_ENV = "CLUSTERSCOPE_VM_URL"
VM_WRITE_URL_ENV = "CLUSTERSCOPE_VM_WRITE_URL"

HOW = (f"pass --vm URL or set {VM_URL_ENV}: a single-node VictoriaMetrics"
       " (--vm http://127.0.0.1:8428), the cluster version's vmselect"
       " (--vm http://HOST:8481/select/0/prometheus, with --vm-write"
       " http://HOST:8480/insert/0/prometheus for pins) or a Prometheus (reads only)")


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


@dataclass(frozen=True)
class Source:
    """The metrics store a command uses, and how it was chosen (said in reports)."""

    vm: VM
    lab: str | None  # the lab directory, when it is the lab's

    def describe(self) -> str:
        where = self.vm.url if self.vm.single_node else \
            f"{self.vm.url} (writes to {self.vm.write_url})"
        return f"{where}, the lab's at {self.lab}" if self.lab else where


def source(args: argparse.Namespace) -> Source:
    """The VictoriaMetrics for a command's arguments (see the module's order)."""
    url = getattr(args, "vm", None)
    write = getattr(args, "vm_write", None)
    lab_dir = getattr(args, "lab_dir", None)
    if url:
        return Source(VM(url, write_url=write or os.environ.get(VM_WRITE_URL_ENV)), None)
    if write:
        raise VMError("--vm-write needs --vm (the URL reads go to)")
    if not lab_dir and os.environ.get(VM_URL_ENV):
        return Source(VM(os.environ[VM_URL_ENV],
                         write_url=os.environ.get(VM_WRITE_URL_ENV) or None), None)
    from clusterscope.lab.core import Lab, lab_dir_from_env
    from clusterscope.lab.monitoring import VM as VM_SERVICE

    lab = Lab(lab_dir_from_env(lab_dir))
    svc = lab.service(VM_SERVICE)
    if svc is None or svc.port is None:
        raise VMError(f"no VictoriaMetrics to read: {HOW}. (No lab runs at {lab.root} either:"
                      " `clusterscope lab up --monitoring` starts one.)")
    return Source(VM(f"http://{svc.host}:{svc.port}"), str(lab.root))


def vm_from_args(args: argparse.Namespace) -> VM:
    return source(args).vm
