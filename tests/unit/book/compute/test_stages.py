"""attention_stages: every stage present, in order, with the right shape, and consistent."""

import math

import pytest
import torch

import mha
from book.chapters.worked_example import worked_example
from book.compute import STAGES, attention_stages


def shape_of(stage, n, d_model, h):
    sizes = {"n": n, "d_model": d_model, "h": h, "d_k": d_model // h}
    return tuple(sizes[s.strip()] for s in stage.shape.strip("()").split(","))


@pytest.mark.parametrize(("n", "d_model", "h"), [(1, 1, 1), (4, 8, 2), (5, 12, 3), (3, 16, 16)])
def test_stages_have_documented_shapes_and_end_at_the_module_output(n, d_model, h):
    attn = mha.MultiHeadAttention(d_model, h).double().eval()
    x = torch.randn(n, d_model, dtype=torch.float64)
    stages = attention_stages(attn, x)
    assert list(stages) == [s.key for s in STAGES]
    for stage in STAGES:
        assert stages[stage.key].shape == shape_of(stage, n, d_model, h), stage.key
    out, weights = attn(x[None])
    torch.testing.assert_close(stages["out"], out[0], atol=1e-12, rtol=0)
    torch.testing.assert_close(stages["weights"], weights[0], atol=1e-12, rtol=0)


def test_stages_are_consistent_with_each_other():
    ex = worked_example()
    s = attention_stages(ex.module(), ex.x)
    torch.testing.assert_close(s["q_heads"], ex.x @ ex.W_q)
    torch.testing.assert_close(s["scaled_scores"], s["scores"] / math.sqrt(ex.d_k))
    torch.testing.assert_close(s["weights"], torch.softmax(s["scaled_scores"], dim=-1))
    torch.testing.assert_close(s["heads"], s["weights"] @ s["v_heads"])
    torch.testing.assert_close(s["concat"], torch.cat(list(s["heads"]), dim=-1))
    torch.testing.assert_close(s["out"], s["concat"] @ ex.W_o)


def test_stages_are_detached_copies():
    attn = mha.MultiHeadAttention(8, 2)
    x = torch.randn(3, 8)
    stages = attention_stages(attn, x)
    assert all(not t.requires_grad for t in stages.values())
    stages["x"].zero_()  # must not reach the caller's input
    assert x.abs().sum() > 0


@pytest.mark.parametrize(
    ("attn", "x", "error", "words"),
    [
        (object(), torch.randn(3, 8), TypeError, "MultiHeadAttention"),
        (mha.MultiHeadAttention(8, 4, n_kv_heads=2), torch.randn(3, 8), ValueError, "n_kv_heads"),
        (mha.MultiHeadAttention(8, 2), torch.randn(1, 3, 8), ValueError, r"\(n, d_model=8\)"),
        (mha.MultiHeadAttention(8, 2), torch.randn(3, 6), ValueError, "d_model=8"),
        (mha.MultiHeadAttention(8, 2), torch.randn(3, 8, dtype=torch.float64), TypeError, "dtype"),
        (mha.MultiHeadAttention(8, 2), torch.ones(3, 8, dtype=torch.long), TypeError, "floating"),
    ],
)
def test_bad_arguments_raise_clear_errors(attn, x, error, words):
    with pytest.raises(error, match=words):
        attention_stages(attn, x)


def test_stage_decimals_fit_the_largest_value():
    """The stage figure and the page's stepper print a stage's values with these decimals."""
    from book.compute.stages import stage_decimals

    assert stage_decimals(torch.tensor([0.5, 150.0]), "weights") == 2  # weights: always two
    largest = (9.99, 10.0, 99.9, 100.0)
    assert [stage_decimals(torch.tensor([-v, 0.1]), "scores") for v in largest] == [2, 1, 1, 0]
    assert stage_decimals(torch.empty(0), "x") == 2
