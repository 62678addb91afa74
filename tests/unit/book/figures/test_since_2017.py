"""Tests of book.figures.since_2017: the layer-stack figure draws what it is given and checks its inputs."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest

from book.compute.since_2017 import layer_masks, receptive_fields
from book.figures.since_2017 import plot_layer_stack


def test_plot_layer_stack_draws_each_mask_and_field():
    masks = layer_masks(8, window=3, layers=3, global_period=3)
    seen = receptive_fields(masks)
    fig = plot_layer_stack(masks, seen, kinds=["local, window 3", "local, window 3", "global"])
    axes = fig.axes
    assert len(axes) == 6
    assert [ax.get_title() for ax in axes[:3]] == [
        "layer 1\nlocal, window 3",
        "layer 2\nlocal, window 3",
        "layer 3\nglobal",
    ]
    for layer in range(3):
        assert (axes[layer].images[0].get_array() == masks[layer].numpy()).all()
        assert (axes[3 + layer].images[0].get_array() == seen[layer].numpy()).all()
    matplotlib.pyplot.close(fig)


def test_plot_layer_stack_checks_its_inputs():
    masks = layer_masks(4, window=2, layers=2)
    with pytest.raises(TypeError, match="masks"):
        plot_layer_stack(masks.int(), masks, kinds=["a", "b"])
    with pytest.raises(ValueError, match="seen"):
        plot_layer_stack(masks, masks[:1], kinds=["a", "b"])
    with pytest.raises(ValueError, match="kinds"):
        plot_layer_stack(masks, masks, kinds=["a"])
