"""The intervals `compare` prints: t quantiles and Welch intervals against textbook values."""

from __future__ import annotations

import math

import pytest

from clusterscope.stats import Summary, paired, t_quantile, welch


@pytest.mark.parametrize(("df", "expected"), [(1, 12.706), (2, 4.303), (10, 2.228),
                                              (30, 2.042), (1000, 1.962)])
def test_t_quantile_matches_the_t_table(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-3)


def test_welch_interval_matches_a_hand_computation() -> None:
    before, after = [10.0, 12.0, 11.0, 13.0], [14.0, 15.0, 13.0, 16.0, 15.0]
    d = welch(Summary.of(before), Summary.of(after))
    # means 11.5 / 14.6; variances 1.667 / 1.3; se = sqrt(1.667/4 + 1.3/5) = 0.8226
    assert d.diff == pytest.approx(3.1)
    half = (d.high - d.low) / 2
    assert half / 0.8226 == pytest.approx(t_quantile(0.975, d.df), rel=1e-3)
    assert 6.0 < d.df < 7.0 and d.significant


def test_overlapping_samples_are_not_significant_and_tiny_samples_have_no_interval() -> None:
    assert not welch(Summary.of([1, 2, 3, 4]), Summary.of([2, 3, 4, 5])).significant
    lone = welch(Summary.of([1.0]), Summary.of([2.0, 3.0]))
    assert math.isnan(lone.low) and not lone.significant
    est = paired([1.1, 0.9, 1.0, 1.2, 0.8])
    assert est.mean == pytest.approx(1.0)
    assert est.low < est.mean < est.high


def test_a_series_of_alike_neighbours_is_compared_with_its_own_noise() -> None:
    """Two periods of a quantity whose neighbours are alike (AR(1), rho 0.5) and no change
    between them: Welch on independent-sample SEs finds a change far more often than 5%;
    with the series' own SE (Newey-West) about as often as it says."""
    import random

    rng = random.Random(4)

    def series(n: int) -> list[float]:
        x, out = 0.0, []
        for _ in range(n):
            x = 0.5 * x + rng.gauss(0.0, 1.0)
            out.append(x)
        return out

    plain = serial = 0
    reps = 250
    for _ in range(reps):
        a, b = series(80), series(80)
        plain += welch(Summary.of(a), Summary.of(b)).significant
        serial += welch(Summary.of(a, serial=True), Summary.of(b, serial=True)).significant
    assert plain / reps > 0.15
    assert serial / reps < 0.10
