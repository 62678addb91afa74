"""Shared fixtures: tests run on the CPU in float64 unless they say otherwise."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _deterministic():
    torch.manual_seed(0)
    yield
