"""benchmarks/bench_variants.py, run as make bench runs it."""

import re

import pytest

from tests.unit.benchmark_runner import run


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
