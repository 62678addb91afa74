"""Chapter material: what one chapter needs and no other layer should know about.

- :mod:`mha.chapters.tasks`, :mod:`mha.chapters.training`, :mod:`mha.chapters.training_plots` and
  :mod:`mha.chapters.train_heads`: the toy tasks of the appendix "Heads in toy models" (summarised in
  "Why multiple heads?"), their training, the shipped weights and results in ``data/``, and their figures;
- :mod:`mha.chapters.worked_example`: the numeric example of "Step by step";
- :mod:`mha.chapters.minilm_heads` and :mod:`mha.chapters.minilm_viewer`: the corpus, the census, ablations
  and pruning of all-MiniLM-L6-v2's heads, and the viewer's data, for "What trained heads do" and chapter 1;
- :mod:`mha.chapters.tutorial_code`: the seed tutorials' defective classes, kept as text for "The code in
  practice".

Chapters import from these modules directly. This is the top layer: it may import every other layer.
"""
