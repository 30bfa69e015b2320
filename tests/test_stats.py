"""The intervals `compare` and the A/B calibration benches print: t quantiles, Welch
intervals, exact binomial intervals, the var(z) band and Fieller's ratio interval, against
textbook values and closed forms."""

from __future__ import annotations

import math

import pytest

from clusterscope.inference import (
    Summary,
    clopper_pearson,
    fieller,
    paired,
    poisson_interval,
    t_quantile,
    variance_band,
    welch,
)


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


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (5, 10, 0.1871, 0.8129),   # the textbook example (Clopper and Pearson's tables)
    (1, 20, 0.0013, 0.2487),
    (10, 200, 0.0242, 0.0900),  # 10 false positives in 200 runs: below a 10 % rate
    (12, 200, 0.0314, 0.1024),  # 12 in 200: a 10 % rate not excluded
])
def test_clopper_pearson_matches_tables(k: int, n: int, low: float, high: float) -> None:
    got = clopper_pearson(k, n)
    assert got == pytest.approx((low, high), abs=1e-4)


@pytest.mark.parametrize("n", [1, 20, 200, 1000])
def test_clopper_pearson_at_the_ends_is_the_closed_form(n: int) -> None:
    # k = 0: (1 - p)^n = 0.025; k = n: p^n = 0.025
    assert clopper_pearson(0, n) == pytest.approx((0.0, 1 - 0.025 ** (1 / n)), abs=1e-9)
    assert clopper_pearson(n, n) == pytest.approx((0.025 ** (1 / n), 1.0), abs=1e-9)


def test_clopper_pearson_refuses_impossible_counts() -> None:
    for k, n in ((3, 2), (-1, 5), (0, 0)):
        with pytest.raises(ValueError):
            clopper_pearson(k, n)


@pytest.mark.parametrize(("n", "low", "high"), [
    # chi-square table: 2.5 % and 97.5 % points over the degrees of freedom
    (20, 8.907 / 19, 32.852 / 19), (48, 29.956 / 47, 67.821 / 47), (200, 161.826 / 199,
                                                                    239.960 / 199)])
def test_variance_band_matches_the_chi_square_table(n: int, low: float, high: float) -> None:
    assert variance_band(n) == pytest.approx((low, high), rel=0.01)


def test_fieller_with_an_exact_denominator_is_the_numerator_interval_scaled() -> None:
    r = fieller(10.0, 8.0, 12.0, 20.0, 20.0, 20.0)
    assert (r.ratio, r.low, r.high) == pytest.approx((0.5, 0.4, 0.6))


def test_fieller_is_wider_than_the_naive_ratio_and_unbounded_for_a_null_denominator() -> None:
    r = fieller(10.0, 8.0, 12.0, 20.0, 18.0, 22.0)
    assert r.low < 8.0 / 20.0 * 1.0 and r.high > 12.0 / 20.0  # both errors count
    assert r.low < 0.5 < r.high
    loose = fieller(10.0, 8.0, 12.0, 1.0, -2.0, 4.0)  # the denominator may be 0
    assert (loose.low, loose.high) == (-math.inf, math.inf)
    assert math.isnan(fieller(1.0, math.nan, math.nan, 2.0, 1.0, 3.0).low)


@pytest.mark.parametrize(("k", "low", "high"), [
    # Garwood's exact Poisson limits, as tabled (e.g. Ulm 1990)
    (0, 0.0, 3.689), (1, 0.0253, 5.572), (5, 1.623, 11.668), (10, 4.795, 18.390)])
def test_poisson_interval_matches_the_table(k: int, low: float, high: float) -> None:
    assert poisson_interval(k) == pytest.approx((low, high), abs=1e-3)


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
