"""The statistics of ``contribkit bench``: pure functions over measured times, no estimates of
what was not measured.

Before and after run in pairs of blocks (one process each, their order alternating), so drift
on a noisy machine hits both sides of a pair alike. A pair gives one number, the log of the
ratio of its two block medians; the change is the Hodges-Lehmann estimate of their centre,
with the distribution-free confidence interval of the Wilcoxon signed-rank test (exact, from the
null distribution of the signed-rank statistic, as R's ``wilcox.test(conf.int=TRUE)``). A change
is significant only when the whole interval lies on one side of 1; with too few pairs for the
confidence asked, no interval exists and the verdict says so instead of guessing.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

SLOWER = "slower"
FASTER = "faster"
SAME = "no significant change"
TOO_FEW = "too few blocks to tell"
DEFAULT_CONFIDENCE = 0.99


@dataclass(frozen=True)
class Spread:
    """One side's times: their median and interquartile range (of the blocks' medians)."""

    median: float
    iqr: float
    runs: int


@dataclass(frozen=True)
class Change:
    """The candidate against the baseline: time ratio (above 1 is slower) and its interval."""

    ratio: float
    low: float | None  # None: too few pairs for an interval at this confidence
    high: float | None
    pairs: int
    confidence: float

    @property
    def verdict(self) -> str:
        if self.low is None or self.high is None:
            return TOO_FEW
        if self.low > 1.0:
            return SLOWER
        if self.high < 1.0:
            return FASTER
        return SAME

    @property
    def significant(self) -> bool:
        return self.verdict in (SLOWER, FASTER)


def spread(times: Sequence[float]) -> Spread:
    if not times:
        raise ValueError("no times")
    if len(times) == 1:
        return Spread(times[0], 0.0, 1)
    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
    return Spread(statistics.median(times), q3 - q1, len(times))


def signed_rank_counts(n: int) -> list[int]:
    """How many of the 2**n sign patterns give each value 0..n(n+1)/2 of the signed-rank
    statistic W+ (ranks 1..n, no ties)."""
    counts = [1]
    for rank in range(1, n + 1):
        grown = counts + [0] * rank
        for total, ways in enumerate(counts):
            grown[total + rank] += ways
        counts = grown
    return counts


def interval_index(n: int, confidence: float) -> int | None:
    """The k of the interval [W(k), W(M-k+1)] over the sorted Walsh averages: the largest k with
    P(W+ <= k-1) <= (1 - confidence) / 2. None when even k = 1 is too wide a tail (too few
    pairs: with 99% confidence, fewer than 8)."""
    counts = signed_rank_counts(n)
    total = 2**n
    tail = (1.0 - confidence) / 2
    cumulative, k = 0, 0
    for value, ways in enumerate(counts):
        cumulative += ways
        if cumulative / total > tail + 1e-12:
            break
        k = value + 1
    return k or None


def change(baseline: Sequence[float], candidate: Sequence[float], confidence: float) -> Change:
    """The change from paired block medians (``baseline[i]`` and ``candidate[i]`` are pair i)."""
    if len(baseline) != len(candidate) or not baseline:
        raise ValueError("the sides need the same, non-zero number of blocks")
    logs = [math.log(c / b) for b, c in zip(baseline, candidate, strict=True)]
    n = len(logs)
    walsh = sorted((logs[i] + logs[j]) / 2 for i in range(n) for j in range(i, n))
    centre = math.exp(statistics.median(walsh))
    k = interval_index(n, confidence)
    if k is None:
        return Change(centre, None, None, n, confidence)
    low, high = math.exp(walsh[k - 1]), math.exp(walsh[len(walsh) - k])
    return Change(centre, low, high, n, confidence)


def min_pairs(confidence: float) -> int:
    """The fewest pairs for which an interval exists at ``confidence``."""
    n = 1
    while interval_index(n, confidence) is None:
        n += 1
    return n
