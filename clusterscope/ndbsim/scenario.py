"""Scenario files: the simulated cluster's shape, data size and load (YAML)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

SCENARIO_DIR = Path(__file__).parent / "scenarios"
THREAD_ORDER = ("main", "rep", "ldm", "tc", "recv", "send")


@dataclass
class Scenario:
    name: str
    description: str
    version: str
    time_scale: float
    data_nodes: list[int]
    replicas: int
    mgm_nodes: list[int]
    sql_nodes: list[int]
    free_api_slots: list[int]
    threads: dict[str, int]
    tables: int
    # NOLOGGING tables (of `tables`): never checkpointed, so never counted in an LCP's work
    nologging_tables: int
    data_gb_per_node: float
    data_memory_gb: float
    redo_log_parts: int
    redo_part_bytes: int
    redo_buffer_bytes: int
    disk_write_speed_per_ldm: float
    partial_lcp_fraction: float
    ops_per_sec: float
    read_ratio: float
    ops_per_transaction: float
    row_bytes: int
    ldm_ops_capacity: float
    tc_ops_capacity: float
    path: str = ""
    # share of the operations that touch disk data columns (through the disk page buffer);
    # the buffer (DiskPageBufferMemory, shared by the LDMs' PGMANs and one extra) against the
    # disk data pages those operations touch per node: how many find their page resident
    disk_data_share: float = 0.1
    disk_page_buffer_mb: float = 1024.0
    disk_data_working_set_mb: float = 800.0

    @property
    def node_groups(self) -> int:
        return len(self.data_nodes) // self.replicas

    @property
    def ldm(self) -> int:
        return self.threads["ldm"]

    def group_of(self, node: int) -> int:
        return self.data_nodes.index(node) // self.replicas

    def group_nodes(self, group: int) -> list[int]:
        return self.data_nodes[group * self.replicas:(group + 1) * self.replicas]


def resolve(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") and p.exists():
        return p.resolve()
    builtin = SCENARIO_DIR / f"{name_or_path}.yaml"
    if builtin.exists():
        return builtin
    known = ", ".join(sorted(f.stem for f in SCENARIO_DIR.glob("*.yaml")))
    raise ValueError(f"no scenario {name_or_path!r}: give a YAML file or one of: {known}")


def load(name_or_path: str) -> Scenario:
    path = resolve(name_or_path)
    raw = yaml.safe_load(path.read_text())
    c, d, ld = raw["cluster"], raw["data"], raw["load"]
    n = int(c["data_nodes"])
    replicas = int(c.get("replicas", 2))
    if n % replicas:
        raise ValueError(f"{path}: data_nodes ({n}) must be a multiple of replicas ({replicas})")
    threads = {k: int(c.get("threads", {}).get(k, 1 if k in ("main", "rep") else 0))
               for k in THREAD_ORDER}
    if threads["ldm"] < 1:
        raise ValueError(f"{path}: at least one ldm thread is needed")
    return Scenario(
        name=str(raw.get("name", path.stem)), description=str(raw.get("description", "")),
        version=str(raw.get("version", "7.6")), time_scale=float(raw.get("time_scale", 1)),
        data_nodes=list(range(1, n + 1)), replicas=replicas,
        mgm_nodes=[int(x) for x in c.get("mgm_nodes", [49])],
        sql_nodes=[int(x) for x in c.get("sql_nodes", [50])],
        free_api_slots=[int(x) for x in c.get("free_api_slots", [])],
        threads=threads, tables=int(c.get("tables", 16)),
        nologging_tables=int(c.get("nologging_tables", 0)),
        data_gb_per_node=float(d["data_gb_per_node"]),
        data_memory_gb=float(d.get("data_memory_gb", d["data_gb_per_node"] * 1.2)),
        redo_log_parts=int(d.get("redo_log_parts", 4)),
        redo_part_bytes=int(d.get("redo_part_bytes", 1 << 30)),
        redo_buffer_bytes=int(d.get("redo_buffer_bytes", 32 << 20)),
        disk_write_speed_per_ldm=float(d.get("disk_write_speed_per_ldm", 12e6)),
        partial_lcp_fraction=float(d.get("partial_lcp_fraction", 0.2)),
        ops_per_sec=float(ld.get("ops_per_sec", 10000)),
        read_ratio=float(ld.get("read_ratio", 0.8)),
        ops_per_transaction=float(ld.get("ops_per_transaction", 4)),
        row_bytes=int(ld.get("row_bytes", 200)),
        ldm_ops_capacity=float(ld.get("ldm_ops_capacity", 8000)),
        tc_ops_capacity=float(ld.get("tc_ops_capacity", 15000)), path=str(path),
        disk_data_share=float(d.get("disk_data_share", 0.1)),
        disk_page_buffer_mb=float(d.get("disk_page_buffer_mb", 1024)),
        disk_data_working_set_mb=float(d.get("disk_data_working_set_mb", 800)))
