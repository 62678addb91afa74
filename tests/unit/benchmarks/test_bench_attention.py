"""benchmarks/bench_attention.py, run as make bench runs it: it checks its paths agree before timing."""

import pytest

from tests.unit.benchmark_runner import run


@pytest.mark.slow
def test_the_attention_benchmark_checks_its_paths_agree_before_timing():
    """A run at tiny sizes: the script asserts ours equals PyTorch's on the same weights, then times."""
    tiny = ["--batch", "1", "--n", "8", "--d-model", "16", "--heads", "2", "--repeats", "2", "--inner", "1"]
    result = run("bench_attention", *tiny)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith("ratio_fused=")
