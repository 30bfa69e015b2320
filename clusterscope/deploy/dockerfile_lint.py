"""`clusterscope deploy lint-dockerfiles [FILE...]`: lint the repository's Dockerfiles.

Parsed by BuildKit's own Dockerfile parser (the `dockerfile` package wraps it), so a file
Docker would reject fails here too. Then the rules the images promise: every base image
pinned, the final stage runs as a non-root user, no compilers or -dev packages left in the
final stage, apt lists cleaned in the same layer, no secrets in ENV/ARG, a HEALTHCHECK, and
Python packages only from hashed pins (`pip install --require-hashes`, or `--no-deps` for
this repository's own distributions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from clusterscope.paths import REPO

DOCKERFILES = [REPO / "exporters" / "Dockerfile", REPO / "loadgen" / "Dockerfile",
               REPO / "compose" / "otelcol" / "Dockerfile",
               REPO / "compose" / "victoria-logs" / "Dockerfile",
               *(REPO / "compose" / name / "Dockerfile"
                 for name in ("victoria-metrics", "vmstorage", "vmagent"))]
BUILD_TOOLS = re.compile(r"(^|\s)(gcc|g\+\+|clang|make|build-essential|cmake|[\w.+-]+-dev)(=\S+)?"
                         r"(\s|$)")
SECRET_NAME = re.compile(r"PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY", re.I)


@dataclass
class Problem:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def _pinned(image: str) -> bool:
    if "@sha256:" in image or image == "scratch":  # scratch is no image: nothing to pin
        return True
    name, _, tag = image.rpartition(":")
    return bool(name) and "/" not in tag and tag not in ("", "latest")


def lint(path: Path) -> list[Problem]:
    # imported here: `dockerfile` is a dev extra, and the CLI imports this module on every
    # start (`clusterscope deploy`), also where only `compare` or `report` is wanted
    try:
        import dockerfile
    except ImportError:
        return [Problem(path, 0, "the Dockerfile parser is a dev extra: pip install"
                                 " 'clusterscope[dev]' (or `make venv`)")]
    try:
        cmds = dockerfile.parse_file(str(path))
    except dockerfile.GoParseError as exc:
        return [Problem(path, 0, f"does not parse: {exc}")]
    problems: list[Problem] = []
    stages: list[str] = []
    final: list[dockerfile.Command] = []
    for c in cmds:
        if c.cmd == "FROM":
            image = c.value[0]
            if image.lower() not in stages and not _pinned(image):
                problems.append(Problem(path, c.start_line, f"base image {image} not pinned"))
            if len(c.value) >= 3 and c.value[1].upper() == "AS":
                stages.append(c.value[2].lower())
            final = []
        final.append(c)
    if not final:
        return [Problem(path, 0, "no FROM")]
    users = [c for c in final if c.cmd == "USER"]
    if not users or users[-1].value[0].split(":")[0] in ("root", "0"):
        problems.append(Problem(path, final[0].start_line, "final stage runs as root"))
    if not any(c.cmd == "HEALTHCHECK" for c in final):
        problems.append(Problem(path, final[0].start_line, "final stage has no HEALTHCHECK"))
    for c in final:
        text = " ".join(c.value)
        if c.cmd == "RUN" and "apt-get install" in text:
            installed = text.split("apt-get install", 1)[1].split("&&")[0]
            if BUILD_TOOLS.search(installed):
                problems.append(Problem(path, c.start_line,
                                        "build tools installed in the final stage"))
            if "--no-install-recommends" not in installed:
                problems.append(Problem(path, c.start_line,
                                        "apt-get install without --no-install-recommends"))
            if "rm -rf /var/lib/apt/lists" not in text:
                problems.append(Problem(path, c.start_line,
                                        "apt lists not removed in the same layer"))
        if c.cmd in ("ENV", "ARG"):
            names = c.value[0::2] if c.cmd == "ENV" else [v.split("=")[0] for v in c.value]
            for name in names:
                if SECRET_NAME.search(name):
                    problems.append(Problem(path, c.start_line,
                                            f"{c.cmd} {name}: secrets belong in Compose secrets"))
        if c.cmd == "ADD" and any(v.startswith(("http://", "https://")) for v in c.value):
            problems.append(Problem(path, c.start_line, "ADD from a URL (unpinned download)"))
    # in any stage: every pip install takes hashed pins, or installs nothing it would fetch
    for c in cmds:
        if c.cmd == "RUN":
            for part in " ".join(c.value).split("pip install")[1:]:
                step = part.split("&&")[0]
                if "--require-hashes" not in step and "--no-deps" not in step:
                    problems.append(Problem(path, c.start_line,
                                            "pip install without --require-hashes"))
    return problems


