"""The benchmarks, run from the repository's root as modules (``python -m benchmarks.bench_attention``, or
``make bench``): each prints its timings and ends with a machine-readable line of ratios or medians."""
