"""The suite's lanes by cost, and the guard that keeps each test in its lane.

- `unit`: runs inside the pytest process, Python and the venv only, well under a second
  each. Plain `pytest` runs this lane (pyproject's addopts), as does `make test-fast`.
- `tools`: starts programs: promtool, MariaDB, chromium, a Go-built binary (VictoriaMetrics,
  vmalert, Alertmanager, VictoriaLogs, the collector, docker compose) or our own processes
  (`python`: an exporter, the inventory, the `clusterscope` CLI). It names them:
  `@pytest.mark.tools("promtool", "python")`. A fixture that starts one says so with
  `@starts(...)` (below), and every test that uses it is in this lane.
- `lab`: needs the shared lab or a lab of its own (minutes).

A test's lane is its marker; a test with no lane marker, no lab fixture and no tool fixture
is `unit`. The guard watches every process a test starts (a Python audit hook, installed
too in the Python processes a tools test starts, through tests/lanes_site/): a unit test
that starts any process, or a tools test that starts a tool it did not name, fails at once
and says which marker it needs; so does a test that uses a fixture which started one.
Outside CI a missing tool skips the tests that name it, saying what installs it; under CI
(`CI` set, as .ci/run sets it) they fail.

Stdlib only: the Python processes a test starts import this module too.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

LANES = ("unit", "tools", "lab")
ENV_LANE = "CLUSTERSCOPE_TEST_LANE"  # "tools:<name>,<name>" in the processes a test starts
ENV_BIN = "CLUSTERSCOPE_TEST_LANE_BIN"  # where the Go-built tools are cached
SITE = Path(__file__).resolve().parent / "lanes_site"


@dataclass(frozen=True)
class Tool:
    executables: tuple[str, ...]
    installs: str  # what to run (or install) to have it


# Programs found on PATH (make setup installs them). Go-built tools are named as in
# clusterscope/gotools.py and found in its cache directory (`make tools` builds them);
# Debian's victoria-metrics package puts some of the same names on PATH.
ON_PATH: dict[str, Tool] = {
    "python": Tool(("python", "python3", os.path.basename(sys.executable)), "the venv"),
    "promtool": Tool(("promtool",), "apt-get install prometheus (make setup)"),
    "mariadb": Tool(("mariadbd", "mysqld", "mariadb-install-db", "mysql_install_db",
                     "mariadb", "mysql", "mariadb-admin", "mysqladmin"),
                    "apt-get install mariadb-server mariadb-client (make setup)"),
    "openssl": Tool(("openssl",), "apt-get install openssl"),
    "chromium": Tool(("chromium",), "apt-get install chromium (make setup)"),
    "rsync": Tool(("rsync",), "apt-get install rsync (make setup)"),
    "sysbench": Tool(("sysbench",), "apt-get install sysbench (make setup)"),
    "prometheus": Tool(("prometheus",), "apt-get install prometheus (make setup)"),
    "unshare": Tool(("unshare",), "util-linux, and root"),
    "go": Tool(("go",), "Go (make setup)"),
}
GO_TOOLS = ("docker-compose", "amtool", "alertmanager", "mysqld_exporter", "victoria-metrics",
            "vmagent", "vmalert", "vmauth", "victoria-logs", "otelcol")
_BY_EXECUTABLE = {exe: name for name, tool in ON_PATH.items() for exe in tool.executables}


def starts(*tools: str):
    """Marks a fixture that starts these tools: every test that uses it is in the tools lane
    with them named (a lab test may use it too).

        @pytest.fixture(scope="module")
        @starts("mariadb")
        def scratch(): ...
    """
    def mark(fn):
        fn.lane_tools = tools
        return fn
    return mark


def known(name: str) -> bool:
    return name in ON_PATH or name in GO_TOOLS


def classify(executable: str, bin_dir: str | None) -> str | None:
    """The tool an executable is, or None for a program the lanes do not track (sh...)."""
    path = os.fsdecode(executable)
    base = os.path.basename(path)
    if bin_dir and os.path.dirname(os.path.abspath(path)) == bin_dir:
        # cached as <name>-<version>[-<digest>]
        return next((t for t in GO_TOOLS if base.startswith(t + "-v")), base)
    if base in GO_TOOLS:
        return base
    if base.startswith("python"):
        return "python"
    return _BY_EXECUTABLE.get(base)


class LaneError(RuntimeError):
    pass


def verdict(lane: str, allowed: frozenset[str], executable: str,
            bin_dir: str | None) -> str | None:
    """Why starting `executable` breaks the lane, or None."""
    if lane == "lab":
        return None
    tool = classify(executable, bin_dir)
    if lane == "unit":
        name = repr(tool) if tool else "'<tool>'"
        return (f"a unit test runs inside the pytest process, and this one started"
                f" {executable}: mark it @pytest.mark.tools({name}) (tests/lanes.py)")
    if tool is None or tool in allowed:
        return None
    return (f"this tools test started {tool} ({executable}) without naming it: add {tool!r}"
            f" to its @pytest.mark.tools(...) (tests/lanes.py)")


def encode(lane: str, allowed: frozenset[str]) -> str:
    return lane if lane != "tools" else "tools:" + ",".join(sorted(allowed))


def decode(value: str) -> tuple[str, frozenset[str]]:
    lane, _, names = value.partition(":")
    return lane, frozenset(n for n in names.split(",") if n)


def install_in_child() -> None:
    """sitecustomize's half: in a Python process a tools test started, refuse a tool the
    test did not name."""
    lane, allowed = decode(os.environ.get(ENV_LANE, "lab"))
    bin_dir = os.environ.get(ENV_BIN)

    def hook(event: str, args: tuple) -> None:
        exe = program(event, args)
        if exe is not None:
            why = verdict(lane, allowed, exe, bin_dir)
            if why:
                print(f"lanes: {why}", file=sys.stderr, flush=True)
                raise LaneError(why)

    sys.addaudithook(hook)


def program(event: str, event_args: tuple) -> str | None:
    """The program a process-starting audit event runs (for `sh -c "cmd ..."`, cmd's first
    word), or None for an event that starts none."""
    if event == "os.system":
        return _first(event_args[0])
    if event not in ("subprocess.Popen", "os.posix_spawn", "os.exec"):
        return None
    argv = list(event_args[1]) if isinstance(event_args[1], list | tuple) else []
    if len(argv) >= 3 and os.path.basename(os.fsdecode(argv[0])) in ("sh", "bash") \
            and argv[1] == "-c":
        return _first(argv[2])
    if event_args[0] is not None:
        return os.fsdecode(event_args[0])
    return _first(event_args[1])


def _first(argv: object) -> str:
    """The program of Popen's `args`: a list's first item, a shell string's first word."""
    if isinstance(argv, str | bytes):
        words = os.fsdecode(argv).split()
        return words[0] if words else ""
    if isinstance(argv, os.PathLike):
        return os.fsdecode(argv)
    try:
        return os.fsdecode(next(iter(argv)))  # type: ignore[call-overload]
    except (TypeError, StopIteration):
        return ""
