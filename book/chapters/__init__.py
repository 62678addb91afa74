"""Chapter material: what one chapter needs and no other layer should know about.

- :mod:`book.chapters.tasks`, :mod:`book.chapters.training`, :mod:`book.chapters.training_plots` and
  :mod:`book.chapters.train_heads`: the toy tasks of the appendix "Heads in toy models" (summarised in
  "Why multiple heads?"), their training, the shipped weights and results in ``data/``, and their figures;
- :mod:`book.chapters.worked_example`: the numeric example of "Step by step";
- :mod:`book.minilm.census` and :mod:`book.minilm.stored`: the corpus, the census, ablations and pruning of
  all-MiniLM-L6-v2's heads, and the box's stored weights, for "What trained heads do" and chapter 1;
- :mod:`book.chapters.tutorial_code`: the seed tutorials' defective classes, kept as text for "The code in
  practice".

Chapters import from these modules directly. This is the top layer: it may import every other layer.
"""
