"""What both lanes run the figures of all-MiniLM-L6-v2 on: chapter 1's box and the real-heads explorer.

The box's head labels (tests/unit/book/minilm/test_page.py, tests/browser/test_minilm_box.py); the explorer's
sentences, its encoder, a small viewer config of it, and the check that the page is sent exactly what
:func:`mha.pretrained.attend` gives (tests/unit/test_realheads.py, tests/browser/test_realheads.py). A test
that calls :func:`encoder` asks for the ``minilm`` fixture (tests/conftest.py), which loads the model.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from book.minilm.realheads import EncoderExplorer, viewer_config
from book.widgets.frontend import one_thread
from mha.pretrained import MINILM, attend, load_minilm

# -- chapter 1's MiniLM box (book/minilm/page.py) -----------------------------------------------------

LABELS = [["cls"] * 6 + ["broad"] * 3 + ["previous", "mixed", "sep"] for _ in range(MINILM.n_layers)]
# Two sentences and their tokens, for stored weights made up by a test (the box reads no tokenizer for them)
STORED_TOKENS = {
    "The cat sat on the mat.": ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"],
    "Birds sing.": ["[CLS]", "birds", "sing", ".", "[SEP]"],
}

# -- the real-heads explorer (book/minilm/realheads.py) -----------------------------------------------------

CORPUS_TEXTS = ("The cat sat on the mat.", "Birds sing.")
TIRED = "The animal didn't cross the street because it was too tired."
LITERAL = 'a <b>bold</b> "cat" </script> & $x^2$'


def encoder():
    """The model the ``minilm`` fixture loaded (load_minilm returns one instance)."""
    return load_minilm()


@functools.cache
def corpus() -> dict:
    """A small viewer config of the same encoder: two sentences."""
    tokens, attentions = zip(*(attend(encoder(), t) for t in CORPUS_TEXTS), strict=True)
    return viewer_config(CORPUS_TEXTS, tokens, attentions, model="all-MiniLM-L6-v2", layer=0, head=2)


def sent(explorer: EncoderExplorer) -> torch.Tensor:
    """The weights the page is sent, ``(n, n)``, decoded from the float32 bytes."""
    n, m = explorer.drawn["shape"]
    return torch.from_numpy(np.frombuffer(explorer.drawn["weights"], dtype="<f4").reshape(n, m).copy())


def check_drawn(explorer: EncoderExplorer, text: str, layer: int, head: int) -> None:
    """The page is sent exactly attend()'s head ``(layer, head)`` of ``text``, and the settings agree.

    The explorer runs the encoder on one thread (the reference here too); on several threads the sums
    may round differently, by about 1e-6.
    """
    with one_thread():
        tokens, attentions = attend(encoder(), text)  # (L, h, n, n)
    n = len(tokens)
    assert explorer.text == text and explorer.tokens == tokens
    assert (explorer.layer, explorer.head) == (layer, head)
    assert explorer.weights.shape == (n, n) and explorer.weights.dtype == torch.float32
    assert torch.equal(explorer.weights, attentions[layer, head])
    assert torch.equal(explorer.attentions, attentions)
    assert torch.equal(sent(explorer), attentions[layer, head])
    torch.testing.assert_close(explorer.attentions, attend(encoder(), text)[1], atol=1e-5, rtol=0)
    drawn = explorer.drawn
    assert (drawn["text"], drawn["tokens"], drawn["shape"]) == (text, tokens, [n, n])
    assert (drawn["layer"], drawn["head"]) == (layer, head)
    assert explorer.settings["layer"] == layer and explorer.settings["head"] == head
