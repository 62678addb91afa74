"""mha.bands: a window and a chunk are causal masks on top of the given one, and a window's cache keeps its
window only.
"""

import pytest
import torch

import mha
from mha.bands import Chunk, Window
from mha.positional import Rotary
from tests.unit.mha.parts import inputs, layer


@pytest.mark.parametrize("w", [1, 3, 9, 20])
def test_a_window_is_the_causal_band_on_top_of_the_given_mask(w):
    attn, x = layer(band=Window(w)), inputs()
    n = x.size(1)
    i, j = torch.arange(n)[:, None], torch.arange(n)
    band = (i - w < j) & (j <= i)  # w keys, itself included
    padding = mha.padding_mask([n, n - 2], n)  # (B, 1, 1, n)
    for mask, expected in ((None, band), (mha.causal_mask(n), band), (padding, band & padding)):
        weights = attn(x, mask=mask)[1]  # (B, h, n, n)
        assert torch.equal(weights != 0, expected.expand_as(weights))
    plain = layer()  # the same weights: a window is a mask
    torch.testing.assert_close(attn(x)[0], plain(x, mask=mha.causal_mask(n, window=w))[0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("c", [1, 3, 4, 20])
def test_a_chunk_is_the_causal_block_on_top_of_the_given_mask(c):
    attn, x = layer(band=Chunk(c)), inputs()
    n = x.size(1)
    i, j = torch.arange(n)[:, None], torch.arange(n)
    block = (i // c == j // c) & (j <= i)  # the same chunk, aligned to position 0, and not after
    padding = mha.padding_mask([n, n - 2], n)  # (B, 1, 1, n)
    for mask, expected in ((None, block), (mha.causal_mask(n), block), (padding, block & padding)):
        weights = attn(x, mask=mask)[1]  # (B, h, n, n)
        assert torch.equal(weights != 0, expected.expand_as(weights))
    plain = layer()  # the same weights: a chunk is a mask
    torch.testing.assert_close(attn(x)[0], plain(x, mask=mha.causal_mask(n, chunk=c))[0], rtol=0, atol=1e-12)


def test_a_window_cache_never_holds_more_than_its_window():
    attn, x = layer(band=Window(3), positions=Rotary(10.0)), inputs(n=9)
    _, _, cache = attn.decode(x[:, :7])  # a prompt longer than the window
    assert cache.k.size(-2) == 3 and cache.start == 4 and cache.end == 7
    assert cache.k.untyped_storage().nbytes() == cache.k.nbytes  # a copy, not a view of all 7 keys
    assert mha.KVCache(cache.k, cache.v) == (cache.k, cache.v, 0)  # KVCache(k, v) still works
    out, _, cache = attn.decode(x[:, 7:], cache)
    torch.testing.assert_close(out, attn(x, mask=mha.causal_mask(9))[0][:, 7:], rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: Window(0), ValueError, "w must be a positive int"),
        (lambda: Window(2.5), TypeError, "w must be a positive int"),
        (lambda: Chunk(0), ValueError, "c must be a positive int"),
    ],
)
def test_bad_bands_raise_errors_that_name_them(make, error, words):
    with pytest.raises(error, match=words):
        make()
