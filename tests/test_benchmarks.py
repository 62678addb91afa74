"""The benchmark scripts run and end with their machine-readable line (timings are not asserted here)."""

import re
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run(script: str, *args: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True, check=True
    )
    return result.stdout.strip().splitlines()


def test_attention_benchmark_prints_ratios():
    lines = run(
        "bench_attention.py", "--batch", "1", "--n", "8", "--d-model", "16", "--heads", "2", "--repeats", "2"
    )
    assert re.fullmatch(r"ratio_fused=\d+\.\d\d ratio_explicit=\d+\.\d\d", lines[-1]), lines[-1]


def test_widget_benchmark_prints_each_kind_and_the_worst_median():
    lines = run("bench_widgets.py", "--updates", "20")
    kinds = [line.split(":")[0].strip() for line in lines if "median" in line and ":" in line]
    assert {"mask", "seed", "sentence", "d_model", "h"} <= set(kinds), lines
    assert re.fullmatch(r"median_ms=\d+\.\d", lines[-1]), lines[-1]
