"""Positions: sinusoidal encodings, and the rotary tables and rotations of mha.positional."""

import math

import pytest
import torch

import mha
from mha.positional import apply_rotary, rotary_tables


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


@pytest.mark.parametrize(
    ("fraction", "proportional"), [(1.0, False), (0.5, False), (0.25, True), (1.0, True)]
)
def test_rotary_tables_follow_the_formula(fraction, proportional):
    d_k, theta = 16, 100.0
    cos, sin = rotary_tables(5, d_k, theta=theta, offset=3, fraction=fraction, proportional=proportional)
    r = int(fraction * d_k)
    width = d_k if proportional else r  # proportional: the whole head, its last pairs turning by 0
    assert cos.shape == sin.shape == (5, width)
    for p in range(5):
        for i in range(width // 2):
            exponent = 2 * i / (d_k if proportional else r)
            angle = (p + 3) * theta**-exponent if 2 * i < r else 0.0
            for j in (i, i + width // 2):  # the half-split layout repeats each angle
                assert cos[p, j].item() == pytest.approx(math.cos(angle), abs=1e-7)
                assert sin[p, j].item() == pytest.approx(math.sin(angle), abs=1e-7)


@pytest.mark.parametrize("interleaved", [False, True])
def test_apply_rotary_turns_its_pairs_and_passes_the_rest(interleaved):
    x = torch.randn(2, 5, 10, dtype=torch.float64)
    cos, sin = rotary_tables(5, 10, theta=10.0, fraction=0.4, dtype=torch.float64)  # the first 4 turn
    out = apply_rotary(x, cos, sin, interleaved=interleaved)
    torch.testing.assert_close(out[..., 4:], x[..., 4:], rtol=0, atol=0)
    pairs = [(0, 1), (2, 3)] if interleaved else [(0, 2), (1, 3)]
    for p, (i, j) in enumerate(pairs):  # pair p turns by its angle, as a complex number
        z = torch.complex(x[..., i], x[..., j]) * torch.complex(cos[:, p], sin[:, p])
        torch.testing.assert_close(out[..., i], z.real, rtol=0, atol=1e-12)
        torch.testing.assert_close(out[..., j], z.imag, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"d_k": 7}, "even head width d_k, got d_k=7"),
        ({"d_k": 8, "fraction": 0.125}, "fraction=0.125 turns 1 of the d_k=8"),
        ({"d_k": 8, "fraction": 1.5}, r"fraction must be a number in \(0, 1\]"),
    ],
)
def test_rotary_widths_must_be_even(kwargs, words):
    with pytest.raises(ValueError, match=words):
        rotary_tables(4, **kwargs)
