"""Distribution: weighted samples of one metric over a sliding window, for MM2-style windowed min/max/avg."""

from __future__ import annotations

from collections import deque

WINDOW_SECONDS = 60.0
WINDOW_SAMPLES = 1024
QUANTILES = ((50, "p50", "0.5"), (95, "p95", "0.95"), (99, "p99", "0.99"))  # percent, snapshot key, label
_STAT_KEYS = ("min", "max", "avg", "p50", "p95", "p99")
STATS_KEYS = (*_STAT_KEYS, "sum", "count")  # every key of stats(), in a fixed order


class Distribution:
    """Weighted samples over a sliding window: the last `window_seconds`, and never more than `max_samples`.

    Each sample is one batch's value weighted by its record count. min, max and avg (weighted) cover the window,
    as MM2's windowed `-min/-max/-avg` do. A percentile is the weighted nearest rank: the smallest sample value
    at which the cumulative weight, in value order, reaches p% of the window's total weight. `total_count` and
    `total_sum` never reset (they feed Prometheus `_count`/`_sum`).
    """

    def __init__(self, window_seconds: float = WINDOW_SECONDS, max_samples: int = WINDOW_SAMPLES) -> None:
        self.window_seconds = window_seconds
        self._samples: deque[tuple[float, float, int]] = deque(maxlen=max_samples)  # (time, value, weight)
        self.total_count = 0
        self.total_sum = 0.0

    def add(self, now: float, value: float, weight: int) -> None:
        self._evict(now)
        self._samples.append((now, value, weight))
        self.total_count += weight
        self.total_sum += value * weight

    def _evict(self, now: float) -> None:
        horizon = now - self.window_seconds
        while self._samples and self._samples[0][0] <= horizon:
            self._samples.popleft()

    def stats(self, now: float) -> dict[str, float | None]:
        """min, max, avg, p50, p95, p99 of the window (None when it is empty), and the cumulative sum and count."""
        self._evict(now)
        result: dict[str, float | None] = {"sum": self.total_sum, "count": self.total_count}
        if not self._samples:
            return dict.fromkeys(_STAT_KEYS) | result
        ordered = sorted((value, weight) for _, value, weight in self._samples)
        total = sum(weight for _, weight in ordered)
        result |= {
            "min": ordered[0][0],
            "max": ordered[-1][0],
            "avg": sum(value * weight for value, weight in ordered) / total,
        }
        for percent, key, _ in QUANTILES:
            result[key] = _weighted_rank(ordered, total, percent)
        return result


def _weighted_rank(ordered: list[tuple[float, int]], total: int, percent: int) -> float:
    cumulative = 0
    for value, weight in ordered:
        cumulative += weight
        if cumulative * 100 >= percent * total:  # integers: exact, no float rounding at the boundary
            return value
    return ordered[-1][0]
