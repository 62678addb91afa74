"""book.figures.attention_2026: the 2025-2026 figures draw what they are given."""

from __future__ import annotations

import pytest

from book.figures.attention_2026 import plot_memory_lines, plot_recall


def test_figures_draw_what_they_are_given():
    fig = plot_recall([4, 8], {"a": [1.0, 0.5], "b": [1.0, 1.0]}, d_k=8)
    lines = [line for line in fig.axes[0].lines if len(line.get_xdata()) == 2 and line.get_label() in "ab"]
    assert [list(line.get_ydata()) for line in lines] == [[1.0, 0.5], [1.0, 1.0]]
    fig = plot_memory_lines([1024, 2048], {"flat": [2**30, 2**30], "grows": [2**30, 2**31]}, title="t")
    assert [list(line.get_ydata()) for line in fig.axes[0].lines] == [[1.0, 1.0], [1.0, 2.0]]
    with pytest.raises(ValueError, match="has 1 values for 2 points"):
        plot_memory_lines([1, 2], {"x": [1]}, title="t")
    with pytest.raises(ValueError, match="at least one line"):
        plot_recall([1], {}, d_k=1)
