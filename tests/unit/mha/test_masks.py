"""Masks: shapes, the True = may-attend convention, alignment and errors."""

import pytest
import torch

import mha


@pytest.mark.parametrize("n", [1, 2, 5])
def test_causal_mask_is_lower_triangular(n):
    mask = mha.causal_mask(n)
    assert mask.dtype == torch.bool and mask.shape == (n, n)
    assert torch.equal(mask, torch.ones(n, n).tril().bool())


@pytest.mark.parametrize(("n_q", "n_k"), [(1, 4), (3, 5), (5, 3)])
def test_causal_mask_aligns_queries_with_the_last_keys(n_q, n_k):
    mask = mha.causal_mask(n_q, n_k)
    for i in range(n_q):
        position = n_k - n_q + i  # where query i sits among the keys
        expected = torch.arange(n_k) <= position
        assert torch.equal(mask[i], expected), i


@pytest.mark.parametrize(
    ("n_q", "n_k", "start", "chunk"), [(6, 6, 0, 4), (1, 3, 5, 4), (3, 5, 2, 3), (4, 4, 0, 1)]
)
def test_a_chunked_mask_keeps_each_query_in_its_chunk_of_absolute_positions(n_q, n_k, start, chunk):
    mask = mha.causal_mask(n_q, n_k, chunk=chunk, start=start)
    key = start + torch.arange(n_k)  # absolute positions
    query = start + n_k - n_q + torch.arange(n_q)[:, None]
    assert torch.equal(mask, (key <= query) & (key // chunk == query // chunk))


def test_padding_mask_shape_and_values():
    mask = mha.padding_mask([3, 1, 0], 4)
    assert mask.shape == (3, 1, 1, 4) and mask.dtype == torch.bool
    assert mask[:, 0, 0].tolist() == [
        [True, True, True, False],
        [True, False, False, False],
        [False, False, False, False],
    ]
    assert torch.equal(mha.padding_mask(torch.tensor([3, 1, 0]), 4), mask)


def test_masks_combine_with_and():
    both = mha.causal_mask(4) & mha.padding_mask([4, 2], 4)
    assert both.shape == (2, 1, 4, 4)
    assert both[1, 0].tolist() == [
        [True, False, False, False],
        [True, True, False, False],
        [True, True, False, False],
        [True, True, False, False],
    ]


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: mha.causal_mask(0), ValueError, "n_q"),
        (lambda: mha.causal_mask(3, 2.5), TypeError, "n_k"),
        (lambda: mha.padding_mask([5], 4), ValueError, "lengths"),
        (lambda: mha.padding_mask([-1], 4), ValueError, "lengths"),
        (lambda: mha.padding_mask([], 4), TypeError, "lengths"),
        (lambda: mha.padding_mask([1.5], 4), TypeError, "lengths"),
        (lambda: mha.padding_mask(torch.tensor([1.0]), 4), TypeError, "lengths"),
        (lambda: mha.padding_mask([1], 0), ValueError, "n_k"),
        (lambda: mha.causal_mask(3, chunk=0), ValueError, "chunk must be a positive int"),
        (lambda: mha.causal_mask(3, chunk=2, start=-1), ValueError, "start must be a non-negative int"),
    ],
)
def test_bad_arguments_raise_clear_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()
