"""The images' Python dependencies come from a lock with hashes: every dependency the
exporters and the loadgen declare, and everything those need, is pinned there to a version
the declaration accepts, each with its hashes, and both Dockerfiles install from it with
--require-hashes (the Dockerfile lint refuses a pip install that does not)."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from clusterscope.deploy import dockerfile_lint

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "exporters" / "requirements.lock"
OURS = {"clusterscope-exporters", "clusterscope-loadgen"}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes)."""
    out: dict[str, tuple[str, list[str]]] = {}
    text = LOCK.read_text().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        spec, *opts = line.split()
        name, _, version = spec.partition("==")
        assert version, f"{spec}: not pinned with =="
        out[norm(name)] = (version, [o.split("=", 1)[1] for o in opts])
    return out


@pytest.mark.parametrize("product", ["exporters", "loadgen"])
def test_every_declared_dependency_is_pinned_with_hashes(product: str) -> None:
    lock = locked()
    declared = tomllib.loads((REPO / product / "pyproject.toml").read_text())
    for dep in declared["project"]["dependencies"]:
        req = Requirement(dep)
        if norm(req.name) in OURS:
            continue
        assert norm(req.name) in lock, f"{req.name} is not in {LOCK.name}"
        version, hashes = lock[norm(req.name)]
        assert req.specifier.contains(version), (req, version)
        assert hashes and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), req


def test_what_the_pins_need_is_pinned_too() -> None:
    """The locked packages' own requirements (as the installed ones declare them, markers
    evaluated for Linux) are in the lock: --require-hashes refuses anything else."""
    lock = locked()
    for name in lock:
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for r in map(Requirement, requires):
            if r.marker is None or r.marker.evaluate({"extra": "", "sys_platform": "linux",
                                                       "platform_python_implementation":
                                                           "CPython"}):
                assert norm(r.name) in lock, f"{name} needs {r.name}"


def test_the_images_install_from_the_lock() -> None:
    for dockerfile in (REPO / "exporters" / "Dockerfile", REPO / "loadgen" / "Dockerfile"):
        text = dockerfile.read_text()
        assert "--require-hashes" in text and "-r /src/exporters/requirements.lock" in text
        assert dockerfile_lint.lint(dockerfile) == []
    bad = REPO / "loadgen" / "Dockerfile"
    broken = bad.read_text().replace("--require-hashes", "")
    tmp = Path(__import__("tempfile").mkdtemp()) / "Dockerfile"
    tmp.write_text(broken)
    assert any("without --require-hashes" in p.message for p in dockerfile_lint.lint(tmp))
