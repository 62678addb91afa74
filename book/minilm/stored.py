"""The MiniLM box's stored attention: all-MiniLM-L6-v2's heads on the book's sentences, shipped with the page.

On "What trained heads do" the box (:mod:`book.minilm.page`) offers the sixty sentences of the corpus
(``data/minilm_corpus.json``) and draws every head on any of them at once, before the reader has loaded the
model: their weights are stored in ``data/minilm_attention.json`` and go into the box's spec
(:func:`book.minilm.page.box_spec`). Each weight is stored 8-bit, ``q = round(w * 255)``, so it is known to
within ``1/510`` (half a step of ``1/255``). The bytes, sentence after sentence, each in the order
``[layer][head][query][key]`` (``L * h * n * n`` bytes for a sentence of ``n`` tokens), are compressed with
zlib (deflate) and written in base64; the page inflates them with the browser's ``DecompressionStream``::

    {"layers": L, "heads": h, "scale": 255, "encoding": "uint8-zlib-base64",
     "sentences": [{"text": "The cat sat on the mat.", "tokens": ["[CLS]", "the", ...]}, ...],
     "data": "<base64 of the zlib-compressed bytes>", "source": {...}}

The file is shipped rather than computed in the chapter so that the page's data, and the notebook output that
carries it, are the same on every machine (a weight near a rounding boundary could otherwise round
differently); the chapter checks a few sentences live against it (:func:`dequantise`). Regenerate it (a few
seconds) with::

    python -m book.minilm.stored

Shape legend:
    L  number of layers
    h  heads per layer
    n  number of tokens of one sentence
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from book.compute.stored_maps import ENCODING, SCALE, pack, quantise, unpack
from book.minilm.census import load_corpus
from mha.pretrained.minilm import MODEL_PACKAGE, attend, load_minilm, model_version

STORED_FILE = "minilm_attention.json"
COMMAND = "python -m book.minilm.stored"


def stored_attention(
    texts: Sequence[str], tokens: Sequence[Sequence[str]], attentions: Sequence[torch.Tensor]
) -> dict:
    """Every head's weights on some sentences, 8-bit and compressed (the format of the module docstring).

    Args:
        texts: the sentences as written.
        tokens: for each sentence its ``n`` tokens (``[CLS]`` and ``[SEP]`` included).
        attentions: for each sentence the weights ``(L, h, n, n)``, as :func:`mha.pretrained.attend` gives.
    """
    if not (len(texts) == len(tokens) == len(attentions)) or not texts:
        raise ValueError("texts, tokens and attentions must be non-empty and of the same length")
    L, h = attentions[0].shape[:2]
    chunks = []
    for text, toks, a in zip(texts, tokens, attentions, strict=True):
        n = len(toks)
        if tuple(a.shape) != (L, h, n, n):
            raise ValueError(f"weights of {text!r} have shape {tuple(a.shape)}, expected {(L, h, n, n)}")
        chunks.append(quantise(a))
    return {
        "layers": int(L),
        "heads": int(h),
        "scale": SCALE,
        "encoding": ENCODING,
        "sentences": [{"text": t, "tokens": list(toks)} for t, toks in zip(texts, tokens, strict=True)],
        "data": pack(chunks),
    }


def dequantise(stored: dict) -> list[np.ndarray]:
    """The weights that ``stored`` holds: for each sentence an array ``(L, h, n, n)`` of ``q / 255``."""
    return unpack(stored, "sentences")


def load_stored() -> dict:
    """The shipped stored attention, ``data/minilm_attention.json`` (see :func:`main` to regenerate it)."""
    path = resources.files("book.minilm") / "data" / STORED_FILE
    return json.loads(path.read_text(encoding="utf-8"))


@torch.no_grad()
def main(argv: list[str] | None = None) -> None:
    """Compute every head on the corpus's sentences into ``data/minilm_attention.json`` (or ``--output``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "data" / STORED_FILE)
    args = parser.parse_args(argv)
    encoder, texts = load_minilm(), load_corpus()["sentences"]
    tokens, attentions = zip(*(attend(encoder, text) for text in texts), strict=True)  # (L, h, n, n) each
    stored = stored_attention(texts, tokens, attentions)
    stored["source"] = {
        "command": COMMAND,
        "model_package": MODEL_PACKAGE,
        "model_package_version": model_version(),
        "torch": torch.__version__,
    }
    args.output.write_text(
        json.dumps(stored, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    sys.stderr.write(f"wrote {args.output} ({args.output.stat().st_size} bytes)\n")


if __name__ == "__main__":
    main()
