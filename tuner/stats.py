"""The statistics of run times that the tuner and `incflat bench` share: futhark bench's convergence rule, means
with their confidence intervals, and Welch's test of two means."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np

# futhark bench's convergence criteria: (lag-1 autocorrelation at least, relative standard error at most)
CONVERGENCE = ((0.95, 0.0010), (0.75, 0.0015), (0.65, 0.0025), (0.45, 0.0050), (0.00, 0.0100))


def relative_standard_error(runtimes: Sequence[float]) -> float:
    """The standard error of the runs' mean over the mean (at least two runs; 0 for a mean of 0)."""
    mean = statistics.fmean(runtimes)
    return statistics.stdev(runtimes) / math.sqrt(len(runtimes)) / mean if mean > 0 else 0.0


def converged(runtimes: Sequence[float]) -> bool:
    """Whether the mean of the runs is known well enough: the relative standard error against the bound that
    the runs' lag-1 autocorrelation asks for (correlated runs need a smaller error)."""
    n = len(runtimes)
    if n < 3:
        return False
    mean = statistics.fmean(runtimes)
    rse = relative_standard_error(runtimes)
    centred = np.asarray(runtimes) - mean
    denominator = float(np.dot(centred, centred))
    autocorrelation = float(np.dot(centred[:-1], centred[1:])) / denominator if denominator > 0 else 0.0
    for least, bound in CONVERGENCE:
        if autocorrelation >= least:
            return rse <= bound
    return rse <= CONVERGENCE[-1][1]


def mean_ci(runtimes: Sequence[float]) -> tuple[float, float, float]:
    """The mean and its 95% confidence interval (Student's t)."""
    from scipy import stats
    mean = statistics.fmean(runtimes)
    if len(runtimes) < 2:
        return mean, mean, mean
    half = stats.t.ppf(0.975, len(runtimes) - 1) * statistics.stdev(runtimes) / math.sqrt(len(runtimes))
    return mean, mean - half, mean + half


def welch_pvalue(a: Sequence[float], b: Sequence[float]) -> float:
    """The two-sided p-value of Welch's t-test that two samples have the same mean (nan with fewer than two
    values in either). Runs with no spread at all (a deterministic program) differ exactly when their means do."""
    if len(a) < 2 or len(b) < 2:
        return math.nan
    return mean_difference_test(statistics.fmean(a) - statistics.fmean(b), statistics.variance(a) / len(a), len(a),
                                statistics.variance(b) / len(b), len(b))[0]


def mean_difference_test(diff: float, va: float, na: int, vb: float, nb: int) -> tuple[float, float]:
    """For two means `diff` apart, with variances `va` and `vb` from `na` and `nb` values (two each at least): the
    two-sided p-value that they are equal and the half width of the difference's 95% interval (Student's t at
    the Welch-Satterthwaite degrees of freedom; computed here, not by scipy's ttest_ind, which warns of
    precision loss where one side has no spread). With no spread at all, they differ exactly when they do."""
    from scipy import stats
    if va + vb == 0:
        return (0.0 if diff != 0 else 1.0), 0.0
    dof = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    error = math.sqrt(va + vb)
    return float(2 * stats.t.sf(abs(diff / error), dof)), float(stats.t.ppf(0.975, dof)) * error
