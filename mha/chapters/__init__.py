"""Chapter material: what one chapter needs and no other layer should know about.

- :mod:`mha.chapters.tasks`, :mod:`mha.chapters.training`, :mod:`mha.chapters.training_plots` and
  :mod:`mha.chapters.train_heads`: the toy tasks of "Why multiple heads?", their training, the shipped
  weights and results in ``data/``, and their figures;
- :mod:`mha.chapters.worked_example`: the numeric example of "Step by step";
- :mod:`mha.chapters.tutorial_code`: the seed tutorials' defective classes, kept as text for "The code".

Chapters import from these modules directly. This is the top layer: it may import every other layer.
"""
