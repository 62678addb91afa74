"""Lazy access to ``matplotlib.pyplot`` for the figure-returning functions of ``mha``.

The book's figures are made with ``pyplot`` so that a notebook shows each one exactly once, at the end of
its cell, like any other pyplot figure (chapters write ``fig = mha.plot_...(...)``). Importing ``pyplot``
picks a backend, though, which ``import mha`` must not do (the widgets render with Agg and never need it),
so pyplot is imported here, on the first figure.
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from book.figures._text import figure_texts, language, use_language


def figure(**kwargs: Any) -> Figure:
    """``pyplot.figure(**kwargs)``, importing pyplot on first use."""
    import matplotlib.pyplot as plt

    use_language()
    return plt.figure(**kwargs)


def subplots(*args: Any, **kwargs: Any) -> tuple[Figure, Any]:
    """``pyplot.subplots(*args, **kwargs)``, importing pyplot on first use."""
    import matplotlib.pyplot as plt

    use_language()
    return plt.subplots(*args, **kwargs)


def png(fig: Figure, *, dpi: int) -> bytes:
    """``fig`` as PNG bytes, and closed: the picture a figure's HTML holds (a box's print picture), not a
    figure the cell shows again.

    In the Chinese mode (:mod:`book.figures._text`) the PNG also carries, as its text chunk
    ``figure_texts``, the texts it shows and those kept as they are, which ``python -m scripts.zh_plots``
    records, as the display of a figure records them in its output's metadata.
    """
    import io
    import json

    import matplotlib.pyplot as plt

    metadata = {}
    if language() == "zh":
        fig.canvas.draw()  # drawing creates the tick labels, which figure_texts reads
        metadata["figure_texts"] = json.dumps(figure_texts(fig))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata=metadata)
    plt.close(fig)
    return buffer.getvalue()
