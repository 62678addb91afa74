"""The figures of the chapter "Attention in 2025–2026": they draw what they are given.

- :func:`plot_recall`: the share of key–value pairs a memory gives back against the number written
  (:func:`book.compute.attention_2026.associative_recall`), with the state's key width marked;
- :func:`plot_memory_lines`: bytes held against context length, one line per kind of layer or model (a
  state stays flat, a cache grows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from book.figures._pyplot import subplots
from book.figures._style import TEXT_PT
from book.figures._text import kept, tr
from mha.costs.report import format_bytes

_STYLES = ("-", "--", ":", "-.")


def _check_lines(xs: Sequence[int], lines: Mapping[str, Sequence[float]], what: str) -> None:
    if not lines:
        raise ValueError(f"{what} must name at least one line")
    for name, ys in lines.items():
        if len(ys) != len(xs):
            raise ValueError(f"{what}[{name!r}] has {len(ys)} values for {len(xs)} points on the x axis")


def plot_recall(pairs: Sequence[int], shares: Mapping[str, Sequence[float]], *, d_k: int) -> Figure:
    """Share recalled (0 to 1) against the number of pairs written (log scale), one line per memory.

    Args:
        pairs: the numbers of pairs written, increasing.
        shares: ``{memory: share recalled at each number of pairs}``.
        d_k: the key width of the states, marked by a vertical line.
    """
    _check_lines(pairs, shares, "shares")
    fig, ax = subplots(figsize=(7.5, 4.0), layout="constrained")
    for i, (name, ys) in enumerate(shares.items()):
        ax.plot(pairs, ys, _STYLES[i % len(_STYLES)], marker="o", ms=4, lw=1.8, label=tr(name))
    ax.axvline(d_k, color="0.4", lw=1.0, ls=":")
    ax.annotate(
        kept(f"d_k = {d_k}"), (d_k, 0.05), xytext=(4, 0), textcoords="offset points", fontsize=TEXT_PT
    )
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(pairs), [str(p) for p in pairs])
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(tr("key–value pairs written"))
    ax.set_ylabel(tr("share recalled"))
    ax.set_title(
        tr("Associative recall: a state of d_v × d_k = {d_k} × {d_k} numbers against a KV cache", d_k=d_k)
    )
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=TEXT_PT, loc="lower left")
    return fig


def plot_memory_lines(contexts: Sequence[int], lines: Mapping[str, Sequence[int]], *, title: str) -> Figure:
    """Bytes held against context length (log-log), one line per entry of ``lines``.

    Args:
        contexts: context lengths in tokens, increasing.
        lines: ``{label: bytes at each context}``.
        title: the figure's title.
    """
    _check_lines(contexts, lines, "lines")
    fig, ax = subplots(figsize=(7.5, 4.4), layout="constrained")
    for i, (name, ys) in enumerate(lines.items()):
        ax.plot(contexts, [y / 2**30 for y in ys], _STYLES[i % len(_STYLES)], lw=2.0, label=tr(name))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda v, _: format_bytes(round(v * 2**30)).replace(".00", ""))
    )
    ax.set_xlabel(tr("context length (tokens)"))
    ax.set_ylabel(tr("bytes held per sequence"))
    ax.set_title(tr(title))
    ax.grid(True, which="major", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=1, fontsize=TEXT_PT)
    return fig
