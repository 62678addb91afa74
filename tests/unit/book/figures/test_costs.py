"""book.figures.costs: the plotted numbers are the cost functions' numbers."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from book.figures.costs import plot_attention_macs, plot_head_widths, plot_kv_cache
from mha.costs.configs import MODEL_CONFIGS, MODELS_2025_2026
from mha.costs.counts import attention_macs_parts, kv_cache_bytes, model_kv_cache_bytes


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _markers(ax):
    """``[(kind, (x, y) in data coordinates, (x, y) in pixels)]`` for every marker of the scatter."""
    ax.figure.canvas.draw()
    return [
        (coll.get_label(), tuple(xy), tuple(ax.transData.transform(xy)))
        for coll in ax.collections
        for xy in coll.get_offsets().tolist()
    ]


def test_head_widths_plots_every_model_with_a_marker_of_its_kind():
    fig = plot_head_widths()
    ax = fig.axes[0]
    markers = _markers(ax)
    assert {kind for kind, _, _ in markers} == {"MHA", "GQA", "MQA", "MLA"}
    shown = [c for c in MODEL_CONFIGS.values() if c.name not in MODELS_2025_2026]  # one head width each
    for c in shown:
        # a marker of the model's kind on its line of constant d_k, at most a small step from (h d_k, h)
        near = [
            (x, y) for kind, (x, y), _ in markers if kind == c.attention and 0.8 < x / (c.h * c.d_k) < 1.25
        ]
        assert any(abs(x / y - c.d_k) < 1e-9 for x, y in near), c.name
    labels = "\n".join(t.get_text() for t in ax.texts)
    for c in shown:
        assert c.name in labels
    assert not any(name in labels for name in MODELS_2025_2026)
    assert "Gemma 3 27B (d_model 5376)" in labels  # a model that sets its head width apart says so


def test_no_marker_hides_a_marker_of_another_kind():
    """LLaMA 7B (MHA) and Llama 3.1 8B (GQA) have the same d_model and h: both markers must show."""
    fig = plot_head_widths()
    ax = fig.axes[0]
    markers = _markers(ax)
    diameter = (ax.collections[0].get_sizes()[0] ** 0.5) * fig.dpi / 72  # marker size s is in points^2
    for i, (kind_a, _, (xa, ya)) in enumerate(markers):
        for kind_b, _, (xb, yb) in markers[i + 1 :]:
            if kind_a != kind_b:
                assert ((xa - xb) ** 2 + (ya - yb) ** 2) ** 0.5 > diameter, (kind_a, kind_b)


def test_labels_of_shared_points_name_each_kind():
    labels = [t.get_text() for t in plot_head_widths().axes[0].texts]
    llama_7b = next(label for label in labels if "LLaMA 7B" in label)
    llama_3 = next(label for label in labels if "Llama 3.1 8B" in label)
    assert llama_7b != llama_3
    assert llama_7b.endswith("(MHA)") and "Llama 2 7B" in llama_7b
    assert llama_3.endswith("(GQA)") and "Mistral 7B" in llama_3
    # a point shared by models of one kind keeps one marker and a plain label
    bert = next(label for label in labels if "BERT-base" in label)
    assert "GPT-2 small" in bert and "(MHA)" not in bert


def test_head_widths_of_a_subset():
    ax = plot_head_widths(["GPT-2 small", "Llama 2 7B"]).axes[0]
    assert sorted(tuple(xy) for _, xy, _ in _markers(ax)) == [(768, 12), (4096, 32)]


def test_attention_macs_lines_are_the_two_parts():
    ns = [64, 256, 1024, 4096]
    fig = plot_attention_macs(["GPT-2 small", "Falcon-7B"], ns)
    assert len(fig.axes) == 2
    for ax, name in zip(fig.axes, ["GPT-2 small", "Falcon-7B"], strict=True):
        c = MODEL_CONFIGS[name]
        parts = [attention_macs_parts(c.d_model, c.h, n, n_kv_heads=c.n_kv_heads) for n in ns]
        projections, scores = ax.lines[0], ax.lines[1]
        assert list(projections.get_xdata()) == ns
        assert list(projections.get_ydata()) == [p for p, _ in parts]
        assert list(scores.get_ydata()) == [s for _, s in parts]


@pytest.mark.parametrize("name", ["GPT-2 small", "Llama 3.1 8B", "Falcon-7B"])
def test_crossing_marks_the_length_where_scores_equal_projections(name):
    ns = [2**k for k in range(6, 14)]
    fig = plot_attention_macs([name], ns)
    crossing = fig.axes[0].lines[2].get_xdata()[0]
    c = MODEL_CONFIGS[name]
    projections, scores = attention_macs_parts(c.d_model, c.h, crossing, n_kv_heads=c.n_kv_heads)
    assert projections == scores
    below = attention_macs_parts(c.d_model, c.h, crossing - 1, n_kv_heads=c.n_kv_heads)
    assert below[1] < below[0]


def test_no_crossing_line_outside_the_plotted_lengths():
    fig = plot_attention_macs(["GPT-3 175B"], [64, 128, 256])  # n* = 24576
    assert len(fig.axes[0].lines) == 2


def test_kv_cache_lines_count_windows_and_latents():
    ns = [512, 4096, 131072]
    ax = plot_kv_cache(["Mistral 7B", "Gemma 3 27B", "DeepSeek-V3"], ns).axes[0]
    for name in ("Mistral 7B", "Gemma 3 27B", "DeepSeek-V3"):
        line = next(line for line in ax.lines if line.get_label().startswith(name))
        assert list(line.get_ydata()) == [model_kv_cache_bytes(name, n) / 2**30 for n in ns]
    mistral = next(line for line in ax.lines if line.get_label().startswith("Mistral 7B"))
    assert mistral.get_ydata()[1] == mistral.get_ydata()[2] == 0.5  # the rolling buffer: 4096 tokens at most


def test_attention_macs_refuse_latent_attention():
    with pytest.raises(ValueError, match="DeepSeek-V3 uses latent attention"):
        plot_attention_macs(["DeepSeek-V3"], [64, 128])


def test_kv_cache_lines_are_in_gib():
    ns = [256, 4096]
    fig = plot_kv_cache(["Llama 2 70B", "Falcon-7B"], ns, batch=2, dtype=torch.float16)
    ax = fig.axes[0]
    for name in ("Llama 2 70B", "Falcon-7B"):
        c = MODEL_CONFIGS[name]
        line = next(line for line in ax.lines if line.get_label().startswith(name))
        expected = [
            kv_cache_bytes(c.n_layers, c.n_kv_heads, c.d_k, n, batch=2, dtype=torch.float16) / 2**30
            for n in ns
        ]
        assert list(line.get_ydata()) == expected


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: plot_kv_cache(["BERT-base"], [8]), ValueError),
        (lambda: plot_kv_cache(["GPT-5"], [8]), KeyError),
        (lambda: plot_attention_macs(["GPT-2 small"], []), ValueError),
        (lambda: plot_attention_macs([], [8]), ValueError),
    ],
)
def test_bad_arguments(call, error):
    with pytest.raises(error):
        call()


def test_head_width_labels_overlap_no_other_label_and_stay_in_the_figure():
    """At the book's figure text size (book.figures._style.TEXT_PT) the labels still leave each other room."""
    fig = plot_head_widths()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in ax.texts]
    boxes.append(("the legend", ax.get_legend().get_window_extent(renderer)))
    inside = fig.bbox
    for i, (a, box_a) in enumerate(boxes):
        assert inside.x0 <= box_a.x0 and box_a.x1 <= inside.x1, a
        assert inside.y0 <= box_a.y0 and box_a.y1 <= inside.y1, a
        for b, box_b in boxes[i + 1 :]:
            assert not box_a.overlaps(box_b), (a, b)


def test_layer_caches_draw_a_flat_state_and_steps_of_compressed_entries():
    from book.figures import plot_layer_caches

    layers = [("Qwen3-Next-80B-A3B", 0), ("Qwen3-Next-80B-A3B", 3), ("DeepSeek-V4-Flash", 3)]
    fig = plot_layer_caches(layers, max_context=4096)
    left, right = fig.axes[:2]
    state, full, compressed = (line.get_ydata() for line in left.get_lines())
    assert len(set(state)) == 1 and state[0] == 548_864 * 2  # the Gated DeltaNet state, bfloat16
    assert list(left.get_lines()[1].get_xdata())[-1] == 4096 and full[-1] == 4096 * 2 * 2 * 256 * 2
    assert compressed[-1] == (128 * 512 + 4096 // 128 * 512) * 2  # window, then one entry per 128 tokens
    (steps,) = right.get_lines()  # the compressed layer's corners, drawn as steps
    assert steps.get_drawstyle() == "steps-post"
    assert list(steps.get_xdata()) == [1, 128, 256, 384, 512, 640, 768, 896, 1024]
    assert list(steps.get_ydata()) == [0, 1, 2, 3, 4, 5, 6, 7, 8]  # one entry more every 128 tokens
    with pytest.raises(ValueError, match=r"layer index must be an int in 0\.\.47 for Qwen3-Next-80B-A3B"):
        plot_layer_caches([("Qwen3-Next-80B-A3B", 48)])
    assert len(plot_layer_caches([("Llama 3.1 8B", 0)]).axes) == 1  # no compressed layer: one panel
