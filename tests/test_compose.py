"""compose/: what users deploy, checked without a Docker engine.

The real Compose v2 (`docker-compose config`, built from its Go module) parses and
interpolates every profile with the example .env; the configs compose mounts go through the
real tools of the versions compose pins or runs (VictoriaMetrics -dryRun, amtool,
VictoriaLogs with compose's flags, the collector reading its configuration from the real
inventory service over HTTP and shipping real cluster logs); the Dockerfiles through
BuildKit's parser.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from lanes import starts

from clusterscope import gotools, paths
from clusterscope.deploy import compose as compose_config
from clusterscope.lab import exporters, monitoring_part
from clusterscope.rules import alertmanager

REPO = Path(__file__).resolve().parents[1]
COMPOSE = REPO / "compose"
BASE = COMPOSE / "docker-compose.yml"
SCALE = COMPOSE / "docker-compose.scale.yml"
EXAMPLES = COMPOSE / "examples"
SECRETS = ["exporters.my.cnf", "loadgen.my.cnf",
           "grafana_admin_password", "lab_db_root_password",
           "lab_exporter_password", "lab_loadgen_password", "lab_galera_sst.cnf",
           "door_read_password", "door_write_password", "door_operate_password",
           "tls.crt", "tls.key"]
LAB_SERVICES = {"ndb-mgmd", "ndb-data1", "ndb-data2", "ndb-sql", "ndb-sql2",
                "galera-node1", "galera-node2", "galera-node3", "galera-logs-init",
                "node-exporter"}
# one-shot services: they run to completion, so no healthcheck and no restart
ONE_SHOT = {"galera-logs-init"}
# the log store, its shipper and the log rules' evaluator
LOG_SERVICES = {"victoria-logs", "otelcol", "vmalert-logs"}


def run_config(secrets_dir: Path, *args: str, files: tuple[Path, ...] = (BASE,),
               env: dict[str, str] | None = None, check: bool = True,
               shape: str = "ndb-and-galera", env_file: Path | None = None,
               fmt: str = "json") -> subprocess.CompletedProcess:
    """The real Compose on compose/ with an example's .env and description, as a user who
    copied `examples/<shape>/.` into compose/ runs it (CLUSTERS_DIR points at the example's
    directory instead of a copy)."""
    argv = [str(gotools.path_of("docker-compose"))]
    for f in files:
        argv += ["-f", str(f)]
    argv += ["--env-file", str(env_file or EXAMPLES / shape / ".env"),
             "--project-directory", str(COMPOSE), *args, "config", "--format", fmt]
    # only what the test sets: no stray COMPOSE_* or .env of the machine running it
    # CLUSTER_LOG_GID has no example value: each host has its own log group (here: 27)
    run_env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"),
               "SECRETS_DIR": str(secrets_dir), "CLUSTER_LOG_GID": "27",
               "CLUSTERS_DIR": f"./examples/{shape}/clusters", **(env or {})}
    proc = subprocess.run(argv, capture_output=True, text=True, env=run_env, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def config_without(setting: str, secrets_dir: Path, tmp_path: Path
                   ) -> subprocess.CompletedProcess:
    """`docker compose config` with an example .env that lacks one setting."""
    env = tmp_path / ".env"
    env.write_text("\n".join(ln for ln in (EXAMPLES / "ndb-and-galera" / ".env").read_text()
                             .splitlines() if not ln.startswith(f"{setting}=")) + "\n")
    return run_config(secrets_dir, env_file=env, check=False, env={setting: ""}
                      if setting == "CLUSTER_LOG_GID" else None)


# everything a staging deployment may run: both products and the loadgen
EVERYTHING = {"COMPOSE_PROFILES": "ndb,galera,loadgen", "LOADGEN_CLUSTER": "staging-galera"}


def compose_models(secrets_dir: Path) -> dict[str, dict]:
    """The interpolated model of each way users run it."""
    return {
        "default": json.loads(run_config(secrets_dir, env=EVERYTHING).stdout),
        "lab": json.loads(run_config(secrets_dir, shape="lab").stdout),
        "scale": json.loads(run_config(secrets_dir, files=(BASE, SCALE)).stdout),
    }


@pytest.fixture(scope="module")
@starts("docker-compose")
def models(secrets_dir) -> dict[str, dict]:
    return compose_models(secrets_dir)


# -- the model ----------------------------------------------------------------------------
def test_profiles_select_the_services(models) -> None:
    default, lab, scale = (set(models[k]["services"]) for k in ("default", "lab", "scale"))
    monitoring_stack = {"inventory", "ndbinfo-exporter", "galera-tracker", "mysqld-exporter",
                        "probe-guard", "change-detector", "loadgen", "victoria-metrics",
                        "vmalert", "alertmanager", "grafana", "door", *LOG_SERVICES}
    assert default == monitoring_stack
    assert lab == monitoring_stack - {"loadgen"} | LAB_SERVICES
    # the override swaps the single-node services for their scalable versions
    assert {"victoria-metrics", "victoria-logs"}.isdisjoint(scale)
    assert {"vmstorage-1", "vmstorage-2", "vminsert", "vmselect", "vmagent",
            "vlstorage-1", "vlstorage-2", "vlinsert", "vlselect"} <= scale
    for name in ("otelcol", "vmalert-logs"):  # nothing waits for a service that is not there
        assert set(models["scale"]["services"][name]["depends_on"]) <= scale, name
    assert models["scale"]["services"]["otelcol"]["environment"][
        "CLUSTERSCOPE_LOGS_ENDPOINT"].startswith("http://vlinsert:9428/")
    vmalert = models["scale"]["services"]["vmalert"]
    assert vmalert["depends_on"].keys() == {"vmselect", "vminsert", "alertmanager"}
    assert any("vmselect" in a for a in vmalert["command"])
    grafana = models["scale"]["services"]["grafana"]
    assert grafana["environment"]["CLUSTERSCOPE_PROMETHEUS_URL"].startswith("http://vmselect")
    assert grafana["environment"]["CLUSTERSCOPE_LOGS_URL"] == "http://vlselect:9428"


def test_scale_scrapes_what_runs_and_alerts_as_promptly(models) -> None:
    scale = models["scale"]["services"]
    # vmagent's scrape config names no service that is absent in scale mode, and
    # scrapes every VictoriaMetrics cluster component
    mount = next(v for v in scale["vmagent"]["volumes"]
                 if v.get("target") == "/etc/clusterscope/scrape.yml")
    cfg = yaml.safe_load(Path(mount["source"]).read_text())
    hosts = {t.split(":")[0] for job in cfg["scrape_configs"]
             for sc in job.get("static_configs", []) for t in sc["targets"]}
    hosts |= {r["replacement"].split(":")[0] for job in cfg["scrape_configs"]
              for r in job.get("relabel_configs", []) if r.get("target_label") == "__address__"}
    hosts |= {sd["url"].split("//")[1].split(":")[0] for job in cfg["scrape_configs"]
              for sd in job.get("http_sd_configs", [])}
    assert {"victoria-metrics", "victoria-logs"}.isdisjoint(hosts)
    assert {"vmagent", "vminsert", "vmselect", "vmstorage-1", "vmstorage-2", "vlinsert",
            "vlselect", "vlstorage-1", "vlstorage-2", "otelcol", "vmalert-logs"} <= hosts
    assert hosts <= set(models["default"]["services"]) | set(scale)
    # the override replaces vmalert's command: the evaluation delay and links stay
    for model in ("default", "scale"):
        for name in ("vmalert", "vmalert-logs"):
            command = models[model]["services"][name]["command"]
            assert "-rule.evalDelay=1s" in command, (model, name)
            assert any(a.startswith("-external.url=") and "3000" in a for a in command), model
        logs_rules = models[model]["services"]["vmalert-logs"]["command"]
        assert "-rule=/etc/clusterscope/rules/vlogs/*.yml" in logs_rules
        # the metric vmalert's glob does not reach the LogsQL rules in rules/vlogs/
        assert "-rule=/etc/clusterscope/rules/*.yml" in models[model]["services"]["vmalert"][
            "command"]


@pytest.mark.parametrize("model", ["default", "lab", "scale"])
def test_every_service_is_pinned_healthchecked_and_restarted(models, model) -> None:
    for name, svc in models[model]["services"].items():
        image = svc["image"]
        if "build" in svc:  # ours: built from this repository, tagged with its version
            assert image.startswith("clusterscope/") and image.endswith(":0.1.0"), name
        else:
            tag = image.rpartition(":")[2]
            assert ":" in image and tag not in ("", "latest") and "/" not in tag, (name, image)
        hc = svc.get("healthcheck") or {}
        if name in ONE_SHOT:
            assert svc.get("restart", "no") == "no" and not hc.get("test"), name
            continue
        assert hc.get("test") and not hc.get("disable"), f"{name} has no healthcheck"
        # the loadgen's refusals are final: a few restarts, then it stays stopped
        want = "on-failure:3" if name == "loadgen" else "unless-stopped"
        assert svc.get("restart") == want, name


@pytest.mark.parametrize("model", ["default", "lab", "scale"])
def test_published_ports_bind_loopback_unless_opted_in(models, model) -> None:
    published = [(n, p) for n, s in models[model]["services"].items() for p in s.get("ports", [])]
    assert {n for n, _ in published} == {"grafana", "door"}
    for name, port in published:
        assert port.get("host_ip") == "127.0.0.1", (name, port)


@pytest.mark.tools("docker-compose")
def test_bind_address_is_an_opt_in(secrets_dir) -> None:
    model = json.loads(run_config(secrets_dir, env={"BIND_ADDR": "0.0.0.0"}).stdout)
    assert {p["host_ip"] for s in model["services"].values() for p in s.get("ports", [])} \
        == {"0.0.0.0"}


def test_grafana_password_has_no_default(models, secrets_dir, tmp_path) -> None:
    grafana = models["default"]["services"]["grafana"]
    assert grafana["environment"]["GF_SECURITY_ADMIN_PASSWORD__FILE"] \
        == "/run/secrets/grafana_admin_password"
    assert "GF_SECURITY_ADMIN_PASSWORD" not in grafana["environment"]
    # an empty or unreadable secret stops Grafana before it could fall back to its
    # built-in password (test_compose_contract runs this guard as uid 472)
    guard = " ".join(grafana["entrypoint"])
    assert "$(cat /run/secrets/grafana_admin_password)" in guard and "exec /run.sh" in guard
    # without a password file in .env, Compose refuses the project
    proc = config_without("GRAFANA_ADMIN_PASSWORD_FILE", secrets_dir, tmp_path)
    assert proc.returncode != 0 and "GRAFANA_ADMIN_PASSWORD_FILE" in proc.stderr, proc.stderr


@pytest.mark.tools("docker-compose")
@pytest.mark.parametrize("setting", ["LOG_ROOT", "CLUSTER_LOG_GID"])
def test_a_missing_setting_is_named(secrets_dir, tmp_path, setting: str) -> None:
    proc = config_without(setting, secrets_dir, tmp_path)
    assert proc.returncode != 0
    assert f"set {setting} in .env" in proc.stderr


def test_secrets_are_files_outside_the_images_and_argv(models, secrets_dir) -> None:
    for name, svc in models["lab"]["services"].items():
        for value in [*(svc.get("command") or []), *(svc.get("environment") or {}).values()]:
            assert "placeholder" not in str(value), name  # a secret's content never leaks
    for name, spec in models["lab"]["secrets"].items():
        assert Path(spec["file"]).parent == secrets_dir, name
    assert (REPO / ".gitignore").read_text().count("compose/secrets/") == 1


def test_data_that_must_survive_is_in_named_volumes(models) -> None:
    services = models["default"]["services"]
    wanted = {"victoria-metrics": "/storage", "victoria-logs": "/vlogs-data",
              "grafana": "/var/lib/grafana", "alertmanager": "/alertmanager",
              "otelcol": "/var/lib/otelcol",
              "ndbinfo-exporter": "/var/lib/clusterscope",
              "galera-tracker": "/var/lib/clusterscope"}
    for name, target in wanted.items():
        vols = {v["target"]: v for v in services[name]["volumes"]}
        assert vols[target]["type"] == "volume", (name, target)


def test_mounted_configs_exist_in_the_repository(models) -> None:
    for model in models.values():
        for name, svc in model["services"].items():
            for v in svc.get("volumes", []):
                if v["type"] == "bind" and str(v["source"]).startswith(str(REPO)):
                    assert Path(v["source"]).exists(), (name, v["source"])
                    assert v.get("read_only"), (name, v["source"])


def test_compose_runs_what_the_lab_runs(models) -> None:
    services = models["default"]["services"]
    # the same mysqld_exporter release and flags as the lab's, one option file for both
    # exporters (sections per credentials name of the description)
    assert services["mysqld-exporter"]["image"].endswith(":" + gotools.MYSQLD_EXPORTER_VERSION)
    assert set(exporters.FLAGS) <= set(services["mysqld-exporter"]["command"])
    for name in ("mysqld-exporter", "ndbinfo-exporter"):
        assert "--config.my-cnf=/run/secrets/exporters_my_cnf" in services[name]["command"]
        assert [s["source"] for s in services[name]["secrets"]] == ["exporters_my_cnf"]
    # the rules' windows assume the lab's evaluation interval
    assert f"-evaluationInterval={monitoring_part.EVAL_INTERVAL}" in services["vmalert"]["command"]
    rules = next(v for v in services["vmalert"]["volumes"] if v["target"].endswith("rules"))
    assert Path(rules["source"]) == REPO / "rules"
    grafana = {v["target"]: Path(v["source"]) for v in services["grafana"]["volumes"]
               if v["type"] == "bind"}
    assert grafana["/var/lib/grafana/dashboards/clusterscope"] == REPO / "dashboards" / "json"
    provider = yaml.safe_load((REPO / "dashboards/provisioning/dashboards/clusterscope.yaml")
                              .read_text())
    assert provider["providers"][0]["options"]["path"] \
        == "/var/lib/grafana/dashboards/clusterscope"
    assert paths.stale(compose_config.files()) == []  # compose/config/ is what the lab's code makes


def test_logs_and_description_are_mounted_where_their_paths_say(models) -> None:
    """The description's log paths are host paths under LOG_ROOT, mounted read-only at the
    same path, so they hold inside the containers; the lab's nodes write under it."""
    for model in ("default", "lab"):
        s = models[model]["services"]
        for name in ("galera-tracker", "otelcol"):
            vols = {v["target"]: v for v in s[name]["volumes"]}
            assert vols["/srv/clusterscope/logs"]["source"] == "/srv/clusterscope/logs"
            assert vols["/srv/clusterscope/logs"]["read_only"]
            assert s[name]["group_add"] == ["27"]  # the host's log group
        for name in ("inventory", "ndbinfo-exporter", "galera-tracker"):
            vols = {v["target"]: v for v in s[name]["volumes"]}
            assert vols["/etc/clusterscope"]["type"] == "bind"  # a directory: edits show
            assert vols["/etc/clusterscope"]["read_only"]
    lab = models["lab"]["services"]
    for n in (1, 2, 3):
        vols = {v["target"]: v["source"] for v in lab[f"galera-node{n}"]["volumes"]}
        assert vols["/var/log/mysql"] == "/srv/clusterscope/logs/lab-galera"
    desc = yaml.safe_load((EXAMPLES / "lab/clusters/clusterscope.yml").read_text())
    logs = [n["log"] for c in desc["clusters"] for n in c["nodes"] if "log" in n]
    assert logs and all(p.startswith("/srv/clusterscope/logs/lab-") for p in logs)


# -- the configs, through the real tools --------------------------------------------------
@pytest.mark.tools("victoria-metrics")
def test_scrape_config_passes_victoriametrics_dry_run(tmp_path) -> None:
    env = dict(os.environ)
    vm = str(gotools.build(gotools.TOOLS["victoria-metrics"]))  # the release compose pins
    ok = subprocess.run([vm, f"-promscrape.config={COMPOSE}/config/scrape.yml",
                         "-dryRun"], capture_output=True, text=True, env=env, timeout=60)
    assert ok.returncode == 0, ok.stderr
    broken = tmp_path / "scrape.yml"
    broken.write_text((COMPOSE / "config/scrape.yml").read_text()
                      .replace("metrics_path: /probe", "metrics_paths: /probe"))
    bad = subprocess.run([vm, f"-promscrape.config={broken}", "-dryRun"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode != 0 and "metrics_paths" in bad.stderr  # the check can fail
    jobs = {j["job_name"] for j in yaml.safe_load(broken.read_text())["scrape_configs"]}
    assert {"ndbinfo", "galera", "galera_tracker", "loadgen"} <= jobs  # what rules select


@pytest.mark.tools("amtool", "python")
def test_alertmanager_reads_what_the_inventory_writes(models, secrets_dir, tmp_path) -> None:
    """Compose's Alertmanager reads the file the inventory writes from the description's
    `alerting:` section (a shared volume), its receivers' credentials from
    secrets/alerting/, and the inventory reloads it there. Run as compose runs the inventory
    (its own flags, paths under tmp), the result passes the pinned Alertmanager's amtool."""
    svc = models["default"]["services"]
    inv_vols = {v["target"]: v for v in svc["inventory"]["volumes"]}
    am_vols = {v["target"]: v for v in svc["alertmanager"]["volumes"]}
    flags = dict(a.split("=", 1) for a in svc["inventory"]["command"] if "=" in a)
    written = Path(flags["--alertmanager.config-file"])
    read = next(a.split("=", 1)[1] for a in svc["alertmanager"]["command"]
                if a.startswith("--config.file="))
    shared = inv_vols[str(written.parent)]
    assert shared["type"] == "volume" and not shared.get("read_only")
    assert am_vols[str(Path(read).parent)]["source"] == shared["source"]
    assert am_vols[str(Path(read).parent)]["read_only"] and Path(read).name == written.name
    assert flags["--alertmanager.url"] == "http://alertmanager:9093"
    secrets = am_vols[flags["--alertmanager.secrets-dir"]]
    assert secrets["source"] == str(secrets_dir / "alerting") and secrets["read_only"]
    assert svc["alertmanager"]["depends_on"]["inventory"]["condition"] == "service_healthy"
    assert "secrets" not in svc["alertmanager"]  # no URL in a Compose secret any more
    pinned = svc["alertmanager"]["image"]
    assert pinned.endswith(":" + gotools.TOOLS["amtool"].version)
    # the inventory as compose runs it, on the README's `alerting:` example
    import test_alertmanager

    desc = tmp_path / "clusterscope.yml"
    desc.write_text(yaml.safe_dump({"clusters": [test_alertmanager.CLUSTER],
                                    "alerting": test_alertmanager.readme_alerting()}))
    out = tmp_path / "alertmanager.yml"
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from clusterscope_inventory.description import load;"
         " from clusterscope_inventory.alerting import ConfigWriter;"
         " ConfigWriter(sys.argv[2], sys.argv[3]).update(load(sys.argv[1]).alerting)",
         str(desc), str(out),
         str(test_alertmanager.secret_files(tmp_path, test_alertmanager.readme_alerting()))],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    amtool = gotools.path_of("amtool")
    proc = subprocess.run([str(amtool), "check-config", str(out)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the README's two receivers, the heartbeat and `nobody` (info); causes and symptoms
    assert " - 4 receivers" in proc.stdout
    assert f" - {len(alertmanager.INHIBIT)} inhibit rules" in proc.stdout


def test_node_exporter_watches_the_docker_host(models) -> None:
    """Profiles host and lab: the host's filesystems (its root read-only under /host), not
    the container's; the lab description names it for every node."""
    ne = models["lab"]["services"]["node-exporter"]
    assert "--path.rootfs=/host" in ne["command"] and ne["pid"] == "host"
    vols = {v["target"]: v for v in ne["volumes"]}
    assert vols["/host"]["source"] == "/" and vols["/host"]["read_only"]
    assert "node-exporter" not in models["default"]["services"]
    desc = yaml.safe_load((EXAMPLES / "lab/clusters/clusterscope.yml").read_text())
    hosts = {n.get("node_exporter") for c in desc["clusters"] for n in c["nodes"]
             if n.get("role") != "mgmd"}
    assert hosts == {"node-exporter:9100"}
