"""Container contracts, checked without a Docker engine: each service built from this
repository (and the official ones whose binary runs here) is started with its real command
from compose/docker-compose.yml, as the image's user, with its secrets where Compose mounts
them (/run/secrets/NAME) and with the owner and mode the README tells users to create.

Compose bind-mounts a secret file with its host owner and mode and ignores uid/gid/mode
(docker/compose v2.40.3 pkg/compose/create.go, buildContainerSecretMounts): that is what
these tests reproduce, with a private mount namespace (`unshare --mount`, a bind mount on
/run/secrets) and `setpriv` to the container's uid/gid. The container's own filesystem is not
reproduced: the programs run from this machine's venv / Debian packages.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import yaml
from helpers import REPO, eventually

COMPOSE = yaml.safe_load((REPO / "compose" / "docker-compose.yml").read_text())["services"]
README = (REPO / "README.md").read_text()
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                                reason="needs root and util-linux unshare/setpriv")


def readme_modes() -> tuple[int, int]:
    """(directory mode, file mode) of compose/secrets as the README tells users to create."""
    d = re.search(r"install -d -m (0[0-7]{3}) secrets", README)
    f = re.search(r"install -m (0[0-7]{3}) /dev/null secrets/", README)
    assert d and f, "the README no longer says how to create compose/secrets"
    return int(d.group(1), 8), int(f.group(1), 8)


def image_user(dockerfile: str) -> tuple[int, int]:
    m = re.search(r"^USER (\d+):(\d+)", (REPO / dockerfile).read_text(), re.M)
    assert m, f"{dockerfile} has no numeric USER"
    return int(m.group(1)), int(m.group(2))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def secrets_dir(tmp: Path, files: dict[str, str], mode: int | None = None) -> Path:
    """The host side of compose/secrets, owned by the user who runs compose (root here)."""
    dmode, fmode = readme_modes()
    d = tmp / "secrets"
    d.mkdir(mode=dmode)
    for name, text in files.items():
        (d / name).write_text(text)
        (d / name).chmod(fmode if mode is None else mode)
    return d


def as_container(uid: int, gid: int, secrets: Path, argv: list[str],
                 groups: list[int] | None = None, **kw) -> subprocess.Popen:
    """argv as uid:gid (+ supplementary groups, Compose's group_add), with `secrets`
    mounted on /run/secrets as Compose's bind mount does."""
    extra = f"--groups={','.join(map(str, groups))}" if groups else "--clear-groups"
    # each FILE is bind-mounted (not the directory: its 0700 does not apply in the
    # container), onto a fresh /run/secrets as the container has it
    binds = "".join(f' && touch /run/secrets/{f.name} && mount --bind {f} /run/secrets/{f.name}'
                    for f in sorted(secrets.iterdir()))
    script = ('mkdir -p /run/secrets && mount -t tmpfs -o mode=0755 tmpfs /run/secrets'
              f'{binds} && exec setpriv --reuid={uid} --regid={gid} {extra} "$@"')
    return subprocess.Popen(["unshare", "--mount", "--propagation", "private", "--", "sh",
                             "-c", script, "sh", *argv], **kw)


def command(service: str, **replace: str) -> list[str]:
    """The service's compose command, `--flag=value` overridden per `replace`."""
    out = []
    for arg in COMPOSE[service]["command"]:
        flag = arg.split("=", 1)[0]
        out.append(f"{flag}={replace[flag]}" if flag in replace else arg)
    return out


def serve(proc: subprocess.Popen, port: int, path: str = "/metrics") -> str:
    def get() -> str:
        assert proc.poll() is None, f"exited {proc.returncode}: {proc.stdout.read()}"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=3) as r:
            return r.read().decode()
    return eventually(get, 30, f"port {port} serves {path}")


def stop(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        proc.terminate()
    out, _ = proc.communicate(timeout=20)
    return out or ""


def exporters_cnf(lab) -> str:
    """The lab's exporters option file: the secret compose hands both exporters."""
    from clusterscope.lab import exporters
    from clusterscope.lab.core import Lab
    return exporters.option_file(Lab(lab.root, lab.port_base)).read_text()


def description(lab) -> str:
    """The lab's description, where compose mounts the user's (a directory the container's
    user can read: compose's bind mount of clusters/)."""
    return str(lab.root / "clusterscope.yml")


@pytest.mark.lab
def test_ndbinfo_exporter_reads_its_secret_as_uid_10001_and_serves(ndb_lab, tmp_path,
                                                                  vol) -> None:
    uid, gid = image_user("exporters/Dockerfile")
    secrets = secrets_dir(tmp_path, {"exporters_my_cnf": exporters_cnf(ndb_lab)})
    state = vol / "state"  # the named volume: the image's /var/lib/clusterscope, 10001's
    state.mkdir()
    os.chown(state, uid, gid)
    port = free_port()
    argv = [sys.executable, "-m", "ndbinfo_exporter", *command(
        "ndbinfo-exporter", **{"--web.listen-address": f"127.0.0.1:{port}",
                               "--config.clusters": description(ndb_lab),
                               "--state.dir": str(state)})]
    proc = as_container(uid, gid, secrets, argv, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True)
    try:
        body = eventually(lambda: "ndb_up 1.0" in (b := serve(proc, port,
                                                              "/probe?cluster=lab-ndb")) and b,
                          30, "ndb_up 1 from the secret's credentials")
        assert "ndb_restart_status" in body or "ndb_node_status" in body
        # the image's healthcheck, as compose runs it (its port moved here)
        hc = COMPOSE["ndbinfo-exporter"]["healthcheck"]["test"]
        code = hc[-1].replace("9723", str(port))
        assert subprocess.run([sys.executable, "-c", code], timeout=10).returncode == 0
    finally:
        log = stop(proc)
    assert "password" not in log.lower() or "password=" not in log


@pytest.mark.lab
def test_a_0600_secret_is_unreadable_by_the_exporter(ndb_lab, tmp_path) -> None:
    """Today's mode before the fix: the container's user cannot read it, the exporter
    says so and exits (what the README's 0644 prevents)."""
    uid, gid = image_user("exporters/Dockerfile")
    secrets = secrets_dir(tmp_path, {"exporters_my_cnf": exporters_cnf(ndb_lab)}, mode=0o600)
    argv = [sys.executable, "-m", "ndbinfo_exporter", *command(
        "ndbinfo-exporter", **{"--web.listen-address": f"127.0.0.1:{free_port()}",
                               "--config.clusters": description(ndb_lab),
                               "--state.dir": str(tmp_path)})]
    proc = as_container(uid, gid, secrets, argv, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "Permission denied" in out, out


@pytest.mark.tools("python", "unshare")
def test_galera_tracker_reads_logs_through_the_configured_group(tmp_path, vol) -> None:
    """group_add CLUSTER_LOG_GID: the tracker (uid 10001) reads 0660 error logs owned by
    the host's mysql group; without the group it reads nothing."""
    uid, gid = image_user("exporters/Dockerfile")
    log_gid = 999
    logs = vol / "logs"
    logs.mkdir(mode=0o750)
    os.chown(logs, 0, log_gid)
    err = logs / "node1.err"
    err.write_text("2026-11-24 10:00:00 0 [Note] WSREP: Shifting SYNCED -> DONOR/DESYNCED"
                   " (TO: 1)\n")
    err.chmod(0o660)
    os.chown(err, 0, log_gid)
    secrets = secrets_dir(tmp_path, {})
    for name, groups, want in (("with", [log_gid], 1.0), ("without", None, 0.0)):
        state = vol / f"state-{name}"
        state.mkdir()
        os.chown(state, uid, gid)
        port = free_port()
        desc = vol / f"clusterscope-{name}.yml"
        desc.write_text("clusters: [{name: c, kind: galera, nodes: [{name: node1, address:"
                        f" 'h:3306', log: '{err}'}}]}}]\n")
        desc.chmod(0o644)
        argv = [sys.executable, "-m", "galera_tracker", *command(
            "galera-tracker", **{"--web.listen-address": f"127.0.0.1:{port}",
                                 "--state.file": str(state / "t.json"),
                                 "--config.clusters": str(desc)})]
        proc = as_container(uid, gid, secrets, argv, groups=groups, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
        try:
            eventually(lambda p=proc, port=port, want=want: _log_up(p, port) == want, 20,
                       f"galera_tracker_log_up {want} {name} the log group")
        finally:
            stop(proc)


def _log_up(proc: subprocess.Popen, port: int) -> float:
    body = serve(proc, port)
    m = re.search(r'galera_tracker_log_up\{[^}]*node="node1"[^}]*\} (\S+)', body)
    return float(m.group(1)) if m else -1.0


def _grafana_guard() -> str:
    """The grafana service's entrypoint script, Compose's `$$` unescaped, Grafana's own
    /run.sh replaced by a marker (the guard is what is tested)."""
    script = COMPOSE["grafana"]["entrypoint"][-1].replace("$$", "$")
    assert "exec /run.sh" in script
    return script.replace("exec /run.sh", "echo would-start")


@pytest.mark.parametrize("content,mode,starts", [
    ("s3cret\n", None, True),      # as the README says: Grafana starts with this password
    ("s3cret\n", 0o600, False),    # unreadable by uid 472: refused, not admin/admin
    ("", None, False),             # empty: refused
])
@pytest.mark.tools("unshare")
def test_grafana_refuses_an_unreadable_or_empty_password(tmp_path, content, mode,
                                                         starts) -> None:
    secrets = secrets_dir(tmp_path, {"grafana_admin_password": content}, mode=mode)
    proc = as_container(472, 0, secrets, ["sh", "-c", _grafana_guard()],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate(timeout=20)
    assert (proc.returncode == 0 and "would-start" in out) == starts, out


@pytest.mark.lab
def test_mysqld_exporter_reads_its_secret_as_nobody(galera_lab, tmp_path) -> None:
    """prom/mysqld-exporter runs as nobody (its Dockerfile: USER nobody); the same release
    built from its Go module stands in for the image's binary, probing as compose's
    scrape does (target and auth_module from the description), node2 with its own login."""
    from clusterscope import gotools
    binary = str(gotools.path_of("mysqld_exporter"))
    secrets = secrets_dir(tmp_path, {"exporters_my_cnf": exporters_cnf(galera_lab)})
    port = free_port()
    argv = [binary, *command("mysqld-exporter", **{
        "--web.listen-address": f"127.0.0.1:{port}"})]
    proc = as_container(65534, 65534, secrets, argv, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True)
    try:
        for n, auth in ((1, "client"), (2, "client.node2")):
            path = (f"/probe?target=127.0.0.1:{galera_lab.port(f'galera-node{n}')}"
                    f"&auth_module={auth}")
            body = eventually(lambda p=path: "mysql_up 1" in (b := serve(proc, port, p)) and b,
                              30, f"mysql_up 1 for node{n} with the secret's {auth}")
            assert "mysql_global_status_wsrep_cluster_size" in body
        # compose's healthcheck page answers without touching a database
        assert "mysqld" in serve(proc, port, "/").lower()
    finally:
        stop(proc)


def test_compose_contract_settings() -> None:
    """The settings whose absence broke a real start (review compose.md A3, A4, A5, A6, B5)."""
    ini = (REPO / "compose" / "lab" / "ndb" / "config.ini").read_text()
    assert re.search(r"\[tcp default\]\s*\n\s*AllowUnresolvedHostNames=true", ini)
    assert COMPOSE["ndb-sql"]["environment"]["MYSQL_ROOT_PASSWORD"].startswith("/run/secrets/")
    assert "--su-mysql" in COMPOSE["galera-node2"]["healthcheck"]["test"]
    scale = (REPO / "compose" / "docker-compose.scale.yml").read_text()
    assert not re.search(r"image:\s*minio/", scale)
    for name, svc in COMPOSE.items():
        if str(svc.get("image", "")).startswith("clusterscope/"):
            assert svc.get("pull_policy") == "build", name
    # the NDB init script is sourced by Oracle's entrypoint: no `set -u`/`exit` may leak
    init = (REPO / "compose" / "lab" / "initdb-ndb" / "10-clusterscope-accounts.sh").read_text()
    assert not re.search(r"^\s*set -[a-z]*u", init, re.M) and not re.search(r"^\s*exit\b",
                                                                            init, re.M)
