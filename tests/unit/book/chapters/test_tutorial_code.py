"""book.chapters.tutorial_code: the tutorials' classes load and have exactly the defects the chapter shows."""

import pytest
import torch

import mha
from book.chapters.tutorial_code import TUTORIAL_CODE, tutorial_class, tutorial_source

D_MODEL, H = 16, 4


def make(key):
    torch.manual_seed(0)
    return tutorial_class(key)(D_MODEL, H).eval()


def call(key, attn, x, mask=None):
    return attn(x, mask) if key == "B" else attn(x, x, x, mask)


def test_sources_are_the_four_tutorials():
    assert sorted(TUTORIAL_CODE) == ["A", "B", "C", "D"]
    for key in TUTORIAL_CODE:
        assert "class MultiHeadAttention(nn.Module)" in tutorial_source(key)
    with pytest.raises(KeyError, match="unknown tutorial"):
        tutorial_source("E")


def test_each_load_gives_a_fresh_class():
    assert tutorial_class("A") is not tutorial_class("A")


def test_d_forgot_to_import_math():
    with pytest.raises(NameError, match="math"):
        call("D", make("D"), torch.randn(1, 3, D_MODEL))


@pytest.mark.parametrize("key", ["A", "B", "C"])
def test_without_a_mask_they_agree_with_mha_given_the_same_weights(key):
    theirs = make(key)
    ours = mha.MultiHeadAttention(D_MODEL, H)
    linears = [m for m in theirs.modules() if isinstance(m, torch.nn.Linear)]  # q, k, v, o in order
    with torch.no_grad():
        for mine, other in zip((ours.W_q, ours.W_k, ours.W_v, ours.W_o), linears, strict=True):
            mine.weight.copy_(other.weight)
            mine.bias.copy_(other.bias)
    x = torch.randn(2, 5, D_MODEL)
    out = call(key, theirs, x)
    out = out[0] if isinstance(out, tuple) else out
    torch.testing.assert_close(out, ours(x)[0])


def test_minus_inf_fill_turns_a_fully_masked_row_into_nan():
    mask = torch.ones(1, 1, 4, 4)
    mask[..., 0, :] = 0  # query 0 may attend to nothing
    out, weights = make("B")(torch.randn(1, 4, D_MODEL), mask)
    assert weights[..., 0, :].isnan().all() and out[:, 0].isnan().all()
    assert not out[:, 1:].isnan().any()


@pytest.mark.parametrize("key", ["A", "C"])
def test_minus_1e9_fill_turns_a_fully_masked_row_into_an_average(key):
    attn = make(key)
    x = torch.randn(1, 4, D_MODEL)
    mask = torch.ones(1, 1, 4, 4)
    mask[..., 0, :] = 0
    masked = call(key, attn, x, mask)
    unmasked = call(key, attn, x)  # uniform weights over all keys = what no mask with equal scores gives
    assert not masked.isnan().any()
    v = attn.W_V(x) if key == "A" else attn.W_v(x)
    o = attn.W_O if key == "A" else attn.W_o
    torch.testing.assert_close(masked[:, 0], o(v.mean(dim=1)))  # the mean of all values, silently
    torch.testing.assert_close(masked[:, 1:], unmasked[:, 1:])


@pytest.mark.parametrize("key", ["A", "C"])
def test_they_return_only_the_output_so_unpacking_splits_the_batch(key):
    attn = make(key)
    x = torch.randn(2, 3, D_MODEL)  # a batch of two
    full = call(key, attn, x)
    out, weights = call(key, attn, x)  # what a caller of mha.MultiHeadAttention would write
    assert torch.equal(out, full[0]) and torch.equal(weights, full[1])  # two sequences, no weights


def test_d_is_random_by_default():
    attn = tutorial_class("D")(D_MODEL, H)  # train mode, dropout 0.1, as constructed
    x = torch.randn(1, 6, D_MODEL)
    namespace = {"math": __import__("math")}  # give it the import it forgot, to reach the dropout
    attn.forward.__func__.__globals__.update(namespace)
    assert not torch.equal(attn(x, x, x), attn(x, x, x))
