"""Figures of the toy models' training runs: learning curves and final accuracy against the number of heads.

Both functions read the results dict of :func:`book.chapters.training.load_results` (or of
:func:`book.chapters.training.regenerate`), return a ``matplotlib`` figure created with ``pyplot`` and never
call ``plt.show``. Each line is the mean over the seeds; the shaded band or the dots show every seed, so the
spread is visible.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure

from book.chapters.tasks import TASKS
from book.figures._pyplot import subplots
from book.figures._style import TEXT_PT
from book.figures._text import kept, tr


def _runs(results: dict, task: str, h: int) -> list[dict]:
    runs = [r for r in results["runs"].values() if r["config"]["task"] == task and r["config"]["h"] == h]
    if not runs:
        raise KeyError(f"no runs of task {task!r} with h={h} in the results")
    return sorted(runs, key=lambda r: r["config"]["seed"])


def _tasks(results: dict, tasks: Sequence[str] | None) -> list[str]:
    tasks = list(results["grid"]["tasks"] if tasks is None else tasks)
    if not tasks:
        raise ValueError("no tasks to plot")
    return tasks


def plot_learning_curves(
    results: dict, *, tasks: Sequence[str] | None = None, metric: str = "accuracy"
) -> Figure:
    """A panel per task, three per row: held-out ``metric`` ("accuracy" or "loss") by step, a line per h.

    The line is the mean over seeds, the band spans the lowest to the highest seed.
    """
    if metric not in ("accuracy", "loss"):
        raise ValueError(f"metric must be 'accuracy' or 'loss', got {metric!r}")
    tasks = _tasks(results, tasks)
    hs = results["grid"]["h"]
    colours = mpl.colormaps["viridis"](np.linspace(0.0, 0.85, len(hs)))
    ncols = min(3, len(tasks))
    nrows = -(-len(tasks) // ncols)
    fig, axes = subplots(
        nrows, ncols, figsize=(3.1 * ncols, 2.6 * nrows), sharex=True, sharey=True, layout="constrained",
        squeeze=False,
    )  # fmt: skip
    for ax in axes.flat[len(tasks) :]:
        ax.set_visible(False)
    for ax, task in zip(axes.flat, tasks, strict=False):
        for h, colour in zip(hs, colours, strict=True):
            runs = _runs(results, task, h)
            steps = runs[0]["curve"]["step"]
            values = np.array([r["curve"][metric] for r in runs])  # (seeds, points)
            ax.plot(steps, values.mean(0), color=colour, label=kept(f"h = {h}"))
            ax.fill_between(steps, values.min(0), values.max(0), color=colour, alpha=0.25, linewidth=0)
        ax.set_title(kept(task))
        ax.grid(alpha=0.3)
    for column in range(ncols):  # label the lowest visible panel of each column
        ax = axes[(len(tasks) - 1 - column) // ncols, column]
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel(tr("training step"))
    for ax in axes[:, 0]:
        ax.set_ylabel(tr("held-out {metric}", metric=tr(metric)))
    if metric == "loss":
        axes[0, 0].set_yscale("log")
    axes[0, -1].legend(loc="lower right" if metric == "accuracy" else "upper right", fontsize=TEXT_PT)
    return fig


def plot_accuracy_by_heads(results: dict, *, tasks: Sequence[str] | None = None) -> Figure:
    """Final held-out accuracy against ``h`` (log scale): one panel per task family, a dot per seed.

    Lookup by position ("copy") and by content ("recall") get a panel each; within a panel the one-lookup
    control is dashed and the task with more lookups solid. The line is the mean over seeds.
    """
    tasks = _tasks(results, tasks)
    hs = results["grid"]["h"]
    d_model = next(iter(results["runs"].values()))["config"]["d_model"]
    families = list(dict.fromkeys(TASKS[name].family for name in tasks))
    fig, axes = subplots(
        1, len(families), figsize=(4.2 * len(families), 3.6), sharey=True, layout="constrained", squeeze=False
    )
    for ax, family in zip(axes[0], families, strict=True):
        for i, name in enumerate(tasks):
            task = TASKS[name]
            if task.family != family:
                continue
            runs = [_runs(results, name, h) for h in hs]
            finals = np.array([[r["final"]["accuracy"] for r in row] for row in runs])  # (len(hs), seeds)
            style = "--" if task.n_lookups == 1 else "-"
            ax.plot(hs, finals.mean(1), style, color=f"C{i}", label=kept(f"{name} (k = {task.n_lookups})"))
            for h, row in zip(hs, finals, strict=True):
                ax.plot([h] * len(row), row, "o", color=f"C{i}", markersize=4, alpha=0.6)
        ax.set_xscale("log", base=2)
        ax.set_xticks(hs, [kept(f"{h}\n(d_k = {d_model // h})") for h in hs])
        ax.minorticks_off()
        ax.set_xlabel(tr("number of heads h (d_model = {d_model})", d_model=d_model))
        ax.set_title(tr("lookup by position") if family == "copy" else tr("lookup by content"))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=TEXT_PT, loc="center")  # the middle of the panel stays free of data
    axes[0, 0].set_ylabel(tr("held-out accuracy"))
    return fig
