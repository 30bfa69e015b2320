"""Go-built tools the lab and the tests need, built from the Go module proxy and cached.

The lab runs the versions compose/ pins (VictoriaMetrics, vmagent, vmalert, Alertmanager,
Loki), so the configs, rules and dashboards are proven on what users deploy. Loki and docker
compose cannot be `go install`ed (replace/exclude directives), so every module's source is
downloaded, copied somewhere writable and built there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
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
    needs_loki_push: bool = False
    # -X flags, {version} filled in: the version string the binary reports (as the
    # upstream release build sets it)
    ldflags: str = ""

    @property
    def path(self) -> Path:
        return BIN_DIR / f"{self.name}-{self.version}"


LOKI_VERSION = "v3.5.7"
VM_MODULE = "github.com/VictoriaMetrics/VictoriaMetrics"
VM_VERSION = "v1.151.0"
ALERTMANAGER_VERSION = "v0.28.1"
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
    )
}


class ToolError(RuntimeError):
    pass


def go_binary() -> str:
    found = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists()
                                   else None)
    if not found:
        raise ToolError("Go is not installed: the lab builds Loki and docker compose with it")
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


def _place_loki_push(src: Path) -> None:
    """Put the pkg/push sub-module beside Loki: its go.mod replaces it with ./pkg/push."""
    gomod = (src / "go.mod").read_text()
    match = re.search(r"github\.com/grafana/loki/pkg/push\s+(v\S+)", gomod)
    if not match:
        return
    push_dir = _module_dir("github.com/grafana/loki/pkg/push", match.group(1))
    target = src / "pkg" / "push"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(push_dir, target)
    for p in target.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)


def build(tool: GoTool) -> Path:
    if tool.path.exists():
        return tool.path
    BIN_DIR.mkdir(parents=True, exist_ok=True)
    print(f"tools: building {tool.name} {tool.version} (first time only, takes minutes)",
          flush=True)
    with tempfile.TemporaryDirectory(prefix=f"build-{tool.name}-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(_module_dir(tool.module, tool.version), src)
        for p in src.rglob("*"):  # the module cache is read-only
            if not p.is_symlink():
                p.chmod(0o755 if p.is_dir() else 0o644)
        if tool.needs_loki_push:
            _place_loki_push(src)
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


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tools", help="build or locate the Go-built tools (Loki, promtail, ...)")
    tsub = p.add_subparsers(dest="tools_cmd", required=True)
    b = tsub.add_parser("build", help="build the named tools (default: all)")
    # No `choices` with a list default: argparse checks the default list against them.
    b.add_argument("names", nargs="*", metavar="NAME", help=f"one of {', '.join(TOOLS)}")
    tsub.add_parser("list", help="print each tool's cached path")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.tools_cmd == "list":
        for t in TOOLS.values():
            print(f"{t.name}\t{t.version}\t{t.path}\t{'built' if t.path.exists() else 'missing'}")
        return 0
    unknown = [n for n in args.names if n not in TOOLS]
    if unknown:
        print(f"unknown tool(s): {', '.join(unknown)}; known: {', '.join(TOOLS)}", file=sys.stderr)
        return 2
    try:
        for name in args.names or list(TOOLS):
            print(f"{name}: {build(TOOLS[name])}")
    except ToolError as exc:
        print(f"tools: {exc}", file=sys.stderr)
        return 1
    return 0
