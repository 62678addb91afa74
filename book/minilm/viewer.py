"""The data of the real-heads viewer of "What trained heads do": all-MiniLM-L6-v2's attention on the corpus.

Every head's weights on every sentence of ``book/chapters/data/minilm_corpus.json`` ("sentences"), stored
8-bit and compressed by :func:`book.minilm.realheads.viewer_config` in
``book/chapters/data/minilm_attention.json``. The file is shipped rather than computed in the chapter so
that the page's data, and the notebook output that carries it, are the same on every machine (a weight
near a rounding boundary could otherwise round differently). Regenerate it (a few seconds) with::

    python -m book.minilm.viewer

The chapter checks a few sentences live against the file (:func:`book.minilm.realheads.dequantise`).
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path

import torch

from book.minilm.census import load_corpus
from book.minilm.realheads import viewer_config
from mha.pretrained.minilm import MODEL_PACKAGE, MiniLMEncoder, attend, load_minilm, model_version

VIEWER_FILE = "minilm_attention.json"
COMMAND = "python -m book.minilm.viewer"
FIRST_SENTENCE = 0  # "The cat sat on the mat."
FIRST_HEAD = (0, 2)  # layer 1, head 3: it looks at the previous token


@torch.no_grad()
def compute_viewer_config(encoder: MiniLMEncoder, sentences: list[str]) -> dict:
    """:func:`book.minilm.realheads.viewer_config` for ``sentences``, one :func:`attend` per sentence."""
    tokens, attentions = [], []
    for text in sentences:
        toks, weights = attend(encoder, text)  # (L, h, n, n)
        tokens.append(toks)
        attentions.append(weights)
    layer, head = FIRST_HEAD
    return viewer_config(
        sentences,
        tokens,
        attentions,
        model="all-MiniLM-L6-v2",
        sentence=FIRST_SENTENCE,
        layer=layer,
        head=head,
    )


def load_viewer_config() -> dict:
    """The shipped viewer data (see :func:`main` to regenerate it)."""
    path = resources.files("book.minilm") / "data" / VIEWER_FILE
    return json.loads(path.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> None:
    """Compute the viewer data; write it to ``book/chapters/data/minilm_attention.json`` (or ``--output``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "data" / VIEWER_FILE)
    args = parser.parse_args(argv)
    config = compute_viewer_config(load_minilm(), load_corpus()["sentences"])
    config["source"] = {
        "command": COMMAND,
        "model_package": MODEL_PACKAGE,
        "model_package_version": model_version(),
        "torch": torch.__version__,
    }
    args.output.write_text(
        json.dumps(config, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    sys.stderr.write(f"wrote {args.output} ({args.output.stat().st_size} bytes)\n")


if __name__ == "__main__":
    main()
