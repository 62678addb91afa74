"""book.chapters.training_plots: the figures show the shipped results, mean over seeds, every seed visible."""

import matplotlib
import numpy as np
import pytest

from book.chapters.tasks import TASKS
from book.chapters.training import load_results
from book.chapters.training_plots import plot_accuracy_by_heads, plot_learning_curves

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def results():
    return load_results()


def finals(results, task, h):
    return [
        r["final"]["accuracy"]
        for r in results["runs"].values()
        if r["config"]["task"] == task and r["config"]["h"] == h
    ]


def test_accuracy_by_heads_plots_the_mean_and_every_seed(results):
    import matplotlib.pyplot as plt

    fig = plot_accuracy_by_heads(results)
    grid = results["grid"]
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["lookup by position", "lookup by content"]
    by_family = [[t for t in grid["tasks"] if TASKS[t].family == f] for f in ("copy", "recall")]
    for ax, tasks in zip(axes, by_family, strict=True):
        means = [line for line in ax.get_lines() if line.get_label() and not line.get_label().startswith("_")]
        assert [line.get_label().split()[0] for line in means] == tasks
        for line, task in zip(means, tasks, strict=True):
            np.testing.assert_allclose(line.get_xdata(), grid["h"])
            np.testing.assert_allclose(
                line.get_ydata(), [np.mean(finals(results, task, h)) for h in grid["h"]]
            )
        dots = [line for line in ax.get_lines() if line.get_marker() == "o"]
        assert sum(len(line.get_ydata()) for line in dots) == len(tasks) * len(grid["h"]) * len(grid["seeds"])
    plt.close(fig)


@pytest.mark.parametrize("metric", ["accuracy", "loss"])
def test_learning_curves_one_panel_per_task_one_line_per_h(results, metric):
    import matplotlib.pyplot as plt

    fig = plot_learning_curves(results, tasks=["copy-3", "recall-3"], metric=metric)
    assert [ax.get_title() for ax in fig.axes] == ["copy-3", "recall-3"]
    run = results["runs"]["copy-3/h4/seed0"]
    line = next(line for line in fig.axes[0].get_lines() if line.get_label() == "h = 4")
    np.testing.assert_allclose(line.get_xdata(), run["curve"]["step"])
    seeds = [results["runs"][f"copy-3/h4/seed{s}"]["curve"][metric] for s in results["grid"]["seeds"]]
    np.testing.assert_allclose(line.get_ydata(), np.mean(seeds, axis=0))
    plt.close(fig)


def test_bad_arguments_raise(results):
    with pytest.raises(ValueError, match="metric"):
        plot_learning_curves(results, metric="perplexity")
    with pytest.raises(ValueError, match="no tasks"):
        plot_accuracy_by_heads(results, tasks=[])
    with pytest.raises(KeyError, match="no runs"):
        plot_learning_curves({**results, "grid": {**results["grid"], "h": [3]}})
