"""The log pipeline and Loki's configuration, shared by the lab and the Compose deployment.

`pipeline_stages()` are promtail stages (Grafana Alloy runs the same file with
`--config.format=promtail`) built from the formats in `clusterscope.logs.formats`;
`loki_config_at()` is Loki's single-binary configuration with the paths and ports given.
The lab (`clusterscope.lab.logs`) and `clusterscope.deploy.compose` both call these, so the
deployment parses and stores logs exactly as the lab that tests it.
"""

from __future__ import annotations

from pathlib import Path

from clusterscope.logs import formats as lf


def loki_config_at(home: Path, listen: str, http_port: int, grpc_port: int) -> dict:
    """Loki's single-binary configuration (the lab's, and compose's with its own paths)."""
    return {
        "auth_enabled": False,
        "analytics": {"reporting_enabled": False},
        "server": {
            "http_listen_address": listen, "http_listen_port": http_port,
            "grpc_listen_address": listen, "grpc_listen_port": grpc_port,
            "log_level": "warn",
        },
        "common": {
            "instance_addr": "127.0.0.1",
            "path_prefix": str(home),
            "replication_factor": 1,
            "ring": {"kvstore": {"store": "inmemory"}},
            "storage": {"filesystem": {"chunks_directory": str(home / "chunks"),
                                       "rules_directory": str(home / "rules")}},
        },
        "ingester": {
            # A lab Loki is alone in its ring: ready at once, and the WAL keeps what it
            # held in memory across a crash.
            "lifecycler": {"min_ready_duration": "0s", "final_sleep": "0s"},
            "wal": {"enabled": True, "dir": str(home / "wal")},
        },
        # Alone, Loki finds its own query scheduler without the scheduler ring; with the
        # ring it waits ~10 s for the ring to settle before it is ready.
        "query_scheduler": {"use_scheduler_ring": False},
        "schema_config": {"configs": [{
            "from": "2024-01-01", "store": "tsdb", "object_store": "filesystem",
            "schema": "v13", "index": {"prefix": "index_", "period": "24h"},
        }]},
        "limits_config": {
            "reject_old_samples": True, "reject_old_samples_max_age": "168h",
            # a restart burst or a catch-up after Loki was down must not be throttled
            "ingestion_rate_mb": 16, "ingestion_burst_size_mb": 32,
            "allow_structured_metadata": True, "volume_enabled": True,
        },
        "query_range": {"results_cache": {"cache": {"embedded_cache": {
            "enabled": True, "max_size_mb": 32}}}},
        "compactor": {"working_directory": str(home / "compactor")},
    }



def format_stages(fmt: str, zone: str | None, selector: str) -> list[dict]:
    """Promtail stages that parse one format (applied only to lines it selects)."""
    spec = lf.FORMATS[fmt]
    inner: list[dict] = [{"regex": {"expression": spec["regex"]}}]
    if spec.get("timestamp_template"):
        inner.append({"template": {"source": spec["timestamp_source"],
                                   "template": lf.timestamp_template(fmt)}})
    if spec.get("layout"):
        ts: dict = {"source": spec["timestamp_source"], "format": spec["layout"],
                    "action_on_failure": "skip"}
        if spec.get("local_time") and zone:
            ts["location"] = zone
        inner.append({"timestamp": ts})
    inner.append({"template": {"source": "level", "template": lf.level_template()}})
    inner.append({"labels": {"level": "level"}})
    if spec.get("labels"):
        # an empty capture would become an empty label: label only the lines that have it
        has_them = _logql_string(spec["labels_select"])
        inner.append({"match": {"selector": f"{{{selector}}} |~ {has_them}",
                                "stages": [{"labels": spec["labels"]}]}})
    return inner


def _logql_string(text: str) -> str:
    # promtail's match selector takes no backtick strings: quote and escape
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# A log line wrapped by a container log pipeline, unwrapped before anything else reads it:
# - CRI (kubelet, containerd): `<RFC3339Nano> <stdout|stderr> <F|P> <line>`, P = a partial
#   line the next ones complete (kubernetes design proposal node/kubelet-cri-logging.md);
#   promtail's `cri` stage joins the partials;
# - JSON with the line in `log` (the Percona Operator's log collector, docker's json-file
#   driver), e.g. {"log":"2023-05-25T04:38:02.457961Z 0 [Note] ... JOINER\n","file":...}
#   (percona/percona-toolkit pt-galera-log-explainer tests/logs/operator_*): the `log`
#   value keeps its newline, which the format regexes must not see.
# The galera tracker reads the same wrappings (exporters/galera_tracker/wrapped.py).
CRI_LINE = r"^\d{4}-\d{2}-\d{2}T\S+ (stdout|stderr) [FP] "
JSON_LINE = r'^\{.*"log":'


def unwrap_stages() -> list[dict]:
    return [
        {"match": {"selector": f'{{component=~".+"}} |~ {_logql_string(CRI_LINE)}',
                   "stages": [{"cri": {}}]}},
        {"match": {"selector": f'{{component=~".+"}} |~ {_logql_string(JSON_LINE)}',
                   "stages": [{"json": {"expressions": {"log": "log"}}},
                              {"template": {"source": "log",
                                            "template": '{{ TrimSuffix .Value "\\n" }}'}},
                              {"output": {"source": "log"}}]}},
    ]


def pipeline_stages(zone: str | None = "Local") -> list[dict]:
    """The whole pipeline: wrapped lines unwrapped, then per component the formats its log
    may hold."""
    stages: list[dict] = unwrap_stages()
    for component, firstline in lf.MULTILINE_FIRSTLINE.items():
        stages.append({"match": {"selector": f'{{component="{component}"}}', "stages": [
            {"multiline": {"firstline": firstline, "max_wait_time": lf.MULTILINE_MAX_WAIT}}]}})
    known = "|".join(sorted(lf.COMPONENT_FORMATS))
    per_component = [(f'component="{c}"', fmts) for c, fmts in lf.COMPONENT_FORMATS.items()]
    for selector, fmts in [*per_component, (f'component!~"{known}"', lf.DEFAULT_FORMATS)]:
        for fmt in fmts:
            line_filter = _logql_string(lf.FORMATS[fmt]["regex"])
            stages.append({"match": {
                "selector": f"{{{selector}}} |~ {line_filter}",
                "stages": format_stages(fmt, zone, selector)}})
    return stages
