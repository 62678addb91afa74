"""mha.figures.heatmaps: panels, colour scale, masked cells, the average panel, errors, the update path."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.figure import Figure

import mha
from mha.figures import plot_heads
from mha.figures.heatmaps import CMAP, HeadPlot

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
    texts = [t.get_text() for t in ax.texts]
    assert texts[:3] == ["a", "b", "c"]  # row labels of the first panel
    bottom = [t.get_text() for t in panels(fig)[1].texts]
    assert bottom == ["w", "x", "y", "z"]  # column labels of the panel in the bottom row


def test_key_tokens_default_to_query_tokens_for_self_attention():
    weights, _ = causal_weights(1, 6)
    fig = plot_heads(weights, query_tokens=TOKENS)
    assert [t.get_text() for t in panels(fig)[0].texts] == TOKENS + TOKENS


def test_masked_cells_are_hatched_and_look_unlike_weight_zero():
    # One head, three tokens, causal: row 2 attends with weight exactly 0 to key 0 (allowed but unused).
    weights = torch.tensor([[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]])  # (1, 3, 3)
    mask = mha.causal_mask(3)
    plot = HeadPlot(1, 3, 3)
    plot.update(weights, mask)
    overlay = plot.overlays[0].get_array()  # (3 s, 3 s, 4)
    s = overlay.shape[0] // 3
    np.testing.assert_array_equal(overlay[::s, ::s, 3] > 0, ~mask.numpy())  # opaque exactly where masked

    pixels = plot.render()
    ax = plot.axes[0]
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


def test_masked_key_shown_only_when_something_is_masked():
    weights, mask = causal_weights(2, 4)
    plot = HeadPlot(2, 4, 4)
    plot.update(weights, mask)
    assert plot._swatch.get_visible()
    plot.update(torch.full((2, 4, 4), 0.25))
    assert not plot._swatch.get_visible()
    plot.update(torch.full((2, 4, 4), 0.25), torch.ones(4, 4, dtype=torch.bool))
    assert not plot._swatch.get_visible()


def test_padding_mask_of_mha_broadcasts():
    n, length = 5, 3
    mask = mha.padding_mask([length], n)  # (1, 1, 1, n)
    _, weights = mha.MultiHeadAttention(8, 2)(torch.randn(1, n, 8), mask=mask)  # (1, 2, n, n)
    plot = HeadPlot(2, n, n)
    plot.update(weights[0], mask)
    assert plot.mask.shape == (2, n, n)
    assert not plot.mask[..., length:].any() and plot.mask[..., :length].all()


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


@pytest.mark.parametrize(("h", "average"), [(4, False), (8, False), (5, False), (8, True), (16, False)])
def test_update_reuses_the_figure_and_matches_a_fresh_one(h, average):
    # One row of panels, two, a short last row (labels copied into the gap), three rows, four rows.
    weights_a, mask = causal_weights(h, 6, seed=1)
    weights_b = torch.softmax(torch.randn(h, 6, 6, dtype=torch.float64), dim=-1)
    kwargs = {"query_tokens": TOKENS, "key_tokens": TOKENS, "d_k": 8, "title": "t", "average": average}
    plot = HeadPlot(h, 6, 6, **kwargs)
    plot.update(weights_a, mask)
    plot.render()
    fig, n_artists = plot.figure, len(plot.figure.findobj())
    plot.update(weights_b)
    updated = plot.render().copy()
    assert plot.figure is fig and len(fig.findobj()) == n_artists
    for image, w in zip(plot.images, weights_b, strict=False):  # strict=False: the mean panel comes last
        np.testing.assert_array_equal(image.get_array(), w.numpy())

    fresh = HeadPlot(h, 6, 6, **kwargs)
    fresh.update(weights_b)
    np.testing.assert_array_equal(updated, fresh.render())
    # The cached drawing gives exactly the pixels of a full matplotlib draw.
    fresh.figure.canvas.draw()
    np.testing.assert_array_equal(updated, np.asarray(fresh.figure.canvas.buffer_rgba()))


def test_set_labels_changes_text_in_place_and_matches_a_fresh_figure():
    weights, mask = causal_weights(2, 6)
    plot = HeadPlot(2, 6, 6, query_tokens=TOKENS, key_tokens=TOKENS, d_k=4)
    plot.update(weights, mask)
    plot.render()
    fig, n_artists = plot.figure, len(plot.figure.findobj())
    longer = ["a", "considerably", "longer", "sentence", "than", "before"]
    plot.set_labels(query_tokens=longer, key_tokens=longer, d_k=8)
    relabelled = plot.render().copy()
    assert plot.figure is fig and len(fig.findobj()) == n_artists
    assert [ax.get_title() for ax in plot.axes] == ["head 1 (d_k=8)", "head 2 (d_k=8)"]

    fresh = HeadPlot(2, 6, 6, query_tokens=longer, key_tokens=longer, d_k=8)
    fresh.update(weights, mask)
    np.testing.assert_array_equal(relabelled, fresh.render())


@pytest.mark.parametrize("h", [3, 8])
def test_changing_only_tokens_or_only_d_k_redraws_exactly_that(h):
    weights = torch.softmax(torch.randn(h, 6, 6, dtype=torch.float64), dim=-1)
    other = ["one", "two", "three", "four", "five", "six"]
    plot = HeadPlot(h, 6, 6, query_tokens=TOKENS, key_tokens=TOKENS, d_k=4, label_chars=10)
    plot.update(weights)
    plot.render()
    for labels, d_k in ((other, 4), (other, 16), (TOKENS, 16)):  # tokens only, d_k only, tokens only
        plot.set_labels(query_tokens=labels, key_tokens=labels, d_k=d_k)
        fresh = HeadPlot(h, 6, 6, query_tokens=labels, key_tokens=labels, d_k=d_k, label_chars=10)
        fresh.update(weights)
        fresh.figure.canvas.draw()  # a full matplotlib draw, no caches
        np.testing.assert_array_equal(plot.render(), np.asarray(fresh.figure.canvas.buffer_rgba()))


def test_update_rejects_another_layout_and_render_needs_weights():
    plot = HeadPlot(2, 3, 3)
    with pytest.raises(RuntimeError, match="call update"):
        plot.render()
    with pytest.raises(ValueError, match="do not fit"):
        plot.update(torch.full((3, 3, 3), 1 / 3))
    with pytest.raises(ValueError, match="n_q must be a positive int"):
        HeadPlot(2, 0, 3)


def test_png_is_a_png_of_the_figure_size():
    plot = HeadPlot(2, 3, 3, dpi=50)
    plot.update(torch.full((2, 3, 3), 1 / 3))
    png = plot.to_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = (round(v) for v in plot.figure.bbox.size)
    assert int.from_bytes(png[16:20], "big") == width and int.from_bytes(png[20:24], "big") == height
