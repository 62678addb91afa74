"""Timing shared by the benchmarks: candidates run interleaved, so a busy machine slows them all alike."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def time_call(fn: Callable[[], object], inner: int) -> float:
    """Seconds per call of ``fn``, averaged over ``inner`` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def interleaved_medians(
    candidates: dict[str, Callable[[], object]], *, repeats: int, inner: int, width: int = 8
) -> dict[str, float]:
    """Warm every candidate up, time them in turn ``repeats`` times, print each, return the medians (s)."""
    for fn in candidates.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(repeats):
        for name, fn in candidates.items():
            times[name].append(time_call(fn, inner))
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    for name, ts in times.items():
        low, high = min(ts) * 1e3, max(ts) * 1e3
        print(f"{name:>{width}}: median {medians[name] * 1e3:8.2f} ms  (min {low:.2f}, max {high:.2f})")
    return medians
