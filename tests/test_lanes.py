"""The lanes hold: a test that starts a program outside its lane fails and says which marker
it needs, a test marked for two lanes is refused at collection, and a tool that is missing
skips its tests outside CI but fails them under CI (tests/lanes.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import REPO
from lanes import classify, program, verdict

BIN = "/root/.cache/clusterscope/bin"


def test_a_unit_test_may_start_no_process_at_all() -> None:
    for exe in ("/usr/bin/promtool", sys.executable, "/usr/bin/sh"):
        why = verdict("unit", frozenset(), exe, BIN)
        assert why and "@pytest.mark.tools(" in why, exe
    assert "tools('promtool')" in verdict("unit", frozenset(), "/usr/bin/promtool", BIN)


def test_a_tools_test_starts_only_the_tools_it_names() -> None:
    assert verdict("tools", frozenset({"promtool"}), "/usr/bin/promtool", BIN) is None
    assert "'mariadb'" in verdict("tools", frozenset({"promtool"}), "/usr/sbin/mariadbd", BIN)
    # programs the lanes do not track (a shell, mount) need no name
    assert verdict("tools", frozenset(), "/bin/sh", BIN) is None
    assert verdict("lab", frozenset(), "/usr/sbin/mariadbd", BIN) is None


def test_programs_are_known_by_name_and_go_builds_by_their_cache() -> None:
    assert classify(f"{BIN}/vmalert-v1.151.0", BIN) == "vmalert"
    assert classify(f"{BIN}/otelcol-v0.165.0-064a33c0015b", BIN) == "otelcol"
    assert classify("/usr/bin/victoria-metrics", BIN) == "victoria-metrics"
    assert classify(sys.executable, BIN) == "python"
    assert classify("mariadb-install-db", BIN) == "mariadb"
    assert classify("/bin/sh", BIN) is None
    # the program a shell runs is the one that counts
    assert program("subprocess.Popen", ("/bin/sh", ["/bin/sh", "-c", "promtool check"],
                                        None, None)) == "promtool"
    assert program("os.system", (b"rsync -a a b",)) == "rsync"
    assert program("open", ("/etc/passwd", "r", 0)) is None


def _run(tmp_path: Path, body: str, *args: str, env: dict | None = None
         ) -> subprocess.CompletedProcess:
    """pytest on one test file, with this suite's conftest as its plugin."""
    (tmp_path / "test_probe.py").write_text(textwrap.dedent(body))
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n  unit\n  tools\n  lab\n")
    run_env = dict(env or os.environ)
    run_env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"),
                                             run_env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-q",
                           "-p", "no:cacheprovider", str(tmp_path / "test_probe.py"), *args],
                          cwd=tmp_path, env=run_env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.tools("python")
def test_an_unmarked_test_that_starts_a_tool_fails_naming_the_marker(tmp_path: Path) -> None:
    proc = _run(tmp_path, """
        import subprocess, sys

        def test_sneaks_a_process():
            subprocess.run([sys.executable, "-c", "pass"])
    """)
    assert proc.returncode == 1, proc.stdout
    assert "a unit test runs inside the pytest process" in proc.stdout
    assert "@pytest.mark.tools('python')" in proc.stdout


@pytest.mark.tools("python")
def test_a_python_process_a_tools_test_starts_is_guarded_too(tmp_path: Path) -> None:
    proc = _run(tmp_path, """
        import subprocess, sys
        import pytest

        @pytest.mark.tools("python")
        def test_child_starts_promtool():
            code = "import subprocess; subprocess.run(['promtool', '--version'])"
            out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                 text=True)
            assert "without naming it" in out.stderr, out.stderr
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.tools("python")
def test_two_lane_markers_are_refused_at_collection(tmp_path: Path) -> None:
    proc = _run(tmp_path, """
        import pytest

        @pytest.mark.unit
        @pytest.mark.tools("promtool")
        def test_both():
            pass
    """)
    assert proc.returncode != 0
    assert "more than one lane marker" in proc.stdout + proc.stderr


@pytest.mark.tools("python")
def test_a_missing_tool_skips_outside_ci_and_fails_under_ci(tmp_path: Path) -> None:
    body = """
        import pytest

        @pytest.mark.tools("chromium")
        def test_needs_chromium():
            pass
    """
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = "/nonexistent"  # no tool on PATH
    proc = _run(tmp_path, body, "-rs", env=env)
    assert proc.returncode == 0 and "chromium is not installed" in proc.stdout, proc.stdout
    proc = _run(tmp_path, body, env={**env, "CI": "1"})
    assert proc.returncode == 1 and "CI must have every tool" in proc.stdout, proc.stdout
