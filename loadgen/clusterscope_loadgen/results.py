"""What a run produces: one record per window, and the row book of a written table.

Its own module so the metrics (which publish windows) and the runner (which makes them)
both depend on it and not on each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterscope_loadgen.stats import SlotMeasure
from clusterscope_loadgen.sysbench import Result, VariantRun


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
    client_cpu: float = 0.0  # mean client CPU seconds per step (the Lua thread's own)
    design: str = ""
    estimand: str = ""
    slots: tuple[SlotMeasure, ...] = ()  # time-sliced: every slot of the window's group
    k: int = 0  # time-sliced: variants in the group (slots per unit)
    slot_seconds: float = 0.0
    washout_seconds: float = 0.0
    rows: dict[str, int] = field(default_factory=dict)  # written tables' rows at its start
    status: dict[str, dict[str, float]] = field(default_factory=dict)  # per node, target.py
    polls: int = 0  # in-window health polls answered (nodewatch.py)
    polls_failed: int = 0

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
                "delay_seconds": self.delay_seconds, "client_cpu": self.client_cpu,
                "design": self.design,
                "estimand": self.estimand, "rows": dict(self.rows),
                "status": {k: dict(v) for k, v in self.status.items()},
                "polls": self.polls, "polls_failed": self.polls_failed,
                "k": self.k, "slot_seconds": self.slot_seconds,
                "washout_seconds": self.washout_seconds,
                "slots": [{"index": s.index, "variant": s.variant, "end": s.end,
                           "throughput": s.throughput, "p95": s.p95, "complete": s.complete}
                          for s in self.slots]}


@dataclass
class RowBook:
    """Rows a written table should hold: [low, high]; the gap is ambiguous commits."""

    low: int
    high: int
    rebase: str = ""  # why the book had to be re-read from the table, if it did


def variant_share(res: Result, name: str, threads: int, rate: float | None = None) -> Result:
    """A variant's share of a shared window as a sysbench result of its own: its steps,
    rows, stale reads and latencies; errors and exit status of the window. Its rate:
    `rate` (events per second; time-sliced: over its measured slots) or, interleaved,
    threads / its mean step latency: the relative per-statement latency in a mixed load
    turned into a rate, the mixed_statement estimand, not a whole-workload rate."""
    vr = res.variants.get(name, VariantRun())
    if rate is not None:
        per_s = rate / vr.steps if vr.steps else 0.0
    else:
        per_s = threads / vr.seconds if vr.seconds > 0 else 0.0
    return Result(
        transactions=vr.steps, tps=vr.steps * per_s, queries=vr.queries,
        qps=vr.queries * per_s, writes=res.writes, errors=res.errors,
        reconnects=res.reconnects, total_time=res.total_time, latency=vr.latency,
        committed=vr.rows, stale=vr.stale, threads_reported=res.threads_reported,
        fatal=res.fatal, exit_code=res.exit_code, cpu_seconds=res.cpu_seconds,
        wall_seconds=res.wall_seconds, variants={name: vr})
