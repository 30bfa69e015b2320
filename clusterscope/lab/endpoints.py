"""Which VictoriaMetrics (or Prometheus) and which VictoriaLogs a command talks to.

The one answer for every command that reads or writes metrics or logs (`compare`,
`baseline`, `report`, `dashboards verify`, `logs`, the demo, the tests). First match wins:

1. an explicit URL: `--vm URL` for reads and `--vm-write URL` for pins (default: the read
   URL); `--logs-url URL` for logs;
2. `--lab-dir DIR`: that lab's;
3. `$CLUSTERSCOPE_VM_URL` and `$CLUSTERSCOPE_VM_WRITE_URL`;
4. the lab of `$CLUSTERSCOPE_LAB_DIR` (or ./.lab), if it runs one.

A lab's VictoriaLogs is used only together with that lab's VictoriaMetrics. Nothing found:
the error says how to point the command at one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from clusterscope.clients.vlogs import VLogs, VLogsError
from clusterscope.clients.vm import VM, VMError
from clusterscope.lab.core import Lab, lab_dir_from_env
from clusterscope.lab.logs_stack import VLOGS
from clusterscope.lab.monitoring_part import VM as VM_SERVICE

VM_URL_ENV = "CLUSTERSCOPE_VM_URL"
VM_WRITE_URL_ENV = "CLUSTERSCOPE_VM_WRITE_URL"

HOW = (f"pass --vm URL or set {VM_URL_ENV}: a single-node VictoriaMetrics"
       " (--vm http://127.0.0.1:8428), the cluster version's vmselect"
       " (--vm http://HOST:8481/select/0/prometheus, with --vm-write"
       " http://HOST:8480/insert/0/prometheus for pins) or a Prometheus (reads only)")


@dataclass(frozen=True)
class Source:
    """The stores a command uses, and how they were chosen (said in reports)."""

    vm: VM
    lab: str | None = None  # the lab directory, when it is the lab's
    vlogs_url: str | None = None  # the lab's VictoriaLogs, with the lab's VictoriaMetrics

    def describe(self) -> str:
        where = self.vm.url if self.vm.single_node else \
            f"{self.vm.url} (writes to {self.vm.write_url})"
        return f"{where}, the lab's at {self.lab}" if self.lab else where


def _service_url(lab: Lab, name: str) -> str | None:
    svc = lab.service(name)
    return f"http://{svc.host}:{svc.port}" if svc is not None and svc.port else None


def lab_metrics(lab_dir: str | Path | None = None) -> Source:
    """The VictoriaMetrics (and VictoriaLogs) of the lab at `lab_dir` (default: the
    environment's); a VMError when that lab runs none."""
    lab = Lab(lab_dir_from_env(lab_dir))
    url = _service_url(lab, VM_SERVICE)
    if url is None:
        raise VMError(f"no VictoriaMetrics in the lab at {lab.root}: run"
                      " `clusterscope lab up --monitoring`")
    return Source(VM(url), str(lab.root), _service_url(lab, VLOGS))


def metrics(url: str | None = None, write_url: str | None = None,
            lab_dir: str | Path | None = None) -> Source:
    """The VictoriaMetrics for a command's options (see the module's order)."""
    if url:
        return Source(VM(url, write_url=write_url or os.environ.get(VM_WRITE_URL_ENV)))
    if write_url:
        raise VMError("--vm-write needs --vm (the URL reads go to)")
    if not lab_dir and os.environ.get(VM_URL_ENV):
        return Source(VM(os.environ[VM_URL_ENV],
                         write_url=os.environ.get(VM_WRITE_URL_ENV) or None))
    try:
        return lab_metrics(lab_dir)
    except VMError:
        root = lab_dir_from_env(lab_dir)
        raise VMError(f"no VictoriaMetrics to read: {HOW}. (No lab runs at {root} either:"
                      " `clusterscope lab up --monitoring` starts one.)") from None


def logs(url: str | None = None, lab_dir: str | Path | None = None) -> VLogs:
    """The VictoriaLogs at `url`, else the lab's; a VLogsError when there is none."""
    if url:
        return VLogs(url)
    lab = Lab(lab_dir_from_env(lab_dir))
    found = _service_url(lab, VLOGS)
    if found is None:
        raise VLogsError(f"no VictoriaLogs in the lab {lab.root}; `clusterscope lab up"
                         " --monitoring`, or pass --logs-url http://HOST:9428")
    return VLogs(found)
