"""The import contracts in pyproject.toml ([tool.importlinter]) hold, and would catch a
new upward import or circle: `make lint` runs the same `lint-imports`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.tools("python")

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
# where each root package of the contracts lives in the checkout
PACKAGES = {"clusterscope": REPO, "ndbinfo_exporter": REPO / "exporters",
            "galera_tracker": REPO / "exporters", "clusterscope_inventory": REPO / "exporters",
            "clusterscope_logs": REPO / "exporters", "clusterscope_changes": REPO / "exporters",
            "clusterscope_loadgen": REPO / "loadgen"}


def _lint(root: Path) -> subprocess.CompletedProcess:
    """lint-imports on the packages under `root` (a checkout or a copy of one)."""
    paths = sorted({str(root / p.relative_to(REPO)) for p in PACKAGES.values()})
    return subprocess.run([str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"),
                           "--no-cache"], cwd=root, capture_output=True, text=True,
                          env={"PYTHONPATH": ":".join(paths), "PATH": "/usr/bin:/bin"},
                          timeout=120)


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("house")
    shutil.copy(REPO / "pyproject.toml", root)
    for name, base in PACKAGES.items():
        dest = root / base.relative_to(REPO) / name
        shutil.copytree(base / name, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _append(path: Path, line: str) -> str:
    text = path.read_text()
    path.write_text(text + f"\n{line}\n")
    return text


def test_the_checkout_keeps_every_contract() -> None:
    proc = _lint(REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_an_upward_import_breaks_the_layers(copy: Path) -> None:
    target = copy / "clusterscope" / "lab" / "ports.py"
    old = _append(target, "import clusterscope.commands.lab_command  # noqa")
    try:
        proc = _lint(copy)
    finally:
        target.write_text(old)
    assert proc.returncode != 0
    assert "clusterscope.lab is not allowed to import clusterscope.commands" in proc.stdout


def test_a_circle_inside_a_package_is_caught(copy: Path) -> None:
    # the simulator's model renders nothing; importing its renderer closes a circle
    target = copy / "clusterscope" / "ndbsim" / "model.py"
    old = _append(target, "from clusterscope.ndbsim import rows  # noqa")
    try:
        proc = _lint(copy)
    finally:
        target.write_text(old)
    assert proc.returncode != 0
    assert "No cycles are allowed in clusterscope.ndbsim" in proc.stdout


def test_a_product_importing_the_toolkit_is_caught(copy: Path) -> None:
    target = copy / "exporters" / "ndbinfo_exporter" / "scraper.py"
    old = _append(target, "import clusterscope.inference  # noqa")
    try:
        proc = _lint(copy)
    finally:
        target.write_text(old)
    assert proc.returncode != 0
    assert "ndbinfo_exporter.scraper -> clusterscope.inference" in proc.stdout
