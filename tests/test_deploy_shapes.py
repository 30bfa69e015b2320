"""The deployment follows the user's clusters: each example under compose/examples/ runs
exactly its own services (the real Compose binary) and VictoriaMetrics scrapes exactly what
its description lists (the real inventory serving it, the real VictoriaMetrics of the
version compose pins reading compose's generated scrape.yml)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from helpers import eventually
from test_compose import BASE, EXAMPLES, LAB_SERVICES, LOG_SERVICES, SCALE, run_config

from clusterscope import gotools
from clusterscope.deploy import compose as compose_config

pytestmark = pytest.mark.tools("docker-compose", "python", "victoria-metrics")

CORE = {"inventory", "victoria-metrics", "vmalert", "alertmanager", "grafana", "door",
        "change-detector",
        *LOG_SERVICES}
PROBES = {"mysqld-exporter", "probe-guard"}  # mysqld_exporter behind its allow-list
SHAPES = {
    "ndb-only": CORE | {"ndbinfo-exporter"} | PROBES,
    "galera-only": CORE | {"galera-tracker"} | PROBES,
    "ndb-and-galera": CORE | {"ndbinfo-exporter", "galera-tracker"} | PROBES,
    "two-galera": CORE | {"galera-tracker"} | PROBES,
    "lab": CORE | {"ndbinfo-exporter", "galera-tracker"} | PROBES | LAB_SERVICES,
}


def services(secrets_dir: Path, shape: str, *args: str, **env: str) -> set[str]:
    return set(json.loads(run_config(secrets_dir, *args, shape=shape, env=env).stdout)
               ["services"])


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_runs_exactly_its_own_services(secrets_dir, shape) -> None:
    assert services(secrets_dir, shape) == SHAPES[shape]


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("variant", ["as-is", "opened", "scale", "loadgen"])
def test_each_shape_publishes_only_grafana_and_the_door(secrets_dir, shape, variant) -> None:
    """Whatever the shape, scale-out or the loadgen, and with BIND_ADDR opened: two ports,
    Grafana's and the door's; everything else is on the Compose network only."""
    env = {"BIND_ADDR": "0.0.0.0"} if variant == "opened" else {}
    files = (BASE, SCALE) if variant == "scale" else (BASE,)
    if variant == "loadgen":
        env = {"COMPOSE_PROFILES": "ndb,galera,loadgen", "LOADGEN_CLUSTER": "staging-galera"}
    model = json.loads(run_config(secrets_dir, shape=shape, files=files, env=env).stdout)
    published = {(name, p["target"], p["host_ip"]) for name, svc in model["services"].items()
                 for p in svc.get("ports", [])}
    host = "0.0.0.0" if variant == "opened" else "127.0.0.1"
    assert published == {("grafana", 3000, host), ("door", 8427, host)}
    # nothing else could be reached from the host either: no host network, no expose
    for name, svc in model["services"].items():
        assert svc.get("network_mode") in (None, "service:mysqld-exporter"), name


def test_the_lab_profile_names_everything_it_needs(secrets_dir) -> None:
    """`--profile lab` replaces COMPOSE_PROFILES (here ndb): the lab still gets the
    exporters of both products."""
    assert services(secrets_dir, "lab", "--profile", "lab", COMPOSE_PROFILES="ndb") \
        == SHAPES["lab"]


def test_the_loadgen_is_opt_in(secrets_dir) -> None:
    def inventory_args(**env: str) -> list[str]:
        model = json.loads(run_config(secrets_dir, shape="galera-only", env=env).stdout)
        return model["services"]["inventory"]["command"]
    assert "loadgen" not in services(secrets_dir, "galera-only")
    assert "--target.loadgen=" in inventory_args()  # not deployed: no target, no alert
    on = {"COMPOSE_PROFILES": "galera,loadgen", "LOADGEN_CLUSTER": "staging-galera"}
    assert services(secrets_dir, "galera-only", **on) == SHAPES["galera-only"] | {"loadgen"}
    assert "--target.loadgen=loadgen:9500" in inventory_args(**on)
    model = json.loads(run_config(secrets_dir, shape="galera-only", env=on).stdout)
    loadgen = model["services"]["loadgen"]
    assert "--cluster=staging-galera" in loadgen["command"]
    assert [s["source"] for s in loadgen["secrets"]] == ["loadgen_my_cnf"]  # its own login


# -- what VictoriaMetrics scrapes for each shape ---------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def expected_targets(shape: str) -> set[tuple]:
    """(job, probed target, auth_module or cluster, labels) per shape, written out."""
    def galera(cluster: str, nodes: list[str], auth: dict[str, str] | None = None) -> set:
        return {("galera", f"{addr}", (auth or {}).get(node, "client"), cluster, node)
                for node, addr in nodes}
    g2 = [("node1", "galera1.staging.example:3306"), ("node2", "galera2.staging.example:3306")]
    g3 = [*g2, ("node3", "galera3.staging.example:3306")]
    ndb_sql = {("ndb_sql", "ndb-sql1.staging.example:3306", "client.ndb", "staging-ndb", "sql1")}
    ndbinfo = {("ndbinfo", "staging-ndb", None, "staging-ndb", None),
               ("ndbinfo_exporter", "ndbinfo-exporter:9723", None, None, None)}
    tracker = {("galera_tracker", "galera-tracker:9199", None, None, None)}
    # every shape has SQL nodes, so the change detector reads them
    changes = {("clusterscope_changes", "change-detector:9125", None, None, None)}
    if shape == "ndb-only":
        return changes | ndbinfo | ndb_sql | {
            ("ndb_sql", "ndb-sql2.staging.example:3306", "client.ndb", "staging-ndb", "sql2")}
    if shape == "galera-only":
        return changes | galera("staging-galera", g2) | tracker
    if shape == "ndb-and-galera":
        return changes | ndbinfo | ndb_sql | galera("staging-galera", g3) | tracker
    if shape == "two-galera":
        acc = [(f"a{i}", f"10.1.0.1{i}:3306") for i in (1, 2, 3)]
        orders = [(f"o{i}", f"10.2.0.1{i}:3306") for i in (1, 2, 3, 4)]
        return (changes | galera("accounts-db", acc)
                | galera("orders-db5", orders, {"o4": "client.o4"}) | tracker)
    raise KeyError(shape)


@pytest.mark.parametrize("shape", ["ndb-only", "galera-only", "ndb-and-galera", "two-galera"])
def test_each_shape_scrapes_what_its_description_lists(secrets_dir, tmp_path, shape) -> None:
    model = json.loads(run_config(secrets_dir, shape=shape).stdout)["services"]
    # the inventory as compose runs it (its own flags), on the example's description
    inv_port, vm_port = free_port(), free_port()
    # (without Alertmanager's file, which lives in compose's volume)
    args = [a for a in model["inventory"]["command"]
            if not a.startswith(("--config.file", "--web.listen-address", "--alertmanager."))]
    inv = subprocess.Popen(
        [sys.executable, "-m", "clusterscope_inventory",
         f"--config.file={EXAMPLES / shape / 'clusters/clusterscope.yml'}",
         f"--web.listen-address=127.0.0.1:{inv_port}", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # compose's scrape.yml with the Compose network's names pointed at this host
    text = compose_config.files()[compose_config.OUT / "scrape.yml"]
    scrape = tmp_path / "scrape.yml"
    scrape.write_text(text.replace("inventory:9110", f"127.0.0.1:{inv_port}"))
    vm = subprocess.Popen(
        [str(gotools.build(gotools.TOOLS["victoria-metrics"])),
         f"-storageDataPath={tmp_path / 'vm'}", f"-httpListenAddr=127.0.0.1:{vm_port}",
         f"-promscrape.config={scrape}", "-promscrape.httpSDCheckInterval=1s",
         "-loggerLevel=ERROR"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        want = expected_targets(shape)

        def seen() -> set[tuple] | None:
            url = f"http://127.0.0.1:{vm_port}/api/v1/targets"
            with urllib.request.urlopen(url, timeout=5) as r:
                active = json.loads(r.read())["data"]["activeTargets"]
            got = set()
            for t in active:
                lab, disc = t["labels"], t["discoveredLabels"]
                if lab["job"] in ("victoriametrics", "vmalert", "alertmanager", "victorialogs",
                                  "otelcol", "clusterscope_inventory"):
                    continue
                param = disc.get("__param_auth_module") or (
                    lab["instance"] if lab["job"] == "ndbinfo" else None)
                target = lab["instance"] if lab["job"] in ("galera", "ndb_sql", "ndbinfo") \
                    else disc["__address__"]
                got.add((lab["job"], target, param if lab["job"] != "ndbinfo" else None,
                         lab.get("cluster"), lab.get("node")))
            want_norm = {(j, t, p if j != "ndbinfo" else None, c, n) for j, t, p, c, n in want}
            return got if got == want_norm else None

        eventually(seen, 30, f"VictoriaMetrics' targets for {shape}")
        # the scrape URL carries the description's auth_module and the probed target
        with urllib.request.urlopen(f"http://127.0.0.1:{vm_port}/api/v1/targets",
                                    timeout=5) as r:
            urls = [t["scrapeUrl"] for t in json.loads(r.read())["data"]["activeTargets"]]
        if shape == "two-galera":
            assert any("mysqld-exporter:9105/probe?" in u and "auth_module=client.o4" in u
                       and "target=10.2.0.14%3A3306" in u for u in urls), urls
        if shape == "ndb-only":
            assert any(u.startswith("http://ndbinfo-exporter:9723/probe?cluster=staging-ndb")
                       for u in urls), urls
    finally:
        for p in (vm, inv):
            p.terminate()
            p.wait(10)


def test_every_example_description_is_valid_and_described_in_the_readme() -> None:
    """The README's "Monitor your own cluster" shows each example's description as it is
    in compose/examples/, and tells the user to copy the example (nothing else to write
    but the secrets it names)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("## Monitor your own cluster", 1)[1].split("\n## ", 1)[0]
    for shape in ("ndb-only", "galera-only", "ndb-and-galera", "two-galera"):
        desc = (EXAMPLES / shape / "clusters/clusterscope.yml").read_text()
        proc = subprocess.run([sys.executable, "-m", "clusterscope_inventory",
                               f"--config.file={EXAMPLES / shape / 'clusters/clusterscope.yml'}",
                               "--check"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert f"examples/{shape}" in section, shape
        body = "\n".join(ln for ln in desc.splitlines() if not ln.startswith("#"))
        assert body.strip() in section, f"{shape}: the README shows another description"
        lines = section.split(f"examples/{shape}", 1)[1].split("```", 2)[1].strip("\n")
        assert len(lines.splitlines()) <= 16, shape  # the fence's language line + 15
    for step in ("cp -r examples/", "secrets/exporters.my.cnf", "docker compose up -d"):
        assert step in section, step
    env_lines = {ln for shape in SHAPES for ln in (EXAMPLES / shape / ".env").read_text()
                 .splitlines() if ln and not ln.startswith("#")}
    assert {ln.split("=", 1)[0] for ln in env_lines} == {
        "COMPOSE_PROFILES", "LOG_ROOT", "CLUSTER_LOG_GID", "GRAFANA_ADMIN_PASSWORD_FILE"}
