"""book.decoder.induction_plots: each figure draws exactly the numbers it is given, and refuses bad ones."""

import matplotlib
import numpy as np
import pytest
import torch

from book.decoder import induction
from book.decoder.induction_plots import plot_copy_probabilities, plot_decoder_heads, plot_training_log

matplotlib.use("Agg")


def _causal(L, h, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(L, h, n, n, generator=g)
    mask = torch.ones(n, n, dtype=torch.bool).tril()
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # (L, h, n, n)


def _close(fig):
    import matplotlib.pyplot as plt

    plt.close(fig)


def _panels(fig):
    return [ax for ax in fig.axes if ax.get_title()]


def test_decoder_heads_draw_every_head_by_default_named_as_the_book_does():
    attention = _causal(2, 4, 8)
    fig = plot_decoder_heads(attention, list("abcdabcd"), split=4, notes={(0, 1): "previous token"})
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == [
        "L1H1", "L1H2: previous token", "L1H3", "L1H4", "L2H1", "L2H2", "L2H3", "L2H4",
    ]  # fmt: skip
    for ax, (layer, head) in zip(panels, [(i, j) for i in range(2) for j in range(4)], strict=True):
        np.testing.assert_allclose(ax.get_images()[0].get_array(), attention[layer, head].numpy(), atol=1e-7)
    # 8 tokens fit: every token names its row in the first column and its column in the last row
    assert [t.get_text() for t in panels[0].get_yticklabels()] == list("abcdabcd")
    assert [t.get_text() for t in panels[4].get_xticklabels()] == list("abcdabcd")
    assert [t.get_text() for t in panels[1].get_yticklabels()] == [""] * 8  # inner panels: no labels
    _close(fig)


def test_decoder_heads_draw_chosen_heads_in_order_and_mark_the_copies_when_tokens_do_not_fit():
    attention = _causal(2, 4, 60)
    fig = plot_decoder_heads(attention, ["x"] * 60, heads=[(1, 2), (0, 0)], split=30)
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == ["L2H3", "L1H1"]
    np.testing.assert_allclose(panels[0].get_images()[0].get_array(), attention[1, 2].numpy(), atol=1e-7)
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["copy 1", "copy 2"]
    assert list(panels[0].get_yticks()) == [0, 30]
    split_lines = [line for line in panels[0].get_lines() if line.get_linestyle() != "None"]
    assert len(split_lines) == 2  # one across, one down, at the start of the second copy
    _close(fig)


def test_decoder_heads_show_spaces_and_newlines_as_visible_marks():
    attention = _causal(1, 1, 4)
    fig = plot_decoder_heads(attention, ["a", " ", "\n", "b"])
    assert [t.get_text() for t in _panels(fig)[0].get_yticklabels()] == ["a", "\u2423", "\u23ce", "b"]
    _close(fig)


def test_decoder_heads_fit_the_slide_box():
    for n in (8, 16, 40, 128):
        fig = plot_decoder_heads(_causal(2, 4, n), split=n // 2)
        width, height = fig.get_size_inches()
        assert width <= 9.4 and height <= 5.5, (n, width, height)
        _close(fig)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"attention": [[[[1.0]]]]}, TypeError, "torch.Tensor or numpy.ndarray"),
        ({"attention": torch.ones(4, 3, 3)}, ValueError, r"shape \(L, h, n, n\)"),
        ({"attention": torch.ones(1, 1, 3, 3) / 3}, ValueError, "causal"),
        ({"heads": [(2, 0)]}, ValueError, r"layer in 0\.\.1 and head in 0\.\.3"),
        ({"heads": [(0, 1.0)]}, ValueError, "0-based"),
        ({"heads": "L1H1"}, TypeError, "sequence of \\(layer, head\\) pairs"),
        ({"tokens": list("abc")}, ValueError, "3 tokens but the attention has n = 6"),
        ({"tokens": "abcdef"}, TypeError, "sequence of strings"),
        ({"split": 6}, ValueError, r"split must be .* in 1\.\.5"),
    ],
)
def test_decoder_heads_refuse_bad_input(kwargs, error, match):
    arguments = {"attention": _causal(2, 4, 6), **kwargs}
    with pytest.raises(error, match=match):
        plot_decoder_heads(**arguments)


def test_copy_probabilities_draw_one_line_per_case_with_its_values():
    values = {"all heads on": torch.linspace(0, 1, 19), "induction heads off": np.full(19, 0.25)}
    fig = plot_copy_probabilities(values, split=10)
    (ax,) = fig.axes
    lines = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert [line.get_label() for line in lines] == list(values)
    np.testing.assert_allclose(lines[0].get_xdata(), np.arange(2, 21))  # tokens 2..n, 1-based
    np.testing.assert_allclose(lines[0].get_ydata(), values["all heads on"].numpy(), atol=1e-7)
    np.testing.assert_allclose(lines[1].get_ydata(), values["induction heads off"])
    (shade,) = ax.patches  # the second copy: tokens 11..20
    assert shade.get_x() == pytest.approx(10.5) and shade.get_width() == pytest.approx(10.0)
    _close(fig)


@pytest.mark.parametrize(
    ("values", "split", "error"),
    [
        ({}, 3, TypeError),
        ({"a": [0.1, 0.2], "b": [0.1]}, 1, ValueError),
        ({"a": [0.1, 1.5]}, 1, ValueError),
        ({"a": [0.1, float("nan")]}, 1, ValueError),
        ({"a": [0.1, 0.2]}, 3, ValueError),
        ({str(i): [0.5] for i in range(9)}, 1, ValueError),
    ],
)
def test_copy_probabilities_refuse_bad_input(values, split, error):
    with pytest.raises(error):
        plot_copy_probabilities(values, split=split)


def test_training_log_draws_the_shipped_curves_and_marks_the_phase_change():
    table = induction.training_curves()
    phase = induction.phase_change(table)
    fig = plot_training_log(
        table, induction_heads=[(1, 0), (1, 3)], previous_heads=[(0, 1)], phase=phase, repeat_first=400
    )
    assert len(fig.axes) == 3  # copying, head scores, held-out loss
    by_label = {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}
    np.testing.assert_allclose(by_label["second copy"].get_xdata(), table.index)
    np.testing.assert_allclose(by_label["second copy"].get_ydata(), table["second"])
    np.testing.assert_allclose(by_label["induction L2H4"].get_ydata(), table["induction L2H4"])
    np.testing.assert_allclose(by_label["previous token L1H2"].get_ydata(), table["previous L1H2"])
    assert by_label["previous token L1H2"].get_linestyle() == "--"
    np.testing.assert_allclose(by_label["held-out text"].get_ydata(), table["loss"])
    for ax in fig.axes:
        (band,) = ax.patches
        assert band.get_x() == phase["start"] and band.get_width() == phase["end"] - phase["start"]
    _close(fig)


def test_training_log_names_a_missing_column():
    table = induction.training_curves().drop(columns=["induction L2H1"])
    with pytest.raises(KeyError, match="induction L2H1"):
        plot_training_log(table, induction_heads=[(1, 0)], previous_heads=[])
