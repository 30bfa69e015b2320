"""The simulated cluster's configuration parameters (what `ndbinfo.config_params` and
`config_values` serve) and how a change reaches the data nodes. SIMULATED.

The parameters, their numbers, types, defaults and ranges are mysql-server's
(storage/ndb/include/mgmapi/mgmapi_config_parameters.h @017caf3e5fec: CFG_DB_NO_REPLICAS
101, CFG_DB_NO_TRANSACTIONS 106, CFG_DB_DATA_MEM 112, CFG_DB_LCP_INTERVAL 120;
storage/ndb/src/mgmsrv/ConfigInfo.cpp @0c7ecc00df4f for names, descriptions and ranges; the
rows of 101, 106 and 112 as mysql-test/suite/ndb/r/ndbinfo.result @01077b45b175 shows
them). A data node reports the configuration it started with: a new value written to the
management server's configuration (a new config generation) reaches a data node when it
restarts, as a rolling restart applies a config.ini edit; `now` gives it to every running
data node at once (a rolling restart already done).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# number, name, description, type, default, min, max, mandatory, status
PARAMS: tuple[tuple, ...] = (
    (101, "NoOfReplicas", "Number of copies of all data in the database", "unsigned", "2",
     "1", "4", 0, "used"),
    (106, "MaxNoOfConcurrentTransactions", "Max number of transaction executing concurrently"
     " on the DB node", "unsigned", "4096", "32", "4294967039", 0, "used"),
    (112, "DataMemory", "Number bytes on each DB node allocated for storing data", "unsigned",
     "102760448", "1048576", "1099511627776", 0, "used"),
    (120, "TimeBetweenLocalCheckpoints", "Time between taking snapshots of the database"
     " (expressed in 2log of bytes)", "unsigned", "20", "0", "31", 0, "used"),
)
BY_NAME = {p[1]: p for p in PARAMS}


@dataclass
class Config:
    """The management server's configuration and what each data node runs with."""

    wanted: dict[str, str]                      # param name -> value (config.ini)
    generation: int = 1
    running: dict[int, tuple[int, dict[str, str]]] = field(default_factory=dict)

    @classmethod
    def initial(cls, data_nodes: list[int], values: dict[str, str]) -> Config:
        wanted = {p[1]: values.get(p[1], p[4]) for p in PARAMS}
        return cls(wanted, 1, {n: (1, dict(wanted)) for n in data_nodes})

    def set(self, name: str, value: str, now: bool, live: list[int]) -> dict:
        """A new value in the management server's configuration; every running data node
        takes it with `now`, else each at its next restart."""
        param = BY_NAME.get(name)
        if param is None:
            raise ValueError(f"no simulated parameter {name!r}; it has: "
                             + ", ".join(BY_NAME))
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"{name} takes a whole number, got {value!r}") from None
        if not int(param[5]) <= number <= int(param[6]):
            raise ValueError(f"{name} {number} is outside {param[5]}..{param[6]}")
        self.wanted[name] = str(number)
        self.generation += 1
        if now:
            for node in live:
                self.restarted(node)
        return {"param": name, "value": str(number), "generation": self.generation,
                "applied_to": sorted(live) if now else []}

    def restarted(self, node: int) -> None:
        """A data node (re)starts with the current configuration."""
        self.running[node] = (self.generation, dict(self.wanted))

    def of(self, node: int) -> tuple[int, dict[str, str]]:
        return self.running.get(node, (self.generation, self.wanted))

    def rows(self, live: list[int]) -> tuple[list[tuple], list[tuple]]:
        """(config_params rows, config_values rows of the live data nodes)."""
        values = [(n, p[0], self.of(n)[1][p[1]]) for n in live for p in PARAMS]
        return [p[:9] for p in PARAMS], values
