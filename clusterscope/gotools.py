"""Go-built tools the lab and the tests need, built from the Go module proxy and cached.

The lab runs the versions compose/ pins (VictoriaMetrics, vmagent, vmalert, vmauth,
Alertmanager, VictoriaLogs, the OpenTelemetry Collector), so the configs, rules and
dashboards are proven on what users deploy. docker compose cannot be `go install`ed
(replace/exclude directives), so every module's source is downloaded, copied somewhere
writable and built there. The collector is this repository's own distribution
(compose/otelcol/: a main package listing the components the log shipper uses, every module
pinned in its go.mod/go.sum), built from that directory; compose builds
compose/otelcol/Dockerfile from the same files.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CACHE_DIR = Path(os.environ.get("CLUSTERSCOPE_CACHE", Path.home() / ".cache" / "clusterscope"))
BIN_DIR = CACHE_DIR / "bin"


@dataclass(frozen=True)
class GoTool:
    name: str
    module: str
    version: str
    package: str  # the main package inside the module
    # -X flags, {version} filled in: the version string the binary reports (as the
    # upstream release build sets it)
    ldflags: str = ""
    # built from this repository's directory (its go.mod pins every module) rather than
    # from a downloaded module; the cached binary's name carries a digest of the sources
    source_dir: Path | None = None

    @property
    def path(self) -> Path:
        if self.source_dir is not None:
            return BIN_DIR / f"{self.name}-{self.version}-{source_digest(self.source_dir)}"
        return BIN_DIR / f"{self.name}-{self.version}"


def source_digest(directory: Path) -> str:
    """What a build from `directory` depends on: go.mod, go.sum and the Go files."""
    h = hashlib.sha256()
    for p in sorted([directory / "go.mod", directory / "go.sum",
                     *directory.glob("*.go")]):
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]


REPO_DIR = Path(__file__).resolve().parents[1]
VM_MODULE = "github.com/VictoriaMetrics/VictoriaMetrics"
VM_VERSION = "v1.151.0"
ALERTMANAGER_VERSION = "v0.28.1"
# The log store (Apache-2.0). Its main package is app/victoria-logs and, like
# VictoriaMetrics, it reports -X lib/buildinfo.Version (VictoriaMetrics/VictoriaLogs v1.52.1
# Makefile: GO_BUILDINFO = -X '.../VictoriaMetrics/lib/buildinfo.Version=$(APP_NAME)-...').
VLOGS_MODULE = "github.com/VictoriaMetrics/VictoriaLogs"
VLOGS_VERSION = "v1.52.1"
# The OpenTelemetry Collector release every module of compose/otelcol/go.mod belongs to
OTELCOL_VERSION = "v0.165.0"
# compose pins prom/mysqld-exporter at the same release. v0.17.2 is not served by the Go
# module proxy here; v0.19.0 is, and its /probe?target=&auth_module= (probe.go) and option
# file handling (config/config.go: one section per auth_module, `client.x` inheriting from
# `client`, values through os.ExpandEnv) are what the deployment relies on.
MYSQLD_EXPORTER_VERSION = "v0.19.0"


def _vm_tool(app: str) -> GoTool:
    # VictoriaMetrics' Makefile: -X lib/buildinfo.Version=<app>-<date>-<git describe>; the
    # short version (what vm_app_version{short_version} and compose's tag say) is parsed
    # from the `v1.x.y` in it.
    return GoTool(app, VM_MODULE, VM_VERSION, f"./app/{app}",
                  ldflags=f"-X {VM_MODULE}/lib/buildinfo.Version={app}-{{version}}"
                          "-tags-{version}-0-g0000000")


TOOLS: dict[str, GoTool] = {
    t.name: t
    for t in (
        GoTool("docker-compose", "github.com/docker/compose/v2", "v2.40.3", "./cmd"),
        # the Alertmanager version compose/ pins: its amtool checks compose's config, and
        # the lab runs the same Alertmanager
        GoTool("amtool", "github.com/prometheus/alertmanager", ALERTMANAGER_VERSION,
               "./cmd/amtool"),
        GoTool("alertmanager", "github.com/prometheus/alertmanager", ALERTMANAGER_VERSION,
               "./cmd/alertmanager",
               ldflags="-X github.com/prometheus/common/version.Version={version_bare}"),
        # Debian's prometheus-mysqld-exporter is 0.14, which has no multi-target /probe
        GoTool("mysqld_exporter", "github.com/prometheus/mysqld_exporter",
               MYSQLD_EXPORTER_VERSION, ".",
               ldflags="-X github.com/prometheus/common/version.Version={version_bare}"),
        _vm_tool("victoria-metrics"),
        _vm_tool("vmagent"),
        _vm_tool("vmalert"),
        # the door: the one authenticating proxy compose publishes (and the lab runs), and
        # the allow-list in front of mysqld_exporter's /probe
        _vm_tool("vmauth"),
        GoTool("victoria-logs", VLOGS_MODULE, VLOGS_VERSION, "./app/victoria-logs",
               ldflags=f"-X {VM_MODULE}/lib/buildinfo.Version=victoria-logs-{{version}}"
                       "-tags-{version}-0-g0000000"),
        # the log shipper: collector core v0.165.0 (modules v1.71.0), contrib v0.165.1
        GoTool("otelcol", "", OTELCOL_VERSION, ".", source_dir=REPO_DIR / "compose" / "otelcol",
               ldflags="-X main.Version={version_bare}"),
    )
}


class ToolError(RuntimeError):
    pass


def go_binary() -> str:
    found = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists()
                                   else None)
    if not found:
        raise ToolError("Go is not installed: the lab builds VictoriaMetrics, VictoriaLogs,"
                        " the OpenTelemetry Collector and docker compose with it")
    return found


def _go(args: list[str], cwd: Path | None = None) -> str:
    env = dict(os.environ, GOFLAGS="-mod=mod", CGO_ENABLED="0")
    proc = subprocess.run([go_binary(), *args], cwd=cwd, env=env, text=True,
                          capture_output=True)
    if proc.returncode != 0:
        raise ToolError(f"go {' '.join(args)} failed:\n{proc.stderr[-4000:]}")
    return proc.stdout


def _module_dir(module: str, version: str) -> Path:
    info = json.loads(_go(["mod", "download", "-json", f"{module}@{version}"]))
    return Path(info["Dir"])


def build(tool: GoTool) -> Path:
    if tool.path.exists():
        return tool.path
    BIN_DIR.mkdir(parents=True, exist_ok=True)
    print(f"tools: building {tool.name} {tool.version} (first time only, takes minutes)",
          flush=True)
    with tempfile.TemporaryDirectory(prefix=f"build-{tool.name}-") as tmp:
        src = Path(tmp) / "src"
        # a copy: the module cache is read-only, and a build never writes to the checkout
        shutil.copytree(tool.source_dir or _module_dir(tool.module, tool.version), src)
        for p in src.rglob("*"):
            if not p.is_symlink():
                p.chmod(0o755 if p.is_dir() else 0o644)
        # one partial file per builder: two processes (make tools and a test session)
        # may build the same tool at once; the last rename wins, both get the binary
        partial = tool.path.with_name(f"{tool.path.name}.{os.getpid()}.partial")
        ldflags = tool.ldflags.format(version=tool.version,
                                      version_bare=tool.version.removeprefix("v"))
        _go(["build", "-trimpath", *(["-ldflags", ldflags] if ldflags else []), "-o",
             str(partial), tool.package], cwd=src)
        os.replace(partial, tool.path)
    return tool.path


def path_of(name: str) -> Path:
    """The cached binary, or a ToolError telling the user how to build it."""
    tool = TOOLS[name]
    if not tool.path.exists():
        raise ToolError(f"{name} {tool.version} is not built: run `clusterscope tools build {name}`"
                        " (or `make setup`)")
    return tool.path


