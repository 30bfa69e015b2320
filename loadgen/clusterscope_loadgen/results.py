"""What a run produces: one record per window, and the row book of a written table.

Its own module so the metrics (which publish windows) and the runner (which makes them)
both depend on it and not on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterscope_loadgen.sysbench import Result


@dataclass
class WindowResult:
    experiment: str
    variant: str
    seq: int
    start: float
    end: float
    threads: int
    run: Result = field(default_factory=Result)  # what sysbench reported for the window
    throughput: float = 0.0  # rows (or events) per second
    cpu_cores: float = 0.0
    saturated: bool = False
    valid: bool = True
    reasons: list[str] = field(default_factory=list)
    warmup: bool = False
    interleaved: bool = False  # shared its window with the other variants of its group
    mean_latency: float = 0.0  # mean step latency (seconds) timed by the Lua script
    delay_seconds: float = 0.0  # mean injected calibration delay per step (delay_us)

    @property
    def tps(self) -> float:
        return self.run.tps

    @property
    def qps(self) -> float:
        return self.run.qps

    @property
    def latency(self) -> dict[float, float]:
        return self.run.latency

    @property
    def transactions(self) -> int:
        return self.run.transactions

    @property
    def errors(self) -> int:
        return self.run.errors

    @property
    def reconnects(self) -> int:
        return self.run.reconnects

    @property
    def stale(self) -> int:
        return self.run.stale

    @property
    def committed(self) -> int:
        return self.run.committed

    @property
    def p95(self) -> float:
        return self.latency.get(0.95, 0.0)

    def as_dict(self) -> dict:
        """The window as the JSON output (`--json-out`) writes it."""
        return {"experiment": self.experiment, "variant": self.variant, "seq": self.seq,
                "start": self.start, "end": self.end, "threads": self.threads,
                "tps": self.tps, "qps": self.qps, "throughput": self.throughput,
                "latency": {str(k): v for k, v in self.latency.items()},
                "transactions": self.transactions, "errors": self.errors,
                "reconnects": self.reconnects, "stale": self.stale,
                "committed": self.committed, "cpu_cores": self.cpu_cores,
                "saturated": self.saturated, "valid": self.valid,
                "reasons": list(self.reasons), "warmup": self.warmup,
                "interleaved": self.interleaved, "mean_latency": self.mean_latency,
                "delay_seconds": self.delay_seconds}


@dataclass
class RowBook:
    """Rows a written table should hold: [low, high]; the gap is ambiguous commits."""

    low: int
    high: int
    rebase: str = ""  # why the book had to be re-read from the table, if it did
