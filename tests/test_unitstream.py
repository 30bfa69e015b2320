"""The change alert's input: each completed unit summed once into counters from which any
period's number of units, mean overhead and standard error follow exactly."""

from __future__ import annotations

import math
import statistics

from clusterscope_loadgen.estimators import Unit, mean_t
from clusterscope_loadgen.metrics import Metrics
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

LABELS = {"experiment": "fk", "variant": "fk2", "baseline": "nofk", "cluster": "c",
          "engine": "galera", "target": "t"}


def _samples(m: Metrics) -> dict[str, float]:
    out = {}
    for fam in text_string_to_metric_families(generate_latest(m.registry).decode()):
        for s in fam.samples:
            if s.name.startswith("loadgen_unit_tps_ratio") and not s.name.endswith("_created"):
                out[s.name] = s.value
    return out


class Run:  # stands in for a Runner: units are numbered per run
    pass


def _labels(m: Metrics) -> dict[str, str]:
    return {k: LABELS.get(k, "x") for k in m.units.ratio._labelnames}


def test_each_unit_counts_once_and_a_new_run_numbers_afresh() -> None:
    m = Metrics()
    lab = _labels(m)
    first, second = Run(), Run()
    assert m.units.publish(first, "fk2", lab, [Unit(1, 100, 90), Unit(2, 100, 80)]) == 2
    # the next round's estimate sees the same units again, plus one
    assert m.units.publish(first, "fk2", lab, [Unit(1, 100, 90), Unit(2, 100, 80),
                                               Unit(3, 100, 100)]) == 1
    # the cycle's next turn is a new run whose rounds start at 1 again
    assert m.units.publish(second, "fk2", lab, [Unit(1, 100, 110)]) == 1
    got = _samples(m)
    assert got["loadgen_unit_tps_ratio_count"] == 4
    assert math.isclose(got["loadgen_unit_tps_ratio_sum"], 0.9 + 0.8 + 1.0 + 1.1)
    assert math.isclose(got["loadgen_unit_tps_ratio_squares_total"],
                        0.81 + 0.64 + 1.0 + 1.21)


def test_the_counters_give_the_estimators_mean_and_standard_error() -> None:
    """A negative overhead (the variant faster) must not make a counter fall, and the
    period statistics the rule computes from the counters equal mean-t's."""
    m = Metrics()
    units = [Unit(i, 1000.0, v) for i, v in enumerate([950, 1010, 870, 990, 1040, 905], 1)]
    m.units.publish(Run(), "fk2", _labels(m), units)
    got = _samples(m)
    n, s, q = (got["loadgen_unit_tps_ratio_count"], got["loadgen_unit_tps_ratio_sum"],
               got["loadgen_unit_tps_ratio_squares_total"])
    est = mean_t(units)
    assert math.isclose(1 - s / n, est.mean)
    se = math.sqrt((q - s * s / n) / ((n - 1) * n))
    overheads = [u.overhead for u in units]
    assert math.isclose(se, statistics.stdev(overheads) / math.sqrt(len(units)), rel_tol=1e-9)
