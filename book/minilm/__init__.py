"""all-MiniLM-L6-v2 in the book: the census of its 72 heads, and the box that shows them in the page.

- :mod:`book.minilm.census`: the corpus, the census, ablations and pruning of the heads ("What trained heads
  do"), run by ``make minilm-heads`` into ``data/minilm_heads.json``;
- :mod:`book.minilm.page`: the box of chapter 1 and "What trained heads do", which runs the encoder in the
  reader's browser, and the weights scripts the build writes for it (``_ext/minilm_weights.py``);
- :mod:`book.minilm.stored`: every head on the corpus's sentences, which that box draws without the model,
  ``data/minilm_attention.json`` (``make minilm-heads`` too);
- ``static/``: its page code (``minilm.js``, and ``ports/minilm.js``, the port of
  :mod:`mha.pretrained.minilm`); ``data/``: what they ship.

The model itself, on ``mha``'s layers, is :mod:`mha.pretrained.minilm`.
"""
