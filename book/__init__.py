"""The book's own code: what the chapters of "Multi-Head Attention, interactively" show, built on ``mha``.

``mha`` is the attention library; this package is the book around it, and ``mha`` never imports it
(``pyproject.toml``'s import contracts, ``lint-imports``). Its subpackages, top to bottom, each importing only
those below it and ``mha``:

- ``book.chapters``: one chapter's material: the toy tasks of the appendix and their training, the worked
  example of "Step by step", the seed tutorials' classes of "The code in practice", shipped data in ``data/``;
- ``book.minilm`` and ``book.decoder``: the two models the book runs in the page (all-MiniLM-L6-v2, and the
  book's own two-layer decoder). A model the page runs has one home: its Python here, its page code in
  ``static/`` (merged with the figures' into the site's ``_static/``) and its data in ``data/``;
- ``book.widgets``: the interactive figures, their Python (a live kernel's widgets, a static page's data) and
  their page code (``static/``: JavaScript ports of the Python they show, the figures' scripts, ``mha.css``);
- ``book.figures``: matplotlib figures;
- ``book.compute``: what the figures show, computed once (the stages of a forward pass, the explorer's
  weights, the portable random numbers its page port reproduces, the two history chapters' computations).

It needs ``pip install "mha[book]"`` (numpy, matplotlib, anywidget, ipywidgets, traitlets, pandas, and
``mha[pretrained]``'s packages for the models), and runs from the repository (``make book``, ``make lab``) or
from a chapter's set-up cell on Colab and Binder, which fetches it.
"""
