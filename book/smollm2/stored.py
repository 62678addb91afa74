"""The data of the figure ``mha-smollm2``: all 270 heads of SmolLM2 on a few prompts, shipped with the page.

"What trained heads do" shows SmolLM2-135M-Instruct's heads in an interactive figure
(:mod:`book.smollm2.page`) without loading the model in ``make book``: ``make smollm2-heads``
(:func:`book.smollm2.census.main`) also runs the model on :data:`PROMPTS` and writes
``data/smollm2_prompts.json``. Each weight is stored 8-bit, ``q = round(w * 255)`` (known to within
``1/510``); a prompt of ``n`` tokens is ``L * h * n * n`` bytes in the order ``[layer][head][query][key]``
(the upper triangle is zeros: it compresses to almost nothing), the prompts one after another, compressed with
zlib (deflate) and written in base64; the page inflates them with the browser's ``DecompressionStream``::

    {"layers": 30, "heads": 9, "kv_heads": 3, "scale": 255, "encoding": "uint8-zlib-base64",
     "prompts": [{"name", "about", "text", "ids": [...], "tokens": [" The", ...],
                  "scores": {"sink": [[...] * h] * L, "previous": ..., "induction": ... or null}}, ...],
     "data": "<base64>", "source": {...}}

``tokens`` are the model's own, ``decode([id])`` of each id (a leading space is part of a token). The
``scores`` are each head's on that prompt (:func:`prompt_scores`), from the float32 weights.

Shape legend:
    L  number of layers, 30
    h  query heads per layer, 9
    n  tokens of one prompt
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources

import numpy as np
import torch

from book.compute.stored_maps import ENCODING, SCALE, pack, quantise, unpack

STORED_FILE = "smollm2_prompts.json"
SCORE_DIGITS = 3  # decimals of the per-prompt scores

# (name, what the figure says of it, text); the repeated random sequence is the census's first
# (book.smollm2.census.repeated_random), written into the list by :func:`prompts`.
PROMPTS = (
    (
        "cat",
        "an ordinary sentence, the census's first",
        "The cat slept on the warm windowsill all afternoon.",
    ),
    ("bread", "an ordinary sentence", "My grandmother bakes bread every Sunday morning."),
    (
        "so",
        'a census sentence with "So," put before it: the sink moves to "So"',
        "So, the train to Edinburgh was delayed by twenty minutes.",
    ),
    (
        "repeat",
        "a sentence written twice: induction heads look ahead of the earlier copy",
        "The old clock in the hall stopped at midnight. The old clock in the hall stopped at midnight.",
    ),
    ("random", "20 random tokens written twice (the start of the census's first sequence)", None),
    ("held_out", "the first sentence of the held-out text that the chapter switches heads off on", None),
)
RANDOM_TOKENS = 20  # the random prompt: the first tokens of the census's first sequence, written twice
"""The figure's prompts: ordinary sentences, one where the sink moves, repeated text, random tokens twice and
the first sentence of the chapter's held-out text (``None``: filled in from :mod:`book.smollm2.census`). They
are short, so that the page stays under 2 MB (tests/book/test_site.py): 8-bit weights of 270 heads take
``270 n^2`` bytes before compression."""


def prompt_scores(attention: torch.Tensor, ids: Sequence[int]) -> dict[str, list | None]:
    """Each head's scores on one prompt, ``(L, h)`` nested lists rounded to :data:`SCORE_DIGITS`.

    Args:
        attention: ``(L, h, n, n)`` causal weights of the prompt, ``n >= 2``.
        ids: its ``n`` token ids.

    Returns:
        ``sink`` (mean weight on position 0) and ``previous`` (on position ``i - 1``), over rows ``1..n-1``,
        as the census scores them (:func:`book.smollm2.census.text_scores`); ``induction``: over the rows
        ``i`` whose token occurred before, the mean of the weight on the positions just after its earlier
        occurrences (``j + 1`` for ``ids[j] == ids[i]``, ``j + 1 < i``), or ``None`` if no token repeats. On
        a text written twice it is the census's induction score but for the first rows of the second copy.
    """
    n = attention.size(-1)
    if len(ids) != n or n < 2:
        raise ValueError(f"ids must hold the prompt's n = {n} >= 2 tokens, got {len(ids)}")
    rows = torch.arange(1, n)
    sink = attention[..., 1:, 0].mean(-1)  # (L, h)
    previous = attention[..., rows, rows - 1].mean(-1)  # (L, h)
    targets = torch.zeros(n, n, dtype=attention.dtype)  # targets[i, j + 1] = 1: after an earlier occurrence
    for i in range(n):
        for j in range(i - 1):
            if ids[j] == ids[i]:
                targets[i, j + 1] = 1.0
    repeated = targets.sum(-1) > 0  # (n,)
    induction = None
    if repeated.any():
        induction = (attention * targets).sum(-1)[..., repeated].mean(-1)  # (L, h)
    out = {"sink": sink, "previous": previous, "induction": induction}
    return {
        k: None if v is None else np.round(v.double().numpy(), SCORE_DIGITS).tolist() for k, v in out.items()
    }


def stored_prompts(prompts: Sequence[dict], attentions: Sequence[torch.Tensor], kv_heads: int) -> dict:
    """The format of the module docstring from ``prompts`` (``{"name", "about", "text", "ids", "tokens"}``)
    and each one's weights ``(L, h, n, n)``."""
    if len(prompts) != len(attentions) or not prompts:
        raise ValueError("prompts and attentions must be non-empty and of the same length")
    L, h = attentions[0].shape[:2]
    chunks, out = [], []
    for prompt, a in zip(prompts, attentions, strict=True):
        n = len(prompt["tokens"])
        if tuple(a.shape) != (L, h, n, n) or len(prompt["ids"]) != n:
            raise ValueError(
                f"weights of {prompt['name']!r} have shape {tuple(a.shape)}, expected {(L, h, n, n)}"
            )
        chunks.append(quantise(a))
        out.append({**prompt, "scores": prompt_scores(a, prompt["ids"])})
    return {
        "layers": int(L),
        "heads": int(h),
        "kv_heads": int(kv_heads),
        "scale": SCALE,
        "encoding": ENCODING,
        "prompts": out,
        "data": pack(chunks),
    }


def dequantise(stored: dict) -> list[np.ndarray]:
    """The weights that ``stored`` holds: for each prompt an array ``(L, h, n, n)`` of ``q / 255``."""
    return unpack(stored, "prompts")


def load_stored() -> dict:
    """The shipped prompts, ``data/smollm2_prompts.json`` (``make smollm2-heads`` writes it)."""
    path = resources.files("book.smollm2") / "data" / STORED_FILE
    return json.loads(path.read_text(encoding="utf-8"))
