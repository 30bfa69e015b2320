"""The lab directory, its service registry and the processes it owns.

Everything the lab starts is recorded in `<lab>/state.json` with its pid and the pid's
start time, so `down` ends exactly those processes (never a reused pid) and nothing else.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from clusterscope.lab import ports

DEFAULT_LAB_DIR = Path(".lab")


class LabError(RuntimeError):
    """A lab operation failed; the message says what and what to do."""


@dataclass
class Service:
    name: str
    part: str
    what: str
    host: str
    port: int | None
    pid: int | None
    log: str
    client_config: str | None = None
    simulated: bool = False
    start_time: int | None = None  # /proc/<pid>/stat field 22, guards against pid reuse
    extra: dict = field(default_factory=dict)


def lab_dir_from_env(explicit: str | os.PathLike | None = None) -> Path:
    raw = explicit or os.environ.get("CLUSTERSCOPE_LAB_DIR") or DEFAULT_LAB_DIR
    return Path(raw).resolve()


def _proc_start_time(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name may contain spaces; fields after the closing parenthesis are fixed.
    rest = stat.rsplit(")", 1)[1].split()
    if rest[0] == "Z":  # a zombie has already exited
        return None
    return int(rest[19])


def pid_alive(pid: int | None, start_time: int | None = None) -> bool:
    if not pid:
        return False
    st = _proc_start_time(pid)
    if st is None:
        return False
    return start_time is None or st == start_time


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def wait_for_port(port: int, timeout: float, host: str = "127.0.0.1",
                  alive: Callable[[], bool] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            if s.connect_ex((host, port)) == 0:
                return
        if alive is not None and not alive():
            raise LabError(f"the process meant to listen on {host}:{port} exited")
        time.sleep(0.2)
    raise LabError(f"nothing listens on {host}:{port} after {timeout:.0f} s")


def http_ok(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def wait_http(url: str, timeout: float, alive: Callable[[], bool] | None = None,
              interval: float = 0.3) -> None:
    """Until `url` answers 200; a process that exits meanwhile is an error at once."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if http_ok(url):
            return
        if alive is not None and not alive():
            raise LabError(f"the process meant to serve {url} exited")
        time.sleep(interval)
    raise LabError(f"{url} not ready after {timeout:.0f} s")


def open_lab(args: object = None) -> Lab:
    """The lab a command works on: `--lab-dir`/`--port-base` if given, else the environment."""
    return Lab(lab_dir_from_env(getattr(args, "lab_dir", None)), getattr(args, "port_base", None))


class Lab:
    def __init__(self, root: Path, port_base: int | None = None) -> None:
        self.root = root
        self.state_file = root / "state.json"
        state = self._read()
        env_base = os.environ.get("CLUSTERSCOPE_PORT_BASE")
        self.port_base: int = (port_base or state.get("port_base")
                               or (int(env_base) if env_base else ports.DEFAULT_PORT_BASE))

    # -- state -------------------------------------------------------------------------
    def _read(self) -> dict:
        try:
            return json.loads(self.state_file.read_text())
        except FileNotFoundError:
            return {}
        except json.JSONDecodeError as exc:
            raise LabError(f"{self.state_file} is corrupt ({exc}); run `lab down` and remove"
                           " it") from exc

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self._read()
            state.setdefault("services", [])
            state["port_base"] = self.port_base
            yield state
            tmp = self.state_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(state, indent=2))
            tmp.replace(self.state_file)

    def services(self, part: str | None = None) -> list[Service]:
        out = [Service(**s) for s in self._read().get("services", [])]
        return [s for s in out if part is None or s.part == part]

    def service(self, name: str) -> Service | None:
        return next((s for s in self.services() if s.name == name), None)

    def running(self, name: str) -> bool:
        s = self.service(name)
        return s is not None and pid_alive(s.pid, s.start_time)

    def parts_up(self) -> list[str]:
        return list(dict.fromkeys(s.part for s in self.services()))

    def register(self, service: Service) -> Service:
        with self._locked() as state:
            state["services"] = [s for s in state["services"] if s["name"] != service.name]
            state["services"].append(asdict(service))
        return service

    def unregister(self, name: str) -> None:
        with self._locked() as state:
            state["services"] = [s for s in state["services"] if s["name"] != name]

    def settings(self, part: str) -> dict:
        """Per-part settings kept across commands (e.g. the scenario a simulator runs)."""
        return dict(self._read().get("settings", {}).get(part, {}))

    def save_settings(self, part: str, values: dict) -> None:
        with self._locked() as state:
            state.setdefault("settings", {}).setdefault(part, {}).update(values)

    # -- places ------------------------------------------------------------------------
    def port(self, name: str) -> int:
        return ports.port(self.port_base, name)

    def path(self, *parts: str, mkdir: bool = True) -> Path:
        p = self.root.joinpath(*parts)
        if mkdir:
            p.mkdir(parents=True, exist_ok=True)
        return p

    def log_path(self, name: str) -> Path:
        return self.path("logs") / f"{name}.log"

    def require_free(self, port: int, name: str) -> None:
        if port_in_use(port):
            raise LabError(f"port {port} (for {name}) is already in use on 127.0.0.1; stop what"
                           " holds it or move the lab with --port-base/CLUSTERSCOPE_PORT_BASE")

    # -- processes ---------------------------------------------------------------------
    def spawn(self, name: str, part: str, what: str, argv: list[str], *, port: int | None,
              log: Path | None = None, env: dict[str, str] | None = None,
              user: str | None = None, cwd: Path | None = None,
              client_config: Path | None = None, simulated: bool = False,
              ready_timeout: float = 60.0, extra: dict | None = None,
              wait_ready: Callable[[], None] | None = None) -> Service:
        """Start a daemon in its own session, wait until it serves, and record it.

        Idempotent: a service that is already running is returned as it is.
        """
        existing = self.service(name)
        if existing and pid_alive(existing.pid, existing.start_time):
            return existing
        if port is not None:
            self.require_free(port, name)
        log = log or self.log_path(name)
        log.parent.mkdir(parents=True, exist_ok=True)
        if user:
            chown(log.parent, user, recursive=False)
            log.touch()
            chown(log, user, recursive=False)
        full_env = dict(os.environ if env is None else env)
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                    env=full_env, cwd=cwd, user=user, start_new_session=True)
        service = Service(name=name, part=part, what=what, host="127.0.0.1", port=port,
                          pid=proc.pid, log=str(log),
                          client_config=str(client_config) if client_config else None,
                          simulated=simulated, start_time=_proc_start_time(proc.pid),
                          extra=extra or {})
        self.register(service)
        try:
            if wait_ready is not None:
                wait_ready()
            elif port is not None:
                wait_for_port(port, ready_timeout, alive=lambda: proc.poll() is None)
        except LabError as exc:
            self.stop(name)
            tail = _tail(log)
            raise LabError(f"{name} did not start: {exc}\n--- last lines of {log} ---\n{tail}"
                           ) from exc
        return service

    def stop(self, name: str, timeout: float = 60.0) -> None:
        """End a service's process group (SIGTERM, then SIGKILL) and forget it."""
        s = self.service(name)
        if s is None:
            return
        if pid_alive(s.pid, s.start_time):
            terminate(s.pid, s.start_time, timeout)
        if s.port is not None:
            _wait_port_released(s.port, 10.0)
        self.unregister(name)


def terminate(pid: int, start_time: int | None, timeout: float = 60.0) -> None:
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not pid_alive(pid, start_time):
                return
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.1)
    raise LabError(f"process {pid} did not exit after SIGKILL")


def _wait_port_released(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while port_in_use(port) and time.monotonic() < deadline:
        time.sleep(0.2)


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def chown(path: Path, user: str, recursive: bool = True) -> None:
    pw = pwd.getpwnam(user)
    targets = [path, *path.rglob("*")] if recursive and path.is_dir() else [path]
    for p in targets:
        os.chown(p, pw.pw_uid, pw.pw_gid, follow_symlinks=False)
