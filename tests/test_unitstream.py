"""The change alert's input: each completed unit summed once into counters from which any
period's units, ratio-of-means overhead and its standard error follow, the same figures
the loadgen's default estimator gives on those units."""

from __future__ import annotations

import math
import random

import pytest
import yaml
from clusterscope_loadgen.estimators import Unit, ratio_spread
from clusterscope_loadgen.metrics import Metrics
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from rules_scenarios import metric, promtool_test

from clusterscope.bench import alarm_replica as replica
from clusterscope.rules.loadgen import period_records

LABELS = {"experiment": "fk", "variant": "fk2", "baseline": "nofk", "cluster": "c",
          "engine": "galera", "target": "t", "estimand": "whole_workload"}
NAMES = ("loadgen_units_total", "loadgen_unit_variant_rows_per_second_total",
         "loadgen_unit_baseline_rows_per_second_total",
         "loadgen_unit_variant_rows_per_second_squares_total",
         "loadgen_unit_baseline_rows_per_second_squares_total",
         "loadgen_unit_rows_per_second_products_total")


def _exposition(m: Metrics) -> list[tuple[str, dict[str, str], float]]:
    """The unit counters' samples as /metrics serves them."""
    out = []
    for fam in text_string_to_metric_families(generate_latest(m.registry).decode()):
        for s in fam.samples:
            if s.name in NAMES:
                out.append((s.name, dict(s.labels), s.value))
    return out


def _samples(m: Metrics) -> dict[str, float]:
    return {name: v for name, _, v in _exposition(m)}


class Run:  # stands in for a Runner: units are numbered per run
    pass


def test_each_unit_counts_once_and_a_new_run_numbers_afresh() -> None:
    m = Metrics()
    first, second = Run(), Run()
    assert m.units.publish(first, "fk2", LABELS, [Unit(1, 100, 90), Unit(2, 100, 80)]) == 2
    # the next round's estimate sees the same units again, plus one
    assert m.units.publish(first, "fk2", LABELS, [Unit(1, 100, 90), Unit(2, 100, 80),
                                                  Unit(3, 200, 100)]) == 1
    # the cycle's next turn is a new run whose rounds start at 1 again; a unit without a
    # baseline throughput is no unit
    assert m.units.publish(second, "fk2", LABELS, [Unit(1, 100, 110), Unit(2, 0, 5)]) == 1
    got = _samples(m)
    assert got == {"loadgen_units_total": 4,
                   "loadgen_unit_variant_rows_per_second_total": 90 + 80 + 100 + 110,
                   "loadgen_unit_baseline_rows_per_second_total": 100 + 100 + 200 + 100,
                   "loadgen_unit_variant_rows_per_second_squares_total":
                       90 ** 2 + 80 ** 2 + 100 ** 2 + 110 ** 2,
                   "loadgen_unit_baseline_rows_per_second_squares_total":
                       3 * 100 ** 2 + 200 ** 2,
                   "loadgen_unit_rows_per_second_products_total":
                       90 * 100 + 80 * 100 + 100 * 200 + 110 * 100}


def _noisy_units(seed: int, n: int) -> list[Unit]:
    """Units like the lab's A/A: throughputs varying by about 34 %, the variant sometimes
    the faster (a negative overhead must not make a counter fall)."""
    rng = random.Random(seed)
    out = []
    for i in range(1, n + 1):
        b = 1500.0 * max(0.1, rng.gauss(1.0, 0.34))
        out.append(Unit(i, b, b * max(0.1, rng.gauss(0.97, 0.3)), at=float(i)))
    return out


def test_the_replica_reads_the_estimators_ratio_of_means_and_iid_se() -> None:
    """The rule's arithmetic as the replica evaluates it on scraped counters equals the
    loadgen's ratio-of-means estimator with a Newey-West lag of 0 on the same units; the
    mean of the units' ratios, which the counters used to carry, is another figure."""
    units = _noisy_units(3, 60)
    c = replica.scrape([(u.at, u.baseline, u.variant) for u in units], 120.0, 1.0)
    n, mean, se = replica.period(c, 120.0, 120.0) or (0, 0, 0)
    est = ratio_spread(units, lag=0)
    assert n == 60
    assert math.isclose(mean, est.mean, rel_tol=1e-9)
    assert math.isclose(se, est.se, rel_tol=1e-9)
    mean_of_ratios = 1 - sum(u.variant / u.baseline for u in units) / len(units)
    assert abs(mean_of_ratios - est.mean) > 0.02


@pytest.mark.tools("promtool")
def test_promtool_on_the_served_counters_gives_the_estimators_figures(tmp_path) -> None:
    """The generated records, evaluated by promtool on the counters as the loadgen's
    /metrics serves them, give the units, overhead and SE that estimators.ratio_spread
    (lag 0: i.i.d., as a rule must) computes from the units themselves."""
    m = Metrics()
    units = _noisy_units(5, 45)
    m.units.publish(Run(), "fk2", LABELS, units)
    scrape = {"job": "loadgen", "instance": "127.0.0.1:2"}
    # zero until the units land in the second minute, then their sums: increase() over
    # ten minutes from the zero sample is the sums themselves, no extrapolation
    series = [{"series": metric(name, {**labels, **scrape}),
               "values": " ".join(["0", "0"] + [repr(v)] * 10)}
              for name, labels, v in _exposition(m)]
    assert len(series) == len(NAMES)
    rules = tmp_path / "rules.yml"
    rules.write_text(yaml.safe_dump({"groups": [{"name": "experiments", "rules": [
        {"record": k, "expr": v} for k, v in period_records('job="loadgen"', "10m").items()]}]}))
    est = ratio_spread(units, lag=0)
    out = {k: v for k, v in LABELS.items() if k != "target"}
    checks = []
    for record, want in (("experiment_variant:loadgen_units:increase10m", est.n),
                         ("experiment_variant:loadgen_overhead_ratio:mean10m", est.mean),
                         ("experiment_variant:loadgen_overhead_ratio:se10m", est.se)):
        # agreement to 1e-9 relative, reported as 1 (promtool compares values exactly)
        checks.append({"expr": f"abs({record} - {want!r}) <= bool {abs(want) * 1e-9!r}",
                       "eval_time": "10m",
                       "exp_samples": [{"labels": metric("", out), "value": 1}]})
    promtool_test(tmp_path, series, checks, files=[rules], step=60)
