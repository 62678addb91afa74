"""benchmarks/bench_linear.py at tiny sizes: it checks our layer equals transformers' before timing, and its
last line is the contract ``ratio_linear=<x.xx> state_bytes=<int> cache_bytes=<int>``."""

import re

import pytest

from tests.unit.benchmark_runner import run


@pytest.mark.slow
def test_the_linear_benchmark_ends_with_its_ratio_and_the_bytes_at_the_longest_context():
    pytest.importorskip("transformers")
    tiny = [
        "--batch",
        "1",
        "--n",
        "10",
        "--d-model",
        "32",
        "--heads",
        "2",
        "--v-heads",
        "4",
        "--head-dim",
        "8",
    ]
    tiny += ["--kernel", "3", "--chunk", "4", "--contexts", "4", "16", "--repeats", "2", "--inner", "1"]
    result = run("bench_linear", *tiny)
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1]
    match = re.fullmatch(r"ratio_linear=(\d+\.\d\d) state_bytes=(\d+) cache_bytes=(\d+)", last)
    assert match, last
    assert float(match[1]) > 0
    # float32, B 1: the state is h_v d_v d_k plus (kernel - 1) (2 h d_k + h_v d_v) numbers; the cache of 16
    # tokens 2 h n d_k numbers.
    assert int(match[2]) == (4 * 8 * 8 + 2 * (2 * 2 * 8 + 4 * 8)) * 4
    assert int(match[3]) == 2 * 2 * 16 * 8 * 4
    rows = [line.split() for line in result.stdout.splitlines() if re.match(r"\s+(4|16) ", line)]
    assert [row[:3] for row in rows] == [["4", match[2], str(2 * 2 * 4 * 8 * 4)], ["16", match[2], match[3]]]
