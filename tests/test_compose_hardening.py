"""Every service of compose/ runs without root and without capabilities: the real Compose
v2's model of each way users run it (the default profiles with the loadgen, the lab, the
scale-out override)."""

from __future__ import annotations

import json

import pytest
from lanes import starts
from test_compose import BASE, SCALE, run_config


@pytest.fixture(scope="module")
@starts("docker-compose")
def models(secrets_dir) -> dict[str, dict]:
    env = {"COMPOSE_PROFILES": "ndb,galera,loadgen", "LOADGEN_CLUSTER": "staging-galera"}
    return {"default": json.loads(run_config(secrets_dir, env=env).stdout),
            "lab": json.loads(run_config(secrets_dir, shape="lab").stdout),
            "scale": json.loads(run_config(secrets_dir, files=(BASE, SCALE)).stdout)}


# The lab profile's database images (they start as root and drop to mysql themselves) and
# its one-shot that hands the log directory to mysql: the clusters to watch, not the stack.
LAB_DB = {"ndb-mgmd", "ndb-data1", "ndb-data2", "ndb-sql", "ndb-sql2", "galera-node1",
          "galera-node2", "galera-node3"}
# Grafana installs its plugin at start; what else its image writes is not checked here
WRITABLE = {"grafana"}


@pytest.mark.parametrize("model", ["default", "lab", "scale"])
def test_every_service_runs_without_root_or_capabilities(models, model) -> None:
    for name, svc in models[model]["services"].items():
        assert "no-new-privileges:true" in svc.get("security_opt", []), name
        if name in LAB_DB:
            continue
        if name == "galera-logs-init":  # root, with the two capabilities a chown takes
            assert svc["cap_drop"] == ["ALL"] and set(svc["cap_add"]) == {"CHOWN", "FOWNER"}
            continue
        user = str(svc.get("user", ""))
        assert user and user.split(":")[0] not in ("0", "root"), (name, user)
        assert svc.get("cap_drop") == ["ALL"] and not svc.get("cap_add"), name
        assert bool(svc.get("read_only")) is (name not in WRITABLE), name
        if svc.get("read_only"):
            assert any(t.startswith("/tmp") for t in svc.get("tmpfs", [])), name
