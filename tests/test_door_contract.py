"""The door's and Grafana's entrypoints as compose runs them, without a Docker engine: the
door's script (compose's `$$` unescaped) as uid 65534 with its secrets bind-mounted as
Compose mounts them, the real vmauth v1.151.0 standing in for the image's /vmauth-prod,
with compose's flags and its generated routes; Grafana's guard as uid 472 with a stand-in
`grafana` command that records how the password reached it (Grafana itself cannot run
here: its reset is grafana/grafana pkg/cmd/grafana-cli/commands/commands.go db64da7a,
`admin reset-admin-password --password-from-stdin`)."""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from helpers import REPO, eventually
from test_compose_contract import (
    COMPOSE,
    _grafana_guard,
    as_container,
    secrets_dir,
    stop,
)

from clusterscope import gotools
from clusterscope.lab import door_service
from clusterscope.lab.core import Lab

pytestmark = [pytest.mark.tools("unshare"),
              pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                                 reason="needs root and util-linux unshare/setpriv")]
GOOD = {"door_read_password": "r" * 20, "door_write_password": "w" * 20,
        "door_operate_password": "o" * 8 + "+/=._~-0123"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def door_argv(vol: Path, public: int, internal: int) -> list[str]:
    """compose's door: its entrypoint script and command, the binary and ports moved here
    and its routes (config/door.yml) where the container has them."""
    binary = vol / "vmauth-prod"
    shutil.copy(gotools.build(gotools.TOOLS["vmauth"]), binary)
    binary.chmod(0o755)
    cfg = vol / "door.yml"
    shutil.copy(REPO / "compose" / "config" / "door.yml", cfg)
    cfg.chmod(0o644)
    entry = COMPOSE["door"]["entrypoint"]
    script = entry[2].replace("$$", "$").replace("/vmauth-prod", str(binary))
    args = [a.replace("/etc/clusterscope/door.yml", str(cfg))
            .replace("127.0.0.1:8426", f"127.0.0.1:{internal}")
            .replace(":8427", f"127.0.0.1:{public}")
            for a in COMPOSE["door"]["command"]]
    return [entry[0], entry[1], script, entry[3], *args]


def tls(tmp: Path) -> dict[str, str]:
    """A certificate for 127.0.0.1 and its CA (the lab's maker of them)."""
    lab = Lab(tmp / "lab", 0)
    cert, key = door_service.certificate(lab)
    return {"tls_cert": cert.read_text(), "tls_key": key.read_text(),
            "ca": str(door_service.ca_file(lab))}


def get(url: str, ca: str, auth: str | None = None) -> int:
    req = urllib.request.Request(url)
    if auth:
        req.add_header("Authorization", auth)
    try:
        with urllib.request.urlopen(req, timeout=5,
                                    context=ssl.create_default_context(cafile=ca)) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_door_starts_with_its_secrets_and_refuses_without_credentials(tmp_path,
                                                                          vol) -> None:
    certs = tls(tmp_path)
    secrets = secrets_dir(tmp_path, {**GOOD, "tls_cert": certs["tls_cert"],
                                     "tls_key": certs["tls_key"]})
    public, internal = free_port(), free_port()
    proc = as_container(65534, 65534, secrets, door_argv(vol, public, internal),
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        eventually(lambda: urllib.request.urlopen(f"http://127.0.0.1:{internal}/health",
                                                  timeout=2).status == 200, 30,
                   "the door's internal /health over plain HTTP")
        url = f"https://127.0.0.1:{public}/api/v1/query?query=up"
        assert get(url, certs["ca"]) == 401
        # the placeholder itself is no password (the entrypoint set every variable)
        import base64
        literal = base64.b64encode(b"read:%{DOOR_READ_PASSWORD}").decode()
        assert get(url, certs["ca"], f"Basic {literal}") == 401
        # the internal pages are not on the published address
        assert get(f"https://127.0.0.1:{public}/metrics", certs["ca"]) == 401
    finally:
        out = stop(proc)
    for pw in GOOD.values():
        assert pw not in out


@pytest.mark.parametrize("bad,why", [
    ("", "is empty or has characters"),
    ("has'quote" + "x" * 10, "is empty or has characters"),
    ('back\\slash' + "x" * 10, "is empty or has characters"),
    ("sh0rt", "is shorter than 16"),
])
def test_the_door_refuses_an_unusable_password(tmp_path, vol, bad, why) -> None:
    certs = tls(tmp_path)
    secrets = secrets_dir(tmp_path, {**GOOD, "door_write_password": bad,
                                     "tls_cert": certs["tls_cert"], "tls_key": certs["tls_key"]})
    proc = as_container(65534, 65534, secrets, door_argv(vol, free_port(), free_port()),
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1, out
    assert f"the door_write_password secret {why}" in out
    if bad:
        assert bad not in out


def test_grafana_sets_the_files_password_at_every_start(tmp_path, vol) -> None:
    """Rotation: the guard hands the file's password to `grafana cli admin
    reset-admin-password --password-from-stdin` on stdin, never in argv, then starts
    Grafana; a failing reset (the first start: no admin yet) does not stop it."""
    bin_dir = vol / "bin"
    bin_dir.mkdir()
    record = vol / "record"
    record.mkdir()
    record.chmod(0o777)  # the container user (472) records there
    fake = bin_dir / "grafana"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" > {record}/argv\ncat > {record}/stdin\n'
                    'exit "${FAKE_EXIT:-0}"\n')
    fake.chmod(0o755)
    secrets = secrets_dir(tmp_path, {"grafana_admin_password": "n3w-Passw0rd\n"})
    for code, said in (("0", True), ("1", False)):
        env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", FAKE_EXIT=code,
                   GF_PATHS_HOME="/usr/share/grafana", GF_PATHS_CONFIG="/etc/grafana.ini")
        proc = as_container(472, 0, secrets, ["sh", "-c", _grafana_guard()], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = proc.communicate(timeout=20)
        assert proc.returncode == 0 and "would-start" in out, out
        assert ("admin password set" in out) is said
        assert (record / "stdin").read_text() == "n3w-Passw0rd"
        argv = (record / "argv").read_text()
        assert "admin reset-admin-password --password-from-stdin" in argv
        assert "n3w-Passw0rd" not in argv + out
