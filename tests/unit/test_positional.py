"""Sinusoidal positional encodings."""

import math

import pytest
import torch

import mha


@pytest.mark.parametrize(("n", "d_model"), [(1, 1), (10, 16), (7, 5)])
def test_values_follow_the_formula(n, d_model):
    pe = mha.sinusoidal_positions(n, d_model)
    assert pe.shape == (n, d_model) and pe.dtype == torch.float32
    for p in range(n):
        for j in range(d_model):
            angle = p / 10000 ** ((j - j % 2) / d_model)
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert pe[p, j].item() == pytest.approx(expected, abs=1e-6)


def test_positions_are_distinct():
    pe = mha.sinusoidal_positions(16, 8, dtype=torch.float64)
    distances = torch.cdist(pe, pe) + torch.eye(16)
    assert distances.min() > 0.1


@pytest.mark.parametrize(
    ("n", "d_model", "error"),
    [(0, 4, ValueError), (4, 0, ValueError), (True, 4, TypeError), (4, 2.0, TypeError)],
)
def test_bad_sizes_raise(n, d_model, error):
    with pytest.raises(error, match="must be a positive int"):
        mha.sinusoidal_positions(n, d_model)
