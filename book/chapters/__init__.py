"""Chapter material: what one chapter needs and no other layer should know about.

- :mod:`book.chapters.tasks`, :mod:`book.chapters.training`, :mod:`book.chapters.training_plots` and
  :mod:`book.chapters.train_heads`: the toy tasks of the appendix "Heads in toy models" (summarised in
  "Why multiple heads?"), their training, the shipped weights and results in ``data/``, and their figures;
- :mod:`book.chapters.worked_example`: the numeric example of "Step by step";
- :mod:`book.chapters.gates`: the constructed example of "Attention in 2025–2026": two ways to make a head
  say nothing;
- :mod:`book.chapters.tutorial_code`: the seed tutorials' defective classes, kept as text for "The code in
  practice".

Chapters import from these modules directly. This is a top layer of ``book``, beside :mod:`book.minilm` and
:mod:`book.decoder`: it may import the layers below (widgets, figures, compute) and ``mha``.
"""
