"""book.minilm.stored: the MiniLM box's stored attention, 8-bit weights that read back within 1/510.

The shipped file against the live model is the chapter's check ("What trained heads do" recomputes three
sentences under nbval); the page's reading of it, tests/browser/test_minilm_box.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from book.minilm.census import load_corpus
from book.minilm.stored import SCALE, dequantise, load_stored, stored_attention
from mha.pretrained import MINILM

L, H = 3, 4


def weights(*shape: int, seed: int = 0) -> torch.Tensor:
    """Rows that sum to 1, as attention weights do."""
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed)).softmax(dim=-1)


def test_stored_weights_read_back_within_half_a_step():
    texts = ["a b", "c d e"]
    toks = [["[CLS]", "a", "b", "[SEP]"], ["[CLS]", "c", "d", "e", "[SEP]"]]
    attentions = [weights(L, H, 4, 4, seed=1), weights(L, H, 5, 5, seed=2)]
    stored = stored_attention(texts, toks, attentions)
    assert (stored["layers"], stored["heads"], stored["scale"]) == (L, H, SCALE)
    assert [s["tokens"] for s in stored["sentences"]] == toks and [
        s["text"] for s in stored["sentences"]
    ] == texts
    for got, expected in zip(dequantise(stored), attentions, strict=True):
        assert got.shape == tuple(expected.shape)
        assert np.abs(got - expected.numpy()).max() <= 0.5 / SCALE + 1e-12


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: stored_attention(["a"], [["[CLS]", "a", "[SEP]"]], [weights(L, H, 4, 4)]), ValueError),
        (lambda: stored_attention([], [], []), ValueError),
        (lambda: dequantise({**load_stored(), "sentences": load_stored()["sentences"][:-1]}), ValueError),
    ],
)
def test_bad_input_raises(call, error):
    with pytest.raises(error):
        call()


def test_the_shipped_file_holds_every_head_on_every_sentence_of_the_corpus():
    """What the page reads, sentence by sentence: the corpus's sentences, (L, h, n, n) weights each, every
    row summing to 1 within its n roundings of half a step."""
    stored = load_stored()
    assert [s["text"] for s in stored["sentences"]] == load_corpus()["sentences"]
    assert (stored["layers"], stored["heads"]) == (MINILM.n_layers, MINILM.h)
    assert stored["source"]["command"] == "python -m book.minilm.stored"  # the command that made it
    for sentence, w in zip(stored["sentences"], dequantise(stored), strict=True):
        n = len(sentence["tokens"])
        assert w.shape == (MINILM.n_layers, MINILM.h, n, n) and sentence["tokens"][:: n - 1] == [
            "[CLS]",
            "[SEP]",
        ]
        assert np.abs(w.sum(axis=-1) - 1).max() <= n * 0.5 / SCALE, sentence["text"]
