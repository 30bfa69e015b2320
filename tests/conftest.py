"""Shared test bed: the lanes, and one lab per test session driven through the real CLI.

Lanes (tests/lanes.py): every test is `unit`, `tools` or `lab`, by its marker or by the
fixtures it uses; plain `pytest` runs the unit lane, `make test` all three. Naming a test
file or node on the command line runs what it names in every lane, unless `-m` is given.

Parts come up lazily (`lab.ensure("galera")`) the first time a test needs them and stay up
for the rest of the session; everything goes down once at the end. The lab uses its own
port range (CLUSTERSCOPE_TEST_PORT_BASE, default 23300) and directory, so a developer's
`make demo` lab on the default ports is never touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from labhandle import LabHandle
from lanes import (
    ENV_BIN,
    ENV_LANE,
    GO_TOOLS,
    LANES,
    ON_PATH,
    SITE,
    LaneError,
    classify,
    encode,
    known,
    program,
    starts,
    verdict,
)
from workers import worker_ports

REPO = Path(__file__).resolve().parents[1]

# Property-based tests (Hypothesis): the same examples every run (derandomize: the seed comes
# from each test), a bounded number of them, nothing written to a .hypothesis/ database.
# HYPOTHESIS_PROFILE=deep explores more when hunting.
settings.register_profile("clusterscope", derandomize=True, max_examples=60, deadline=None,
                          database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", parent=settings.get_profile("clusterscope"),
                          max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "clusterscope"))
ARTIFACTS = REPO / "test-artifacts"


# -- lanes -------------------------------------------------------------------------------------
# fixtures that put a test in the lab lane (a fixture that starts a tool says so with
# lanes.starts, and puts its tests in the tools lane)
LAB_FIXTURES = frozenset({"lab", "ndb_lab", "galera_lab", "monitoring_lab", "lab_scenario"})
# what a lab test needs at least, checked before it runs (the lab brings up the rest)
LAB_TOOLS = ("mariadb", "victoria-metrics")
LANE = pytest.StashKey[tuple[str, frozenset[str]]]()
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")
# the lane in force, why it was broken, the fixtures being set up, and what each fixture
# started when it was set up (so a test that uses it later needs the same lane)
_GUARD: dict = {"lane": "lab", "allowed": frozenset(), "why": [], "bin": None, "fixtures": []}
FIXTURE_STARTED: dict[tuple[str, str], set[str]] = {}  # (where defined, name) -> tools


def _audit(event: str, args: tuple) -> None:
    exe = program(event, args)
    if exe is None:
        return
    if _GUARD["fixtures"]:
        FIXTURE_STARTED.setdefault(_GUARD["fixtures"][-1], set()).add(
            classify(exe, _GUARD["bin"]) or os.path.basename(exe))
    why = verdict(_GUARD["lane"], _GUARD["allowed"], exe, _GUARD["bin"])
    if why:
        _GUARD["why"].append(why)
        raise LaneError(why)


sys.addaudithook(_audit)


def pytest_configure(config: pytest.Config) -> None:
    """pyproject's addopts select the unit lane; a command line that names test files or
    nodes (and no -m) runs what it names, whatever its lane."""
    worker_ports()
    args = config.invocation_params.args
    if not any(a == "-m" or a.startswith("-m") for a in args) and any(
            ".py" in a for a in config.args):
        config.option.markexpr = ""
    from clusterscope.gotools import BIN_DIR
    _GUARD["bin"] = os.path.abspath(BIN_DIR)


def _lane(item: pytest.Item) -> tuple[str, frozenset[str], list[str]]:
    """(lane, tools it may start, problems) from its markers and fixtures."""
    problems = []
    marked = {m.name for m in item.iter_markers() if m.name in LANES}
    named = [a for m in item.iter_markers("tools") for a in m.args]
    if item.get_closest_marker("tools") is not None and not named:
        problems.append("@pytest.mark.tools needs the tools it starts, by name")
    problems += [f"unknown tool {t!r} (tests/lanes.py knows {sorted([*ON_PATH, *GO_TOOLS])})"
                 for t in named if not known(t)]
    fixtures = set(item.fixturenames)
    defs = item._fixtureinfo.name2fixturedefs  # type: ignore[attr-defined]
    declared = {name: getattr(defs[name][-1].func, "lane_tools", ())
                for name in fixtures if defs.get(name)}
    tool_fixtures = sorted(name for name, tools in declared.items() if tools)
    from_fixtures = [t for f in tool_fixtures for t in declared[f]]
    problems += [f"fixture {f!r} starts unknown tool {t!r}" for f in tool_fixtures
                 for t in declared[f] if not known(t)]
    if len(marked) > 1:
        problems.append(f"more than one lane marker: {sorted(marked)}")
    lab_fixtures = fixtures & LAB_FIXTURES
    if lab_fixtures:
        if marked - {"lab"}:
            problems.append(f"uses {sorted(lab_fixtures)}, so it is a lab test, not"
                            f" {sorted(marked - {'lab'})}")
        lane = "lab"
    elif "lab" in marked:
        lane = "lab"
    elif "tools" in marked or from_fixtures:
        if "unit" in marked:
            problems.append(f"uses {tool_fixtures}, which start tools: not a unit test")
        lane = "tools"
    else:
        lane = "unit"
    return lane, frozenset(named) | frozenset(from_fixtures), problems


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test gets exactly one lane (a usage error otherwise, so a new test cannot land
    in the wrong one). `shapes` tests run first: they bring up labs of their own before the
    shared one exists. `demo` tests run after the other lab tests: they replay the whole
    scenario in the lab the others left up. The tools and unit lanes come last."""
    problems = []
    for item in items:
        lane, allowed, why = _lane(item)
        problems += [f"{item.nodeid}: {w}" for w in why]
        item.stash[LANE] = (lane, allowed)
        if item.get_closest_marker(lane) is None:
            item.add_marker(lane)
    if problems:
        raise pytest.UsageError("tests outside their lane (tests/lanes.py):\n  "
                                + "\n  ".join(problems))

    def order(item: pytest.Item) -> int:
        if item.get_closest_marker("shapes") is not None:
            return 0
        if item.get_closest_marker("demo") is not None:
            return 2
        return {"lab": 1, "tools": 3}.get(item.stash[LANE][0], 4)
    # Lab files before the tools and unit lanes: under `make test`'s two workers the many
    # short files then fill the time one worker spends on the last long lab file.
    items.sort(key=order)


def _missing(tool: str) -> str | None:
    """Why `tool` cannot run here, or None."""
    path = f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin"
    if tool in GO_TOOLS:
        from clusterscope.gotools import TOOLS
        if TOOLS[tool].path.exists() or shutil.which(tool, path=path):
            return None
        return f"{tool} {TOOLS[tool].version} is not built (make tools)"
    if any(shutil.which(exe, path=path) for exe in ON_PATH[tool].executables):
        return None
    return f"{tool} is not installed ({ON_PATH[tool].installs})"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    lane, allowed = item.stash.get(LANE, ("unit", frozenset()))
    needs = sorted(allowed) if lane == "tools" else list(LAB_TOOLS) if lane == "lab" else []
    missing = [why for why in map(_missing, needs) if why]
    if missing:
        if IN_CI:
            pytest.fail("CI must have every tool: " + "; ".join(missing), pytrace=False)
        pytest.skip("; ".join(missing))
    _GUARD.update(lane=lane, allowed=allowed, why=[])
    if lane == "tools":
        os.environ[ENV_LANE] = encode(lane, allowed)
        os.environ[ENV_BIN] = _GUARD["bin"]
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [str(SITE), *filter(None, [os.environ.get("PYTHONPATH")])])


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest):
    _GUARD["fixtures"].append((fixturedef.baseid, fixturedef.argname))
    try:
        return (yield)
    finally:
        _GUARD["fixtures"].pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    lane, allowed = item.stash.get(LANE, ("unit", frozenset()))
    if lane != "lab":
        # a module or session fixture another test set up: its processes count here too
        defs = item._fixtureinfo.name2fixturedefs  # type: ignore[attr-defined]
        for name in item.fixturenames:
            fd = defs.get(name, [None])[-1]
            started = FIXTURE_STARTED.get((fd.baseid, name), set()) if fd else set()
            if lane == "tools":
                started = {t for t in started if known(t)} - allowed
            if started:
                pytest.fail(f"fixture {name!r} started {sorted(started)}, so this test"
                            f" belongs in the tools lane with them named (tests/lanes.py)",
                            pytrace=False)
    result = yield
    if _GUARD["why"]:  # started a tool and swallowed the error: still out of its lane
        pytest.fail("; ".join(_GUARD["why"]), pytrace=False)
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    _GUARD.update(lane="lab", allowed=frozenset(), why=[])
    os.environ.pop(ENV_LANE, None)
    if os.environ.get("PYTHONPATH", "").startswith(str(SITE)):
        rest = os.environ["PYTHONPATH"][len(str(SITE)):].lstrip(os.pathsep)
        if rest:
            os.environ["PYTHONPATH"] = rest
        else:
            del os.environ["PYTHONPATH"]


@pytest.fixture(scope="session")
def lab() -> Iterator[LabHandle]:
    keep = os.environ.get("CLUSTERSCOPE_TEST_LAB_DIR")
    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="cs-lab-"))
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)  # the servers run as `mysql` and must reach their directories
    handle = LabHandle(root, int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300")))
    try:
        yield handle
    finally:
        handle.cli("lab", "down", check=False, timeout=600)
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def ndb_lab(lab: LabHandle) -> LabHandle:
    return lab.ensure("ndb")


@pytest.fixture(scope="session")
def galera_lab(lab: LabHandle) -> LabHandle:
    return lab.ensure("galera")


@pytest.fixture(scope="session")
def monitoring_lab(lab: LabHandle) -> LabHandle:
    return lab.ensure("monitoring")


@pytest.fixture(scope="session")
@starts("victoria-metrics")
def scratch_vm(tmp_path_factory: pytest.TempPathFactory):
    """A real, empty VictoriaMetrics for tests that write series with known values."""
    from clusterscope import gotools
    from clusterscope.clients.vm import VM
    from clusterscope.lab.core import Lab

    root = tmp_path_factory.mktemp("scratch-vm")
    lab = Lab(root / "lab", int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300")))
    port = lab.port("scratch-vm")
    # the release compose pins, as the lab runs it
    binary = str(gotools.build(gotools.TOOLS["victoria-metrics"]))
    lab.spawn("scratch-vm", "test", "VictoriaMetrics for known-value tests",
              [binary, f"-storageDataPath={root / 'data'}",
               f"-httpListenAddr=127.0.0.1:{port}", "-search.latencyOffset=0s",
               "-retentionPeriod=100y", "-search.disableCache"], port=port)
    try:
        yield VM(f"http://127.0.0.1:{port}")
    finally:
        lab.stop("scratch-vm")


@pytest.fixture(scope="session")
@starts("mariadb")
def scratch_sql() -> Iterator:
    """A real MariaDB holding ndbinfo tables for the exporter's tests, one per session
    (tests/ndbinfo_scratch.py)."""
    from ndbinfo_scratch import serve

    with serve() as server:
        yield server


@pytest.fixture
def sql_cur(scratch_sql) -> Iterator:
    """A root cursor on it, the baseline rows in place (each test starts from them)."""
    from ndbinfo_scratch import baseline

    conn = scratch_sql.root()
    cur = conn.cursor()
    baseline(cur)
    yield cur
    conn.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def lab_scenario(lab: LabHandle) -> dict:
    """One lab scenario that exercises what the dashboards and alerts show, run once.

    With every part up (ndb, galera, monitoring): a loadgen run on Galera (read_backup, 3 s
    windows), a configuration change on each cluster and back, two simulated NDB 7.6
    restarts of node 2 (x120, x30), a Galera SIGKILL of node 3 under that load and its
    restart (IST), then a wait until the loadgen has valid pairs and the recorded baselines
    exist. Returns `start`/`end` (epoch seconds around the
    scenario) and the `steps` that ran.
    """
    import time

    from clusterscope.lab.endpoints import lab_metrics

    lab.ensure("ndb", "galera", "monitoring")
    steps: list[str] = []
    start = time.time() - 60  # include the minute the lab ran before the scenario
    vm = lab_metrics(lab.root).vm
    # Long enough to outlive the restarts and the Galera kill below; stopped at the end.
    lab.cli("loadgen", "start", "--experiment", "read_backup", "--window", "3",
            "--duration", "240")
    steps.append("loadgen read_backup")
    lab.cli("lab", "ndb", "fault", "clear")  # whatever an earlier test left behind
    # a configuration change on each cluster (and back): every dashboard marks changes
    sock = lab.root / "galera" / "node1" / "mysqld.sock"
    conns = subprocess.run(["mysql", "-uroot", "-S", str(sock), "-N", "-e",
                            "SELECT @@GLOBAL.max_connections"], capture_output=True,
                           text=True, check=True).stdout.strip()
    for value in (int(conns) + 1, int(conns)):
        subprocess.run(["mysql", "-uroot", "-S", str(sock), "-e",
                        f"SET GLOBAL max_connections = {value}"], check=True)
        lab.cli("lab", "ndb", "set-config", "MaxNoOfConcurrentTransactions",
                "4097" if value > int(conns) else "4096", "--now")
        time.sleep(6)  # past the detector's 5 s poll: two readings, two changes
    steps.append("configuration changes on lab-galera and lab-ndb")
    # The restart baseline (median of earlier restarts) needs two. At x120 a restart lasts
    # ~3.5 s, which 5 s scrapes may miss; x15 (~28 s, five scrapes) is seen in progress
    # even when a loaded machine delays a scrape or two.
    for scale in ("120", "15"):
        lab.cli("lab", "ndb", "restart-node", "2", "--profile", "7.6", "--time-scale",
                scale, "--wait", timeout=300)
    steps.append("ndb restart-node 2 x2")
    lab.cli("lab", "galera", "kill-node", "3")
    # let the scrapes see the reduced cluster before it heals
    vm.wait_for('min(mysql_global_status_wsrep_cluster_size{cluster="lab-galera"}) < 3',
                timeout=60)
    lab.cli("lab", "galera", "start-node", "3", timeout=300)
    steps.append("galera kill-node 3 / start-node 3")
    vm.wait_for("experiment_variant:loadgen_overhead_ratio:lower", timeout=180)
    vm.wait_for("loadgen_overhead_min_detectable_ratio", timeout=60)
    # several samples, so 15 s range steps see the estimates and not one point
    vm.wait_for("count_over_time(experiment_variant:loadgen_overhead_ratio:lower[2m]) >= 4",
                timeout=60)
    steps.append("loadgen pairs")
    vm.wait_for("cluster_node:ndb_restart_total_seconds:baseline_median", timeout=120)
    vm.wait_for('galera_recoveries_total{node="node3"}', timeout=60)
    # its series stay in VictoriaMetrics; the load and the service must not outlive us
    lab.cli("loadgen", "stop", "--experiment", "read_backup")
    return {"start": start, "end": time.time(), "steps": steps}


@pytest.fixture
def vol():
    """A directory a container's user can reach (pytest's tmp_path is root's 0700): the
    stand-in for a named volume or a host log directory (tests/test_compose_contract.py)."""
    d = Path(tempfile.mkdtemp(prefix="cs-contract-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def secrets_dir(tmp_path_factory) -> Path:
    """Secret files as the README tells users to create them (0700 directory, 0644 files;
    tests/test_compose_contract.py shows why)."""
    d = tmp_path_factory.mktemp("secrets")
    d.chmod(0o700)
    from test_compose import SECRETS

    for name in SECRETS:
        (d / name).write_text("placeholder\n")
        (d / name).chmod(0o644)
    return d
