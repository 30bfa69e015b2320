"""mysqld_exporter's /probe answers only for the description's nodes: compose's probe-guard
(the real vmauth v1.151.0 with compose's flags) reading its allow-list from the real
inventory (/config/probes.yml, as compose runs it), in front of the real mysqld_exporter of
the release compose pins. A target the description does not list is refused before
mysqld_exporter sees it; a described target is probed with the description's credentials
section whatever `auth_module` the request names."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from helpers import REPO, eventually
from lanes import starts

from clusterscope import gotools

COMPOSE = yaml.safe_load((REPO / "compose" / "docker-compose.yml").read_text())["services"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=15) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def description(nodes: list[tuple[str, str, str | None]]) -> str:
    return yaml.safe_dump({"clusters": [{"name": "g", "kind": "galera", "nodes": [
        {"name": n, "address": a, **({"credentials": c} if c else {})} for n, a, c in nodes]}]})


@pytest.fixture
@starts("python", "mysqld_exporter", "vmauth")
def guarded(tmp_path: Path):
    """(guard URL, description path, mysqld_exporter URL), all three running."""
    # nothing listens at these: mysqld_exporter answers mysql_up 0, which is enough to
    # tell who answered and with which section
    node1, node2, stranger = (f"127.0.0.1:{free_port()}" for _ in range(3))
    desc = tmp_path / "clusterscope.yml"
    desc.write_text(description([("node1", node1, None), ("node2", node2, "client.node2")]))
    cnf = tmp_path / "exporters.my.cnf"
    cnf.write_text("[client]\nuser=exporter\npassword=pw-client\n"
                   "[client.node2]\nuser=exporter2\npassword=pw-node2\n")
    cnf.chmod(0o600)
    inv_port, mx_port, guard_port, internal = (free_port() for _ in range(4))
    procs = []
    try:
        inv_flags = [a for a in COMPOSE["inventory"]["command"]
                     if a.startswith("--probes.backend=")]
        assert inv_flags == ["--probes.backend=127.0.0.1:9104"]  # where compose's listens
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "clusterscope_inventory", f"--config.file={desc}",
             f"--web.listen-address=127.0.0.1:{inv_port}",
             f"--probes.backend=127.0.0.1:{mx_port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        eventually(lambda: get(f"http://127.0.0.1:{inv_port}/-/ready")[0] == 200, 30,
                   "the inventory")
        procs.append(subprocess.Popen(
            [str(gotools.path_of("mysqld_exporter")), f"--config.my-cnf={cnf}",
             f"--web.listen-address=127.0.0.1:{mx_port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        # the guard proxies to it: a probe before it listens would read the guard's 502
        # (a loaded machine starts it in seconds, not at once)
        eventually(lambda: get(f"http://127.0.0.1:{mx_port}/metrics")[0] == 200, 30,
                   "mysqld_exporter")
        # compose's probe-guard flags, its addresses moved to this host
        flags = [a.replace("http://inventory:9110", f"http://127.0.0.1:{inv_port}")
                 .replace("127.0.0.1:9106", f"127.0.0.1:{internal}")
                 .replace(":9105", f"127.0.0.1:{guard_port}")
                 .replace("-configCheckInterval=30s", "-configCheckInterval=1s")
                 for a in COMPOSE["probe-guard"]["command"]]
        procs.append(subprocess.Popen([str(gotools.build(gotools.TOOLS["vmauth"])), *flags],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        eventually(lambda: get(f"http://127.0.0.1:{internal}/health")[0] == 200, 30,
                   "the probe guard")
        yield {"guard": f"http://127.0.0.1:{guard_port}", "desc": desc,
               "exporter": f"http://127.0.0.1:{mx_port}", "nodes": (node1, node2),
               "stranger": stranger}
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)


def test_a_probe_of_a_target_not_described_is_refused(guarded) -> None:
    g = guarded
    code, body = get(f"{g['guard']}/probe?target={g['stranger']}&auth_module=client")
    assert code == 400 and "missing route" in body, (code, body)
    # a described target given twice with the stranger does not smuggle it in: the probe
    # runs against the described address only (the backend URL's target wins)
    code, body = get(f"{g['guard']}/probe?target={g['stranger']}&target={g['nodes'][0]}")
    assert code == 200 and "mysql_up 0" in body
    # anything but /probe is refused too, the guard's own pages included
    for path in ("/metrics", "/", "/debug/pprof/", "/-/reload"):
        assert get(f"{g['guard']}{path}?target={g['nodes'][0]}")[0] == 400, path
    # the same request straight to mysqld_exporter is answered: the guard is what refuses
    assert get(f"{g['exporter']}/probe?target={g['stranger']}&auth_module=client")[0] == 200


def test_a_described_target_is_probed_with_its_own_section(guarded) -> None:
    g = guarded
    node1, node2 = g["nodes"]
    # mysqld_exporter refuses a section its option file lacks (probe.go: 400)...
    assert get(f"{g['exporter']}/probe?target={node2}&auth_module=client.evil")[0] == 400
    # ...through the guard the description's section replaces whatever was asked
    for target, asked in ((node1, "client.node2"), (node2, "client.evil"), (node2, "")):
        code, body = get(f"{g['guard']}/probe?target={target}&auth_module={asked}")
        assert code == 200 and "mysql_up 0" in body, (target, asked, code, body)


def test_the_allow_list_follows_the_description(guarded) -> None:
    g = guarded
    code, _ = get(f"{g['guard']}/probe?target={g['stranger']}")
    assert code == 400
    g["desc"].write_text(description([("node1", g["nodes"][0], None),
                                      ("node3", g["stranger"], None)]))
    eventually(lambda: get(f"{g['guard']}/probe?target={g['stranger']}")[0] == 200, 30,
               "a node added to the description is probed")
    assert get(f"{g['guard']}/probe?target={g['nodes'][1]}")[0] == 400  # node2 removed
