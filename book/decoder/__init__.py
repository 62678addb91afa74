"""The book's decoder of "Heads that work together": two layers of four heads, trained on CPython's docs.

- :mod:`book.decoder.model`: the model, its vocabulary and :func:`~book.decoder.model.predict`;
- :mod:`book.decoder.train`: its training (``make decoder``) into ``data/``;
- :mod:`book.decoder.induction` and :mod:`book.decoder.induction_plots`: what its heads do, and the figures;
- :mod:`book.decoder.box` and :mod:`book.decoder.page`: its box in the page, and the weights script the
  build writes for it (``_ext/decoder_weights.py``);
- ``static/``: the box's page code (``decoderbox.js``, and ``ports/decoder.js``, the port of ``predict``);
  ``data/``: the trained weights and the training log.
"""
