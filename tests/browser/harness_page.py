"""The harness page of the browser tests: the figures' own files, no book theme, opened over ``file://``.

The static files are copied beside an HTML file that includes them with classic ``<script src>`` tags and
carries each figure's data inline, as the book's pages do (:func:`harness_html`, written with the helpers of
:mod:`book.widgets.frontend`); and the data of a figure small enough to check by eye: the stepper's stages of
a tiny layer. Used by tests/browser/test_frontend.py, test_frontend_promises.py and test_site_screens.py.
"""

from __future__ import annotations

import functools
import html
from pathlib import Path

import torch

from book.compute.stages import attention_stages
from book.widgets.frontend import SCRIPTS, copy_static, inline_json
from mha.multihead import MultiHeadAttention


def harness_html(roots: list[tuple[str, str, dict]], *, title: str = "mha front ends") -> str:
    """A page with the front ends: ``roots`` holds ``(class, id, config)``, e.g. ``("mha-explorer", ...)``."""
    scripts = "\n".join(f'<script src="{name}"></script>' for name in SCRIPTS)
    divs = "\n".join(
        f'<div class="{cls}" id="{id_}"><script type="application/json">{inline_json(config)}</script></div>'
        for cls, id_, config in roots
    )
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>\n'
        f'<link rel="stylesheet" href="mha.css">\n{scripts}\n</head>\n'
        f'<body style="max-width: 980px; margin: 1em auto">\n{divs}\n</body></html>\n'
    )


def write_harness(directory: Path, roots: list[tuple[str, str, dict]], name: str = "index.html") -> Path:
    """Copy the static files into ``directory`` and write the harness page there."""
    copy_static(directory)
    page = directory / name
    page.write_text(harness_html(roots), encoding="utf-8")
    return page


@functools.cache
def tiny_stages() -> tuple[dict[str, torch.Tensor], list[str]]:
    """The stepper's stages of a tiny layer (d_model 8, h 2, float64) on four tokens, and the tokens."""
    tokens = ["the", "cat", "sat", "down"]
    with torch.random.fork_rng():
        torch.manual_seed(0)
        attn = MultiHeadAttention(8, 2).double().eval()
        x = torch.randn(len(tokens), 8, dtype=torch.float64)
    return attention_stages(attn, x), tokens
