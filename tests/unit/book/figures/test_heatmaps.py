"""book.figures.heatmaps: panels, colour scale, masked cells, the average panel, literal labels, errors."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

import mha
from book.figures import plot_heads
from book.figures.heatmaps import CMAP

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def causal_weights(h: int, n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Real attention weights of shape (h, n, n) under a causal mask, and the mask."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(h, n, 4, generator=g, dtype=torch.float64) for _ in range(3))
    mask = mha.causal_mask(n)
    return mha.scaled_dot_product_attention(q, k, v, mask)[1], mask  # (h, n, n), (n, n)


def panels(fig: Figure) -> list:
    """The heatmap panels of a figure: the axes that hold an image (the colour bar holds none)."""
    return [ax for ax in fig.axes if ax.images]


def pixel(pixels: np.ndarray, ax, row: float, col: float) -> np.ndarray:
    """RGB of the rendered pixel at data coordinates (col, row) of ``ax``."""
    x, y = ax.transData.transform((col, row))
    return pixels[pixels.shape[0] - round(y), round(x), :3]


@pytest.mark.parametrize("h", [1, 2, 3, 8])
def test_one_panel_per_head_titled_with_index_and_d_k(h):
    weights, _ = causal_weights(h, 5)
    fig = plot_heads(weights, d_k=16)
    assert isinstance(fig, Figure)
    assert len(panels(fig)) == h
    assert [ax.get_title() for ax in panels(fig)] == [f"head {i} (d_k=16)" for i in range(1, h + 1)]
    assert len(fig.axes) == h + 1  # one colour bar for all panels


def test_single_head_2d_input_and_title_without_d_k():
    weights, _ = causal_weights(1, 4)
    fig = plot_heads(weights[0], title="one head")
    assert [ax.get_title() for ax in panels(fig)] == ["head 1"]
    assert "one head" in [t.get_text() for t in fig.texts]


def test_shared_colour_scale_from_0_to_1():
    weights, _ = causal_weights(4, 6)
    fig = plot_heads(weights)
    for ax in panels(fig):
        image = ax.images[0]
        assert (image.norm.vmin, image.norm.vmax) == (0.0, 1.0)
        assert image.get_cmap().name == CMAP
    bars = [ax for ax in fig.axes if not ax.images]
    assert len(bars) == 1
    assert bars[0].get_ylim() == (0.0, 1.0)


def test_queries_on_rows_keys_on_columns_with_token_labels():
    weights = torch.softmax(torch.randn(2, 3, 4), dim=-1)  # (h, n_q, n_k): cross-attention, n_q != n_k
    fig = plot_heads(weights, query_tokens=["a", "b", "c"], key_tokens=["w", "x", "y", "z"])
    ax = panels(fig)[0]
    np.testing.assert_allclose(ax.images[0].get_array(), weights[0].numpy(), rtol=1e-6)
    assert ax.images[0].get_array().shape == (3, 4)  # rows = queries
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]  # rows of the first panel
    bottom = [t.get_text() for t in panels(fig)[1].get_xticklabels()]
    assert bottom == ["w", "x", "y", "z"]  # column labels of the panel in the bottom row


def test_key_tokens_default_to_query_tokens_for_self_attention():
    weights, _ = causal_weights(1, 6)
    fig = plot_heads(weights, query_tokens=TOKENS)
    ax = panels(fig)[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS


def test_labels_are_drawn_literally():
    """A ``$`` in a token never starts matplotlib mathtext: ``$x^2$`` is drawn as typed."""
    tokens = ["$x^2$", "\\foo", "<b>", "多头"]
    fig = plot_heads(torch.full((1, 4, 4), 0.25), query_tokens=tokens)
    fig.canvas.draw()  # would raise on "\\foo" if it were parsed as mathtext
    labels = panels(fig)[0].get_yticklabels()
    assert [t.get_text() for t in labels] == [t.replace("$", "\\$") for t in tokens]
    assert not any(t._preprocess_math(t.get_text())[1] for t in labels)  # no label is mathtext


def render(fig: Figure) -> np.ndarray:
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())


def test_masked_cells_are_hatched_and_look_unlike_weight_zero():
    # One head, three tokens, causal: row 2 attends with weight exactly 0 to key 0 (allowed but unused).
    weights = torch.tensor([[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]])  # (1, 3, 3)
    mask = mha.causal_mask(3)
    fig = plot_heads(weights, mask=mask)
    ax = panels(fig)[0]
    overlay = ax.images[1].get_array()  # (3 s, 3 s, 4)
    s = overlay.shape[0] // 3
    np.testing.assert_array_equal(overlay[::s, ::s, 3] > 0, ~mask.numpy())  # opaque exactly where masked

    pixels = render(fig)
    zero = pixel(pixels, ax, 2, 0)  # allowed, weight 0: the bottom colour of the scale
    expected_zero = np.round(np.array(matplotlib.colormaps[CMAP](0.0)[:3]) * 255)
    np.testing.assert_allclose(zero, expected_zero, atol=2)
    x0, y0 = ax.transData.transform((1.5, 0.5))  # masked cell (0, 2): corners at (1.5, -0.5) .. (2.5, 0.5)
    x1, y1 = ax.transData.transform((2.5, -0.5))
    h = pixels.shape[0]
    patch = (
        pixels[h - int(y1) + 2 : h - int(y0) - 2, int(x0) + 2 : int(x1) - 2, :3].reshape(-1, 3).astype(int)
    )
    assert np.all(patch.max(axis=1) - patch.min(axis=1) <= 2)  # grey: no colour of the viridis scale
    assert len({tuple(p) for p in patch}) >= 2  # light base and dark hatching lines
    assert np.abs(patch - expected_zero).sum(axis=1).min() > 60  # nowhere near the colour of weight 0


def legend_texts(fig: Figure) -> list[str]:
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def test_masked_key_shown_only_when_something_is_masked():
    weights, mask = causal_weights(2, 4)
    assert legend_texts(plot_heads(weights, mask=mask)) == ["masked"]
    assert legend_texts(plot_heads(torch.full((2, 4, 4), 0.25))) == []
    assert (
        legend_texts(plot_heads(torch.full((2, 4, 4), 0.25), mask=torch.ones(4, 4, dtype=torch.bool))) == []
    )


def test_padding_mask_of_mha_broadcasts():
    n, length = 5, 3
    mask = mha.padding_mask([length], n)  # (1, 1, 1, n)
    _, weights = mha.MultiHeadAttention(8, 2)(torch.randn(1, n, 8), mask=mask)  # (1, 2, n, n)
    fig = plot_heads(weights[0].detach(), mask=mask)
    for ax in panels(fig):
        overlay = ax.images[1].get_array()  # (n s, n s, 4)
        s = overlay.shape[0] // n
        hidden = overlay[::s, ::s, 3] > 0  # (n, n)
        assert hidden[:, length:].all() and not hidden[:, :length].any()


def test_average_panel_is_the_mean_over_heads():
    weights, mask = causal_weights(3, 4)
    fig = plot_heads(weights, mask=mask, average=True)
    axes = panels(fig)
    assert len(axes) == 4
    assert axes[-1].get_title() == "mean of 3 heads"
    np.testing.assert_allclose(axes[-1].images[0].get_array(), weights.mean(0).numpy(), rtol=1e-12)
    # A cell is hatched in the average where every head masks it.
    overlay = axes[-1].images[1].get_array()
    s = overlay.shape[0] // 4
    np.testing.assert_array_equal(overlay[::s, ::s, 3] > 0, ~mask.numpy())


def test_draws_into_a_given_figure():
    weights, _ = causal_weights(2, 4)
    fig = Figure()
    assert plot_heads(weights, fig=fig) is fig
    assert plot_heads(weights[:1], fig=fig) is fig  # cleared and redrawn
    assert len(panels(fig)) == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"weights": [[0.5, 0.5]]}, TypeError, "weights must be a torch.Tensor or numpy.ndarray"),
        ({"weights": torch.ones(2, 2, dtype=torch.bool)}, TypeError, "weights must be a real-valued"),
        ({"weights": torch.ones(3)}, ValueError, r"\(h, n_q, n_k\) or \(n_q, n_k\)"),
        ({"weights": torch.full((1, 2, 3, 3), 1 / 3)}, ValueError, r"weights\[b\]"),
        ({"weights": torch.ones(2, 0, 3)}, ValueError, "empty axis"),
        ({"weights": torch.full((2, 2), 1.5)}, ValueError, r"must lie in \[0, 1\]"),
        ({"weights": torch.full((2, 2), float("nan"))}, ValueError, "NaN"),
        ({"mask": torch.ones(3, 3)}, TypeError, "mask must have dtype torch.bool"),
        ({"mask": [[True]]}, TypeError, "mask must be a boolean"),
        ({"mask": torch.ones(4, 3, dtype=torch.bool)}, ValueError, "cannot broadcast"),
        ({"mask": torch.ones(2, 1, 3, 3, dtype=torch.bool)}, ValueError, "cannot broadcast"),
        ({"mask": mha.causal_mask(3)}, ValueError, "nonzero .* where the mask is False"),
        ({"query_tokens": ["a", "b"]}, ValueError, "query_tokens has 2 tokens"),
        ({"query_tokens": "abc"}, TypeError, "query_tokens must be a sequence of strings"),
        ({"key_tokens": [1, 2, 3]}, TypeError, "key_tokens must contain only strings"),
        ({"d_k": 0}, ValueError, "d_k must be a positive int"),
        ({"title": 3}, TypeError, "title must be a str"),
        ({"average": 1}, TypeError, "average must be a bool"),
        ({"fig": "figure"}, TypeError, "fig must be a matplotlib.figure.Figure"),
    ],
)
def test_bad_input_raises_a_clear_error(kwargs, error, match):
    args = {"weights": torch.full((2, 3, 3), 1 / 3), **kwargs}
    with pytest.raises(error, match=match):
        plot_heads(args.pop("weights"), **args)


def test_numpy_input_and_float32_tolerance():
    weights = torch.softmax(torch.randn(2, 4, 4), dim=-1).numpy()  # float32 rows may sum to 1 + 1e-7
    fig = plot_heads(weights)
    assert len(panels(fig)) == 2
