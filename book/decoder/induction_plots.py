"""Figures of "Heads that work together": the decoder's heads, its copying, and how they formed in training.

- :func:`plot_decoder_heads`: chosen heads' attention on one text, a panel each, on the book's 0-1 scale;
- :func:`plot_copy_probabilities`: the probability of the true next token along a repeated sequence, with
  heads switched off or not;
- :func:`plot_training_log`: copying accuracy, head scores and held-out loss over the training steps of the
  shipped log (:func:`book.decoder.induction.training_curves`).

Each function draws the numbers it is given and computes no model maths. Heads are passed as 0-based
``(layer, head)`` pairs and named as the book names them, ``L1H2`` for ``(0, 1)``. Every text is at least
:data:`book.figures._style.TEXT_PT` points, and every figure fits the lecture slide's box.

Shape legend:
    L  number of layers
    h  heads per layer
    n  number of tokens (queries and keys: self-attention)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from book.decoder.induction import head_name, shown
from book.figures import _pyplot
from book.figures._style import TEXT_PT, TITLE_PT
from book.figures._text import kept, tr
from book.figures.heatmaps import _MASK_BASE, _MASK_LINE, as_head_weights, draw_heatmap

_MAX_SIZE = (9.3, 5.4)  # inches: the largest figure a slide shows with its text at 18 px (figures/_style.py)
_TOKEN_PITCH = 0.17  # inches a token needs for its label at TEXT_PT
_MAX_COLUMNS = 4  # panels side by side
# Okabe-Ito hues, safe for colour-blind readers: lines of cases and of heads, in this order.
_COLOURS = ("#000000", "#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#7F7F7F")
_PHASE = "#F0E442"  # Okabe-Ito yellow: the steps of the phase change


def _pairs(name: str, heads: object, L: int, h: int) -> list[tuple[int, int]]:
    """``heads`` as a list of 0-based ``(layer, head)`` pairs of a model of ``L`` layers of ``h`` heads."""
    if isinstance(heads, (str, bytes)) or not isinstance(heads, Sequence) or not heads:
        raise TypeError(f"{name} must be a non-empty sequence of (layer, head) pairs, got {heads!r:.60}")
    pairs = []
    for pair in heads:
        ok = (
            isinstance(pair, Sequence)
            and len(pair) == 2
            and all(isinstance(i, int) and not isinstance(i, bool) for i in pair)
        )
        if not ok or not (0 <= pair[0] < L and 0 <= pair[1] < h):
            raise ValueError(
                f"{name} must hold 0-based (layer, head) pairs with layer in 0..{L - 1} and head in "
                f"0..{h - 1}, got {pair!r}"
            )
        pairs.append((pair[0], pair[1]))
    return pairs


def _split(split: object, n: int) -> int | None:
    if split is None:
        return None
    if isinstance(split, bool) or not isinstance(split, int) or not 1 <= split < n:
        raise ValueError(
            f"split must be the position where the second copy starts, in 1..{n - 1}, got {split!r}"
        )
    return split


def plot_decoder_heads(
    attention: object,
    tokens: Sequence[str] | None = None,
    *,
    heads: Sequence[tuple[int, int]] | None = None,
    split: int | None = None,
    notes: Mapping[tuple[int, int], str] | None = None,
    title: str | None = None,
) -> Figure:
    """Chosen heads of the decoder on one text: a heatmap per head, queries on rows, keys on columns.

    Every panel shares the 0-1 scale; the keys a query may not see (the future) are hatched grey. Where a
    panel has room for a label per token (about 0.17 inches a token), every row and column is labelled with
    its token (a space as ``␣``); otherwise, with ``split``, the first token of each copy is marked, and else
    every tenth position.

    Args:
        attention: every head's weights on the text, ``(L, h, n, n)``, as ``predict(text)["attention"]`` or
            one row of the decoder's second output; causal (zero above the diagonal).
        tokens: the ``n`` tokens; ``None`` labels by position.
        heads: the 0-based ``(layer, head)`` pairs to draw, in order; ``None`` draws all, a row per layer.
        split: the position where a repeated sequence's second copy starts; a line marks it on both axes.
        notes: a short note per head shown after its name, e.g. ``{(0, 1): "previous token"}``.
        title: the figure's title.

    Raises:
        TypeError: ``attention`` not a tensor or array, ``heads`` not a sequence of pairs.
        ValueError: ``attention`` not ``(L, h, n, n)`` with weights in ``[0, 1]`` and zero above the
            diagonal, a pair that is not a head, ``tokens`` of the wrong length, ``split`` outside
            ``1 .. n - 1``.
    """
    if not isinstance(attention, (torch.Tensor, np.ndarray)):
        raise TypeError(f"attention must be a torch.Tensor or numpy.ndarray, got {type(attention).__name__}")
    if attention.ndim != 4 or attention.shape[-1] != attention.shape[-2]:
        raise ValueError(f"attention must have shape (L, h, n, n), got {tuple(attention.shape)}")
    L, h, n, _ = attention.shape
    w = as_head_weights(attention.reshape(L * h, n, n)).reshape(L, h, n, n)  # checked, float64
    causal = np.tril(np.ones((n, n), dtype=bool))  # (n, n): True = may attend
    if np.where(causal, 0.0, w).max() > 1e-6:
        raise ValueError("attention must be causal: a decoder's weights are zero above the diagonal")
    if tokens is not None:
        if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
            raise TypeError("tokens must be a sequence of strings, one per token")
        if len(tokens) != n:
            raise ValueError(f"there are {len(tokens)} tokens but the attention has n = {n}")
    split = _split(split, n)
    pairs = [(i, j) for i in range(L) for j in range(h)] if heads is None else _pairs("heads", heads, L, h)
    notes = dict(notes or {})
    cols = h if heads is None else min(len(pairs), _MAX_COLUMNS)
    rows = math.ceil(len(pairs) / cols)

    side = min(max(_TOKEN_PITCH * n, 1.6), 3.6)  # inches: a panel's side
    room_w, room_h = (_MAX_SIZE[0] - 1.9) / cols - 0.25, (_MAX_SIZE[1] - 1.0) / rows - 0.55
    side = min(side, room_w, room_h)
    labelled = tokens is not None and side / n >= _TOKEN_PITCH - 1e-9
    labels = [shown(t) for t in tokens] if labelled else None
    label_room = 0.12 if labelled else 0.45
    size = (cols * (side + 0.25) + label_room + 1.5, rows * (side + 0.55) + label_room + 0.5)
    fig = _pyplot.figure(figsize=size, layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    norm = Normalize(0.0, 1.0)
    if not labelled:  # mark the copies, or every tenth position
        marks = [0, split] if split is not None else list(range(0, n, 10))
        names = [tr("copy 1"), tr("copy 2")] if split is not None else [str(p + 1) for p in marks]
    for p, ax in enumerate(axes.flat):
        if p >= len(pairs):
            ax.remove()
            continue
        layer, head = pairs[p]
        left, bottom = p % cols == 0, p + cols >= len(pairs)
        image = draw_heatmap(
            ax,
            w[layer, head],
            norm=norm,
            row_labels=labels if left else None,
            col_labels=labels if bottom else None,
            mask=causal,
        )
        if labelled:
            ax.tick_params(axis="x", rotation=0)
        else:
            ax.set_yticks(marks, names if left else [])
            ax.set_xticks(marks, names if bottom else [], rotation=0, ha="left")
            ax.tick_params(length=3)
        if split is not None:
            for line in (ax.axhline, ax.axvline):
                line(split - 0.5, color="white", linewidth=1.0, linestyle=(0, (3, 2)))
        note = notes.get((layer, head))
        ax.set_title(
            kept(head_name(layer, head)) + (f": {tr(note)}" if note else ""), fontsize=TITLE_PT, pad=3
        )
        if left:
            ax.set_ylabel(tr("query"), fontsize=TITLE_PT)
        if bottom:
            ax.set_xlabel(tr("key"), fontsize=TITLE_PT)
    shown_axes = [ax for ax in axes.flat if ax.figure is fig]
    bar = fig.colorbar(image, ax=shown_axes, ticks=[0, 0.25, 0.5, 0.75, 1], shrink=0.8)
    bar.ax.tick_params(labelsize=TEXT_PT, length=2)
    bar.set_label(tr("attention weight"), fontsize=TITLE_PT)
    swatch = Patch(
        facecolor=_MASK_BASE, edgecolor=_MASK_LINE, hatch="////", linewidth=0.6, label=tr("future")
    )
    fig.legend(handles=[swatch], loc="outside lower right", fontsize=TEXT_PT, frameon=False)
    if title:
        fig.suptitle(tr(title), fontsize=TITLE_PT)
    return fig


def plot_copy_probabilities(probabilities: Mapping[str, object], *, split: int) -> Figure:
    """The probability of the true next token along a repeated sequence, one line per case.

    Tokens are numbered from 1 along the axis; the first token has no prediction, and the second copy
    (tokens ``split + 1`` to ``n``) is shaded.

    Args:
        probabilities: ``{case: (n - 1,)}``, e.g. ``{"all heads on": ..., "induction heads off": ...}``,
            from :func:`book.decoder.induction.next_token_probabilities` for one sequence: entry ``i`` is
            the probability given to token ``i + 2`` (1-based) after the tokens before it. At most eight.
        split: the length of one copy: the second copy starts after token ``split``.

    Raises:
        TypeError: ``probabilities`` is not a non-empty mapping.
        ValueError: cases of different lengths, values outside ``[0, 1]``, more than eight cases, or a
            ``split`` outside ``1 .. n - 1``.
    """
    if not isinstance(probabilities, Mapping) or not probabilities:
        raise TypeError("probabilities must be a non-empty mapping {case: (n - 1,) probabilities}")
    if len(probabilities) > len(_COLOURS):
        raise ValueError(f"at most {len(_COLOURS)} cases, got {len(probabilities)}")
    curves = {}
    for case, values in probabilities.items():
        if isinstance(values, torch.Tensor):
            values = values.detach().to("cpu", torch.float64).numpy()
        array = np.asarray(values, dtype=np.float64)
        if (
            array.ndim != 1
            or not len(array)
            or not np.isfinite(array).all()
            or not (array.min() >= 0 and array.max() <= 1 + 1e-6)
        ):
            raise ValueError(f"probabilities[{case!r}] must be a 1-D sequence of values in [0, 1]")
        curves[str(case)] = array
    lengths = {len(a) for a in curves.values()}
    if len(lengths) != 1:
        raise ValueError(f"every case must have the same length n - 1, got lengths {sorted(lengths)}")
    n = lengths.pop() + 1
    split = _split(split, n)
    fig = _pyplot.figure(figsize=(8.6, 3.4), layout="constrained")
    ax = fig.subplots()
    x = np.arange(2, n + 1)  # 1-based position of each predicted token
    ax.axvspan(split + 0.5, n + 0.5, color="#EEEEEE", linewidth=0, zorder=0)
    for (case, values), colour in zip(curves.items(), _COLOURS, strict=False):
        ax.plot(x, values, marker="o", markersize=3, linewidth=1.3, color=colour, label=tr(case))
    ax.set_xlim(0.5, n + 0.5)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(tr("position of the predicted token"), fontsize=TITLE_PT)
    ax.set_ylabel(tr("probability of the\ntrue next token"), fontsize=TITLE_PT)
    ax.tick_params(labelsize=TEXT_PT)
    ax.text((split + 1) / 2, 1.04, tr("first copy"), ha="center", va="bottom", fontsize=TEXT_PT)
    ax.text((split + n + 1) / 2, 1.04, tr("second copy"), ha="center", va="bottom", fontsize=TEXT_PT)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=TEXT_PT, loc="center left")
    return fig


def plot_training_log(
    table: pd.DataFrame,
    *,
    induction_heads: Sequence[tuple[int, int]],
    previous_heads: Sequence[tuple[int, int]],
    phase: Mapping[str, float] | None = None,
    repeat_first: int | None = None,
) -> Figure:
    """Three panels over the training steps of the shipped log: copying, head scores, held-out text loss.

    Args:
        table: :func:`book.decoder.induction.training_curves`, indexed by step.
        induction_heads, previous_heads: 0-based pairs whose scores to draw (columns ``"induction L2H1"``,
            ``"previous L1H2"``, ...): induction scores as solid lines, previous-token scores dashed.
        phase: :func:`book.decoder.induction.phase_change`'s result; its steps are shaded.
        repeat_first: the step from which a batch holds text rows too; a dotted line marks it.

    Raises:
        KeyError: a column the table lacks.
    """
    needed = ["first", "second", "loss"]
    needed += [f"induction {head_name(*pair)}" for pair in induction_heads]
    needed += [f"previous {head_name(*pair)}" for pair in previous_heads]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise KeyError(f"the table lacks the columns {missing}")
    steps = table.index.to_numpy()
    fig = _pyplot.figure(figsize=(8.6, 5.4), layout="constrained")
    axes = fig.subplots(3, 1, sharex=True, height_ratios=(1.0, 1.5, 1.0))
    copying, scores, loss = axes
    copying.plot(steps, table["second"], color="#000000", label=tr("second copy"))
    copying.plot(steps, table["first"], color="#999999", label=tr("first copy"))
    copying.set_ylabel(tr("top-1\naccuracy"), fontsize=TITLE_PT)
    colours = itertools.cycle(_COLOURS[1:])
    for pair in induction_heads:
        scores.plot(
            steps,
            table[f"induction {head_name(*pair)}"],
            color=next(colours),
            label=tr("induction {head}", head=head_name(*pair)),
        )
    for pair in previous_heads:
        scores.plot(
            steps, table[f"previous {head_name(*pair)}"], color=next(colours), linestyle="--",
            label=tr("previous token {head}", head=head_name(*pair)),
        )  # fmt: skip
    scores.set_ylabel(tr("head\nscore"), fontsize=TITLE_PT)
    loss.plot(steps, table["loss"], color="#000000", label=tr("held-out text"))
    loss.set_ylabel(tr("loss\n(nats/char)"), fontsize=TITLE_PT)
    loss.set_xlabel(tr("training step"), fontsize=TITLE_PT)
    for ax in axes:
        if phase is not None:
            ax.axvspan(phase["start"], phase["end"], color=_PHASE, alpha=0.45, linewidth=0, zorder=0)
        if repeat_first is not None:
            ax.axvline(repeat_first, color="#555555", linestyle=":", linewidth=1.2)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=TEXT_PT)
        ax.legend(
            fontsize=TEXT_PT,
            loc="lower right" if ax is scores else "center right",
            ncol=3 if ax is scores else 1,
        )
    for ax in (copying, scores):
        ax.set_ylim(-0.03, 1.03)
    return fig
