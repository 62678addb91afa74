"""Sphinx extension of the book: write the decoder's weights into the built site, for the page's port.

The page of "Heads that work together" runs the book's decoder in the reader's browser
(``book/decoder/static/ports/decoder.js``, a port of :func:`book.decoder.model.predict`) and loads its
weights from ``_static/decoder-weights.js``, a classic script written from the shipped
``book/chapters/data/decoder_weights.safetensors`` when an HTML build finishes
(:func:`book.decoder.page.write_weights_script`). It is not committed and not inlined in a page.

Like ``minilm_weights.py``, it is enabled in ``_config.yml``: ``sphinx.local_extensions`` puts ``_ext`` on the
path, and ``sphinx.config.extensions`` loads it.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


def write_weights(app: Sphinx, exception: Exception | None) -> None:
    """On a successful HTML build, write ``_static/decoder-weights.js`` into the output directory."""
    if exception is not None or app.builder.format != "html":
        return
    from book.decoder.page import WEIGHTS_SCRIPT, write_weights_script

    target = write_weights_script(Path(app.outdir) / "_static" / WEIGHTS_SCRIPT)
    logger.info(f"decoder_weights: wrote {target} ({target.stat().st_size / 1e3:.0f} kB)")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", write_weights)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
