"""The unit tests of benchmarks/, one file per module."""
