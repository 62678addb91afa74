"""all-MiniLM-L6-v2 in the book: the census of its 72 heads, its real heads in the page, its in-page box.

- :mod:`book.minilm.census`: the corpus, the census, ablations and pruning of the heads ("What trained heads
  do"), run by ``make minilm-heads`` into ``data/minilm_heads.json``;
- :mod:`book.minilm.viewer`: the real-heads viewer's data, ``data/minilm_attention.json``;
- :mod:`book.minilm.realheads`: the real-heads viewer and its live widget ``EncoderExplorer``;
- :mod:`book.minilm.page`: chapter 1's box, which runs the encoder in the reader's browser, and the weights
  scripts the build writes for it (``_ext/minilm_weights.py``);
- ``static/``: their page code (``minilm.js``, ``realheads.js``, and ``ports/minilm.js``, the port of
  :mod:`mha.pretrained.minilm`); ``data/``: what they ship.

The model itself, on ``mha``'s layers, is :mod:`mha.pretrained.minilm`.
"""
