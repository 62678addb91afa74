"""book.figures.pretrained: the figures of real heads plot the numbers they are given, numbered 1-based.

Synthetic inputs only: no model is loaded here (tests/unit/mha/pretrained/test_minilm.py covers the model).
"""

import matplotlib
import numpy as np
import pytest
import torch

from book.figures.pretrained import (
    LABELS,
    PATTERN_NAMES,
    plot_attention_head,
    plot_census_by_layer,
    plot_head_grid,
    plot_head_patterns,
    plot_head_values,
    plot_pruning_curve,
)
from mha.pretrained.heads import PATTERNS

matplotlib.use("Agg")

L, H, N = 3, 4, 5


@pytest.fixture(autouse=True)
def _close_figures():
    import matplotlib.pyplot as plt

    yield
    plt.close("all")


def weights(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(3 * torch.randn(*shape, generator=g, dtype=torch.float64), dim=-1)


def tokens(n=N):
    return ["[CLS]", "$x$", "cat", "多头", "[SEP]"][:n] if n <= 5 else [f"t{i}" for i in range(n)]


def image_data(ax):
    (image,) = ax.get_images()
    return np.asarray(image.get_array())


def test_one_head_draws_its_weights_with_tokens_and_a_1_based_title():
    w = weights(N, N)
    fig = plot_attention_head(w, tokens(), layer=0, head=2)
    ax = fig.axes[0]
    np.testing.assert_allclose(image_data(ax), w.numpy())
    assert ax.get_title() == "layer 1, head 3"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["[CLS]", r"\$x\$", "cat", "多头", "[SEP]"]
    assert image_data(ax).shape == (N, N)
    assert fig.axes[0].get_images()[0].norm.vmin == 0 and fig.axes[0].get_images()[0].norm.vmax == 1


def test_head_grid_has_layers_as_rows_and_heads_as_columns_on_one_scale():
    a = weights(L, H, N, N)
    fig = plot_head_grid(a, tokens(), title="a sentence")
    panels = [ax for ax in fig.axes if ax.get_images()]
    assert len(panels) == L * H
    for p, ax in enumerate(panels):
        layer, head = divmod(p, H)
        np.testing.assert_allclose(image_data(ax), a[layer, head].numpy())
        norm = ax.get_images()[0].norm
        assert (norm.vmin, norm.vmax) == (0.0, 1.0)
    assert [panels[j].get_title() for j in range(H)] == [f"head {j + 1}" for j in range(H)]
    assert [panels[i * H].get_ylabel() for i in range(L)] == [f"layer {i + 1}" for i in range(L)]
    colour_bars = [ax for ax in fig.axes if not ax.get_images()]
    assert len(colour_bars) == 1


@pytest.mark.parametrize("n", [1, 5, 9])
def test_head_grid_names_only_the_first_and_last_token_and_readably(n):
    from book.figures._style import TEXT_PT

    fig = plot_head_grid(weights(L, H, n, n), tokens(n))
    fig.canvas.draw()
    panels = [ax for ax in fig.axes if ax.get_images()]
    corner = panels[(L - 1) * H]
    ends = [tokens(n)[0], tokens(n)[-1]] if n > 1 else [tokens(n)[0]]
    assert [t.get_text() for t in corner.get_xticklabels()] == ends
    assert list(corner.get_xticks()) == ([0, n - 1] if n > 1 else [0])
    assert all(t.get_fontsize() >= TEXT_PT for t in corner.get_xticklabels())
    assert corner.get_yticklabels() == [] or all(not t.get_text() for t in corner.get_yticklabels())
    assert all(not ax.get_xticklabels() for ax in panels if ax is not corner)
    # the labels fit inside the figure, below the panel
    box = fig.bbox
    for label in corner.get_xticklabels():
        extent = label.get_window_extent()
        assert extent.y0 >= box.y0 - 1e-6 and extent.y1 <= corner.get_window_extent().y0 + 1e-6


def test_pattern_grid_colours_each_head_by_its_label_with_counts_in_the_legend():
    labels = [
        ["cls", "broad", "previous", "mixed"],
        ["sep", "cls", "next", "self"],
        ["same_token", "cls", "broad", "cls"],
    ]
    fig = plot_head_patterns(labels)
    ax = fig.axes[0]
    codes = image_data(ax)
    assert codes.shape == (L, H)
    assert [[LABELS[c] for c in row] for row in codes.astype(int)] == labels
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3", "4"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1", "2", "3"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"{PATTERN_NAMES['cls']}: 4" in legend and f"{PATTERN_NAMES['broad']}: 2" in legend
    assert len(legend) == len({x for row in labels for x in row})


def test_pattern_grid_rejects_unknown_labels():
    with pytest.raises(ValueError, match="unknown labels"):
        plot_head_patterns([["cls", "syntax"]])


def test_census_by_layer_plots_every_head_and_the_layer_mean():
    g = torch.Generator().manual_seed(1)
    census = {name: torch.rand(L, H, generator=g) for name in (*PATTERNS, "entropy", "entropy_normalised")}
    fig = plot_census_by_layer(census, measures=("cls", "sep", "entropy"))
    assert len(fig.axes) == 3
    for ax, name in zip(fig.axes, ("cls", "sep", "entropy"), strict=True):
        (dots,) = ax.collections
        np.testing.assert_allclose(np.sort(dots.get_offsets()[:, 1]), np.sort(census[name].numpy().ravel()))
        (mean,) = ax.get_lines()
        np.testing.assert_allclose(mean.get_xdata(), [1, 2, 3])
        np.testing.assert_allclose(mean.get_ydata(), census[name].numpy().mean(axis=1), rtol=1e-6)


def test_head_values_writes_every_number_in_its_cell():
    values = np.arange(L * H, dtype=float).reshape(L, H) / 100
    fig = plot_head_values(values, label="mean cosine", fmt="{:.2f}")
    ax = fig.axes[0]
    np.testing.assert_allclose(image_data(ax), values)
    texts = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts}
    assert texts[(2, 3)] == "0.11" and texts[(0, 0)] == "0.00"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3", "4"]
    assert ax.get_xlabel() == "head" and ax.get_ylabel() == "layer"


def test_pruning_curve_plots_both_metrics_and_the_live_checks():
    cosine = [1.0, 0.99, 0.97, 0.9]
    accuracy = [1.0, 1.0, 0.5, 0.5]
    fig = plot_pruning_curve(cosine, accuracy, checked={0: 1.0, 3: 0.9})
    top, bottom = fig.axes
    (curve,) = top.get_lines()
    np.testing.assert_allclose(curve.get_xdata(), [0, 1, 2, 3])
    np.testing.assert_allclose(curve.get_ydata(), cosine)
    np.testing.assert_allclose(top.collections[0].get_offsets(), [[0, 1.0], [3, 0.9]])
    np.testing.assert_allclose(bottom.get_lines()[0].get_ydata(), accuracy)
    with pytest.raises(ValueError, match="as long"):
        plot_pruning_curve(cosine, accuracy[:2])
    with pytest.raises(ValueError, match="checked steps"):
        plot_pruning_curve(cosine, accuracy, checked={7: 0.5})


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: plot_attention_head(weights(N, N), tokens(), layer=6, head=0), ValueError),
        (lambda: plot_attention_head(weights(N, N), tokens(4), layer=0, head=0), ValueError),
        (lambda: plot_attention_head(2 * weights(N, N), tokens(), layer=0, head=0), ValueError),
        (lambda: plot_head_grid(weights(H, N, N), tokens()), ValueError),
        (lambda: plot_head_values("abc", label="x"), TypeError),
    ],
)
def test_bad_input_raises(call, error):
    with pytest.raises(error):
        call()
