"""The benchmarks' timing (benchmarks/_timing.py), checked on a fake clock, and the scripts' own checks.

Timings themselves are never asserted: they belong to the benchmarks, which print ratios. What is tested is
what every ratio rests on: candidates are warmed up, timed in turn within each repeat (so a drift in the
machine's speed hits all of them), and summarised by the median, which one slow outlier cannot move.
"""

import re

import pytest

from benchmarks import _timing
from tests.unit.benchmark_runner import run


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


@pytest.mark.slow
def test_the_attention_benchmark_checks_its_paths_agree_before_timing():
    """A run at tiny sizes: the script asserts ours equals PyTorch's on the same weights, then times."""
    tiny = ["--batch", "1", "--n", "8", "--d-model", "16", "--heads", "2", "--repeats", "2", "--inner", "1"]
    result = run("bench_attention", *tiny)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith("ratio_fused=")


@pytest.mark.slow
def test_the_variants_benchmark_checks_both_layers_and_ends_with_its_ratio():
    """Tiny sizes: the script asserts each converted layer (Llama, DeepSeek, Qwen3-Next, DeepSeek-V3.2's
    sparse attention) equals transformers' before timing, names the implementation it times against, and its
    last line is the contract `ratio_variants=<worst ratio, two decimals>`."""
    pytest.importorskip("transformers")
    tiny = ["--batch", "1", "--n", "8", "--d-model", "64", "--heads", "4", "--kv-heads", "2"]
    tiny += ["--head-dim", "16"]
    result = run("bench_variants", *tiny, "--repeats", "2", "--inner", "1")
    assert result.returncode == 0, result.stderr
    for case in ("llama", "deepseek", "qwen3_next", "dsa"):
        assert f"{case} (theirs: transformers' sdpa attention):" in result.stdout
    assert re.fullmatch(r"ratio_variants=\d+\.\d\d", result.stdout.splitlines()[-1])
