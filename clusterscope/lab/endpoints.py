"""Which VictoriaMetrics (or Prometheus) and which VictoriaLogs a command talks to, and with
what credentials.

The one answer for every command that reads or writes metrics or logs (`compare`,
`baseline`, `report`, `dashboards verify`, `logs`, the demo, the tests). First match wins:

1. an explicit URL: `--vm URL` for reads and `--vm-write URL` for pins (default: the read
   URL); `--logs-url URL` for logs;
2. `--lab-dir DIR`: that lab's, through its door;
3. `$CLUSTERSCOPE_VM_URL` and `$CLUSTERSCOPE_VM_WRITE_URL`; `$CLUSTERSCOPE_LOGS_URL`;
4. the lab of `$CLUSTERSCOPE_LAB_DIR` (or ./.lab), if it runs one, through its door.

A URL of the deployment is its door (`https://HOST:8427`: VictoriaMetrics' API, with
VictoriaLogs' under the same URL): the role's credentials come from `--vm-credentials FILE`
or the environment ($CLUSTERSCOPE_VM_CREDENTIALS naming such a file, or
$CLUSTERSCOPE_VM_USER and $CLUSTERSCOPE_VM_PASSWORD), and the door's certificate is checked
against `--vm-ca FILE` ($CLUSTERSCOPE_VM_CA; default the system's CAs); never a password on
the command line (clusterscope/clients/credentials.py). A lab's door is used with the lab's
own credentials files (write role: reads and pins) and CA.

A lab's VictoriaLogs is used only together with that lab's VictoriaMetrics. Nothing found:
the error says how to point the command at one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from clusterscope.clients import credentials
from clusterscope.clients.credentials import NONE, Access
from clusterscope.clients.vlogs import VLogs, VLogsError
from clusterscope.clients.vm import VM, VMError
from clusterscope.lab import door_service
from clusterscope.lab.core import Lab, lab_dir_from_env
from clusterscope.lab.logs_stack import VLOGS
from clusterscope.lab.monitoring_part import VM as VM_SERVICE

VM_URL_ENV = "CLUSTERSCOPE_VM_URL"
VM_WRITE_URL_ENV = "CLUSTERSCOPE_VM_WRITE_URL"
VLOGS_URL_ENV = "CLUSTERSCOPE_LOGS_URL"
VM_ENV = "CLUSTERSCOPE_VM"  # _CREDENTIALS, _USER, _PASSWORD, _CA

HOW = (f"pass --vm URL or set {VM_URL_ENV}: the deployment's door (--vm https://HOST:8427,"
       f" with --vm-credentials FILE or {VM_ENV}_CREDENTIALS), a single-node"
       " VictoriaMetrics (--vm http://127.0.0.1:8428), the cluster version's vmselect"
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

    def logs(self, timeout: float = 10.0) -> VLogs | None:
        """The VictoriaLogs that goes with the VictoriaMetrics (same door, same access)."""
        return VLogs(self.vlogs_url, timeout, self.vm.access) if self.vlogs_url else None


def _service_url(lab: Lab, name: str) -> str | None:
    svc = lab.service(name)
    return f"http://{svc.host}:{svc.port}" if svc is not None and svc.port else None


def _lab_door(lab: Lab) -> tuple[str, Access] | None:
    """The lab's door URL and access when it runs (else None: an older lab, reached
    directly)."""
    if not lab.running(door_service.NAME):
        return None
    return door_service.url(lab), door_service.access(lab)


def lab_metrics(lab_dir: str | Path | None = None) -> Source:
    """The VictoriaMetrics (and VictoriaLogs) of the lab at `lab_dir` (default: the
    environment's), through its door; a VMError when that lab runs none."""
    lab = Lab(lab_dir_from_env(lab_dir))
    url = _service_url(lab, VM_SERVICE)
    if url is None:
        raise VMError(f"no VictoriaMetrics in the lab at {lab.root}: run"
                      " `clusterscope lab up --monitoring`")
    logs_url = _service_url(lab, VLOGS)
    door = _lab_door(lab)
    if door is None:
        return Source(VM(url), str(lab.root), logs_url)
    door_url, access = door
    return Source(VM(door_url, access=access), str(lab.root), logs_url and door_url)


def metrics(url: str | None = None, write_url: str | None = None,
            lab_dir: str | Path | None = None, credentials_file: str | None = None,
            ca_file: str | None = None) -> Source:
    """The VictoriaMetrics for a command's options (see the module's order)."""
    if url or (not lab_dir and os.environ.get(VM_URL_ENV)):
        try:
            access = credentials.access(credentials_file, ca_file, VM_ENV)
        except credentials.CredentialsError as exc:
            raise VMError(str(exc)) from None
    if url:
        return Source(VM(url, write_url=write_url or os.environ.get(VM_WRITE_URL_ENV),
                         access=access))
    if write_url:
        raise VMError("--vm-write needs --vm (the URL reads go to)")
    if not lab_dir and os.environ.get(VM_URL_ENV):
        return Source(VM(os.environ[VM_URL_ENV],
                         write_url=os.environ.get(VM_WRITE_URL_ENV) or None, access=access))
    try:
        return lab_metrics(lab_dir)
    except VMError:
        root = lab_dir_from_env(lab_dir)
        raise VMError(f"no VictoriaMetrics to read: {HOW}. (No lab runs at {root} either:"
                      " `clusterscope lab up --monitoring` starts one.)") from None


def logs(url: str | None = None, lab_dir: str | Path | None = None,
         credentials_file: str | None = None, ca_file: str | None = None) -> VLogs:
    """The VictoriaLogs at `url` (the door's, or a VictoriaLogs), else the lab's (through
    its door); a VLogsError when there is none."""
    if url:
        try:
            access = credentials.access(credentials_file, ca_file, VM_ENV)
        except credentials.CredentialsError as exc:
            raise VLogsError(str(exc)) from None
        return VLogs(url, access=access)
    lab = Lab(lab_dir_from_env(lab_dir))
    found = _service_url(lab, VLOGS)
    if found is None:
        raise VLogsError(f"no VictoriaLogs in the lab {lab.root}; `clusterscope lab up"
                         " --monitoring`, or pass --logs-url https://HOST:8427 (the door)")
    door = _lab_door(lab)
    return VLogs(door[0], access=door[1]) if door else VLogs(found, access=NONE)


def logs_for(src: Source, url: str | None = None, credentials_file: str | None = None,
             ca_file: str | None = None) -> VLogs:
    """The VictoriaLogs that goes with `src` (a command reading both): `url`, else
    $CLUSTERSCOPE_LOGS_URL (with the --vm credentials: the door serves both), else the
    VictoriaLogs of the lab whose VictoriaMetrics `src` is; a VLogsError when none goes
    with it."""
    if url or os.environ.get(VLOGS_URL_ENV):
        return logs(url or os.environ[VLOGS_URL_ENV], credentials_file=credentials_file,
                    ca_file=ca_file)
    found = src.logs()
    if found is None:
        raise VLogsError(f"no VictoriaLogs to read with {src.vm.url}: pass --logs-url"
                         f" https://HOST:8427 (the door) or set {VLOGS_URL_ENV}")
    return found
