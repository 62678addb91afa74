"""SmolLM2-135M-Instruct in the book: the census of its 270 heads, its attention sink, grouped-query sharing,
head ablations and induction on random tokens written twice.

- :mod:`book.smollm2.census`: the corpus and every measurement ("What trained heads do" and "Heads that work
  together"), run by ``make smollm2-heads`` into ``data/smollm2_heads.json``.

The model itself, on ``mha``'s layers, is :mod:`mha.pretrained.smollm2`.
"""
