"""Positions: sinusoidal encodings, the rotary tables and rotations of mha.positional, and its parts of
the layer: every rotary style and the temperature against their formulas."""

import math

import pytest
import torch

import mha
from mha.multihead import split_heads
from mha.positional import Rotary, Temperature, apply_rotary, rotary_tables
from tests.unit.mha.parts import D_K, D_MODEL, H_KV, H, inputs, layer, recorded


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


def test_rotary_turns_each_half_split_pair_by_its_angle():
    theta = 100.0
    steps = recorded(layer(positions=Rotary(theta)), inputs())
    q = split_heads(steps["q"], H)  # (B, h, n, d_k), before the rotation
    # the pair (x_i, x_{i + d_k/2}) as one complex number, turned by position * theta^(-2i/d_k)
    z = torch.complex(q[..., : D_K // 2], q[..., D_K // 2 :])  # (B, h, n, d_k/2)
    angle = torch.arange(9.0, dtype=torch.float64)[:, None] * theta ** (
        -torch.arange(0, D_K, 2, dtype=torch.float64) / D_K
    )
    turned = z * torch.polar(torch.ones_like(angle), angle)  # (B, h, n, d_k/2)
    expected = torch.cat([turned.real, turned.imag], dim=-1)  # (B, h, n, d_k)
    torch.testing.assert_close(steps["q_heads"], expected, rtol=0, atol=1e-12)
    assert steps["cache"].k.shape == (2, H_KV, 9, D_K)  # the keys, turned too


def test_rotary_scores_depend_on_the_offset_between_positions_only():
    attn = layer(positions=Rotary(10.0))
    x = inputs(B=1, n=1).expand(1, 6, D_MODEL)  # one token repeated: only the positions differ
    scores = recorded(attn, x)["scores"][0]  # (h, n, n)
    for offset in range(-5, 6):
        diagonal = torch.diagonal(scores, offset=offset, dim1=-2, dim2=-1)  # (h, n - |offset|)
        torch.testing.assert_close(diagonal, diagonal[:, :1].expand_as(diagonal), rtol=0, atol=1e-12)


def turned(x, pairs, angle):
    """``x`` with coordinate ``i`` of each pair ``(i, j)`` and ``j`` turned as the complex ``x_i + i x_j`` by
    ``angle[:, p]`` (positions by pair ``p``), every other coordinate left as it is."""
    out = x.clone()
    for p, (i, j) in enumerate(pairs):
        z = torch.complex(x[..., i], x[..., j]) * torch.polar(torch.ones_like(angle[:, p]), angle[:, p])
        out[..., i], out[..., j] = z.real, z.imag
    return out


@pytest.mark.parametrize(
    ("options", "pairs", "exponents"),
    [  # D_K = 8; which coordinates pair up, and the frequency exponent of each pair (theta ** -exponent)
        ({"fraction": 0.5}, [(0, 2), (1, 3)], [0, 2 / 4]),  # partial: the first 4 turn, over width 4
        ({"fraction": 0.5, "style": "proportional"}, [(0, 4), (1, 5)], [0, 2 / 8]),  # Gemma 4
        ({"style": "interleaved"}, [(0, 1), (2, 3), (4, 5), (6, 7)], [0, 2 / 8, 4 / 8, 6 / 8]),  # Llama 4
        ({"fraction": 0.25, "style": "interleaved"}, [(0, 1)], [0]),
    ],
)
def test_partial_proportional_and_interleaved_rotary_turn_their_pairs(options, pairs, exponents):
    theta = 100.0
    steps = recorded(layer(positions=Rotary(theta, **options)), inputs())
    q = split_heads(steps["q"], H)  # (B, h, n, d_k), before the rotation
    angle = torch.arange(9.0, dtype=torch.float64)[:, None] * theta ** -torch.tensor(exponents).double()
    torch.testing.assert_close(steps["q_heads"], turned(q, pairs, angle), rtol=0, atol=1e-12)


@pytest.mark.parametrize("style", ["half-split", "interleaved", "proportional"])
def test_every_rotary_style_scores_by_offset_only(style):
    attn = layer(positions=Rotary(10.0, fraction=0.5, style=style))
    x = inputs(B=1, n=1).expand(1, 6, D_MODEL)  # one token repeated: only the positions differ
    scores = recorded(attn, x)["scores"][0]  # (h, n, n)
    for offset in range(-5, 6):
        diagonal = torch.diagonal(scores, offset=offset, dim1=-2, dim2=-1)  # (h, n - |offset|)
        torch.testing.assert_close(diagonal, diagonal[:, :1].expand_as(diagonal), rtol=0, atol=1e-12)


def test_the_temperature_sharpens_queries_from_position_floor_scale_minus_one():
    attn = layer(positions=Temperature(4.0, 0.5))
    steps = recorded(attn, inputs())
    position = torch.arange(9.0, dtype=torch.float64)
    expected = 1 + 0.5 * torch.log1p(torch.floor((position + 1) / 4))  # Llama 4's, with (position + 1)
    torch.testing.assert_close(attn.positions.factor(position), expected, rtol=0, atol=0)
    assert (expected[:3] == 1).all() and (expected[3:] > 1).all()
    q = split_heads(steps["q"], H)  # (B, h, n, d_k)
    torch.testing.assert_close(steps["q_heads"], q * expected[:, None], rtol=0, atol=1e-12)
    _, _, cache = attn.decode(inputs()[:, :7])  # decoding: the positions go on from the cache
    tail = recorded(attn, inputs()[:, 7:], cache=cache)
    torch.testing.assert_close(
        tail["q_heads"], split_heads(tail["q"], H) * expected[7:, None], rtol=0, atol=1e-12
    )


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: Rotary(0), ValueError, "theta must be a positive number"),
        (lambda: Rotary(1e4, fraction=0), ValueError, r"fraction must be a number in \(0, 1\]"),
        (lambda: Rotary(1e4, style="spiral"), ValueError, "style must be one of"),
        (lambda: Temperature(0, 0.1), ValueError, "floor_scale must be a positive number"),
    ],
)
def test_bad_position_options_raise_errors_that_name_them(make, error, words):
    with pytest.raises(error, match=words):
        make()
