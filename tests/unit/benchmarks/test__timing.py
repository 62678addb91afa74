"""The benchmarks' timing (benchmarks/_timing.py), checked on a fake clock, and the scripts' own checks.

Timings themselves are never asserted: they belong to the benchmarks, which print ratios. What is tested is
what every ratio rests on: candidates are warmed up, timed in turn within each repeat (so a drift in the
machine's speed hits all of them), and summarised by the median, which one slow outlier cannot move.
"""

from benchmarks import _timing


class FakeClock:
    """``time.perf_counter`` that advances only when a candidate runs, by the cost the candidate names."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_candidates_are_warmed_up_then_interleaved_and_summarised_by_the_median(monkeypatch, capsys):
    clock, calls = FakeClock(), []
    monkeypatch.setattr(_timing.time, "perf_counter", clock)
    costs = {"a": iter([99.0] + [1.0, 1.0, 50.0, 1.0, 1.0] * 2), "b": iter([99.0] + [3.0] * 10)}

    def candidate(name):
        def run():
            calls.append(name)
            clock.now += next(costs[name])

        return run

    medians = _timing.interleaved_medians({"a": candidate("a"), "b": candidate("b")}, repeats=5, inner=2)
    assert calls[:2] == ["a", "b"]  # one warm-up call each, not timed
    assert calls[2:] == ["a", "a", "b", "b"] * 5  # in turn within every repeat
    # a's five timings average pairs of calls: 1, 25.5, 1, 25.5, 1 (the 50 s outlier lands in two of them)
    assert medians == {"a": 1.0, "b": 3.0}
    assert "median" in capsys.readouterr().out
