"""Render every dashboard to `dashboards/json/<uid>.json` and check the committed files.

The output is deterministic (sorted keys, fixed panel ids and refIds), so `check` can
compare text: a stale file means someone edited the generator without regenerating, or
edited the JSON by hand.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from grafana_foundation_sdk.builders.dashboard import Dashboard
from grafana_foundation_sdk.cog.encoder import JSONEncoder

from clusterscope.dashboards.experiments import experiments
from clusterscope.dashboards.galera_dashboard import galera
from clusterscope.dashboards.logs_dashboard import logs
from clusterscope.dashboards.ndb_dashboard import data_node, overview, restarts
from clusterscope.paths import REPO

OUT_DIR = REPO / "dashboards" / "json"
BUILDERS: list[Callable[[], Dashboard]] = [overview, data_node, restarts, galera,
                                           experiments, logs]


def build_all() -> dict[str, dict]:
    """uid -> dashboard JSON model."""
    out: dict[str, dict] = {}
    for make in BUILDERS:
        model = json.loads(JSONEncoder(sort_keys=True).encode(make().build()))
        _number_panels(model)
        out[model["uid"]] = model
    return out


def _number_panels(model: dict) -> None:
    # Grafana needs unique panel ids for links to panels (viewPanel=N); the SDK leaves them 0.
    next_id = 1
    for panel in model.get("panels", []):
        panel["id"] = next_id
        next_id += 1
        for inner in panel.get("panels", []):
            inner["id"] = next_id
            next_id += 1


def render(model: dict) -> str:
    return json.dumps(model, indent=2, sort_keys=True) + "\n"


def expected_files(out_dir: Path = OUT_DIR) -> dict[Path, str]:
    return {out_dir / f"{uid}.json": render(model) for uid, model in build_all().items()}
