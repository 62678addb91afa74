"""Diagrams drawn by code: the multi-head attention block, how heads are laid out in memory, how rotary
positions turn a pair, and multi-head latent attention.

Each takes the sizes (or the layer) it shows as arguments, so a chapter draws it for its own example, and
comes with an ``*_alt`` function giving the alt text that describes the same picture in words.

Shape legend:
    n        number of tokens
    d_model  model width
    h        number of heads
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

import math

import torch
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle

from book.figures import _pyplot
from book.figures._style import TEXT_PT, TITLE_PT
from book.figures._text import kept, tr
from mha._checks import check_heads, check_positive_int, check_positive_number
from mha.latent import MultiHeadLatentAttention
from mha.positional import rotary_tables

_INPUT, _PROJECTION, _HEAD, _OUTPUT = "#e3ecf7", "#fde9c9", "#dff0d8", "#ead9f2"  # fills, light
_HEAD_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")


def _box(
    ax, x: float, y: float, w: float, h: float, text: str, colour: str, *, size: float = TEXT_PT
) -> None:
    ax.add_patch(
        FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08", fc=colour, ec="0.3", lw=1)
    )
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size)


def _arrow(ax, start: tuple[float, float], end: tuple[float, float], **style: object) -> None:
    style = {"arrowstyle": "-|>", "mutation_scale": 10, "lw": 1, "color": "0.3", **style}
    ax.add_patch(FancyArrowPatch(start, end, **style))


def plot_multihead_block(d_model: int = 512, h: int = 8, n: int = 10, *, shown: int = 3) -> Figure:
    """The multi-head attention block with the shape of every tensor, for one sequence of ``n`` tokens.

    ``X`` goes through ``h`` query, key and value projections, ``h`` scaled dot-product attentions run side by
    side, their outputs are concatenated and ``W^O`` mixes them. Drawn left to right; with more than
    ``shown`` heads, the middle ones are elided.

    Args:
        d_model: model width; ``h`` must divide it.
        h: number of heads.
        n: number of tokens.
        shown: how many heads to draw (the first ``shown - 1`` and the last).

    Returns:
        The figure; :func:`multihead_block_alt` describes it in words.
    """
    _, _, d_k = check_heads(d_model, h)
    check_positive_int("n", n)
    check_positive_int("shown", shown)
    heads = list(range(h)) if h <= shown else [*range(shown - 1), h - 1]
    rows = len(heads) + (h > shown)
    fig = _pyplot.figure(figsize=(9.3, 1.1 + 1.0 * rows))  # 10.75 units across: 0.87 inch a unit
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set(xlim=(0, 10.75), ylim=(-0.2, rows + 0.6))
    ax.axis("off")
    mid = rows / 2
    _box(ax, 0.1, mid - 0.4, 1.3, 0.8, f"X\n({n}, {d_model})", _INPUT)
    for r, i in enumerate(heads if h <= shown else [*heads[:-1], None, heads[-1]]):
        y = rows - 1 - r + 0.1
        if i is None:
            ax.text(4.6, y + 0.35, "⋮", ha="center", va="center", fontsize=16)
            continue
        colour = _HEAD_COLOURS[i % len(_HEAD_COLOURS)]
        _arrow(ax, (1.4, mid), (2.0, y + 0.4))
        _box(
            ax,
            2.0,
            y,
            2.2,
            0.8,
            f"$XW_{{{i + 1}}}^Q,\\ XW_{{{i + 1}}}^K,\\ XW_{{{i + 1}}}^V$\n3 × ({n}, {d_k})",
            _PROJECTION,
        )
        _arrow(ax, (4.2, y + 0.4), (4.7, y + 0.4))
        _box(ax, 4.7, y, 2.3, 0.8, tr("head {head} = Attention(...)", head=i + 1) + f"\n({n}, {d_k})", _HEAD)
        ax.add_patch(Rectangle((4.7, y), 0.08, 0.8, color=colour))
        _arrow(ax, (7.0, y + 0.4), (7.5, mid))
    _box(ax, 7.5, mid - 0.4, 1.55, 0.8, tr("Concat") + f"\n({n}, {h}·{d_k} = {d_model})", _OUTPUT)
    _arrow(ax, (9.05, mid), (9.35, mid))
    _box(ax, 9.35, mid - 0.4, 1.3, 0.8, f"$\\cdot W^O$\n({n}, {d_model})", _OUTPUT)
    title = "multi-head attention: h = {h} heads of width d_k = {d_model} / {h} = {d_k}"
    title = tr(title, h=h, d_model=d_model, d_k=d_k)
    ax.text(5.375, rows + 0.35, title, ha="center", va="center", fontsize=TITLE_PT)
    return fig


def multihead_block_alt(d_model: int = 512, h: int = 8, n: int = 10) -> str:
    """Alt text of :func:`plot_multihead_block` for the same sizes."""
    _, _, d_k = check_heads(d_model, h)
    return (
        f"Diagram of multi-head attention: the input X of shape ({n}, {d_model}) is projected {h} times into "
        f"queries, keys and values of shape ({n}, {d_k}) each; {h} attention heads run side by side, each "
        f"giving an output of shape ({n}, {d_k}); the outputs are concatenated into shape ({n}, {d_model}) "
        f"and multiplied by W^O, giving the output of shape ({n}, {d_model})."
    )


def plot_head_layout(n: int = 3, h: int = 4) -> Figure:
    """How ``view`` and ``transpose`` split heads, drawn as memory: which (token, head) block lands where.

    Top: the projected tensor ``(n, h d_k)`` in memory, one block of ``d_k`` numbers per (token, head), token
    by token. Middle: ``view(n, h, d_k).transpose(0, 1)``, head ``i``'s ``n`` blocks together, one per token:
    right. Bottom: ``view(h, n, d_k)`` alone, which cuts memory into ``h`` runs of ``n`` blocks: "head 1"
    then holds pieces of several tokens' heads, so a row is no longer a token. Each block is labelled
    "t<token> h<head>" and coloured by its true head.

    Args:
        n: number of tokens.
        h: number of heads.
    """
    check_positive_int("n", n)
    check_positive_int("h", h)
    blocks = [(t, i) for t in range(n) for i in range(h)]  # memory order: token-major
    fig = _pyplot.figure(figsize=(max(5.1, 0.65 * n * h + 1.3), 1.1 + 0.47 * (1 + 2 * h)))
    ax = fig.add_axes((0, 0, 1, 1))
    width = n * h
    ax.set(xlim=(-2.6, width + 0.2), ylim=(-(2 * h + 2.4), 1.6))
    ax.axis("off")

    def block(x: float, y: float, t: int, i: int) -> None:
        ax.add_patch(
            Rectangle((x, y), 0.92, 0.8, fc=_HEAD_COLOURS[i % len(_HEAD_COLOURS)], ec="white", alpha=0.9)
        )
        label = kept(f"t{t + 1} h{i + 1}")
        ax.text(x + 0.46, y + 0.4, label, ha="center", va="center", fontsize=TEXT_PT, color="white")

    ax.text(-2.5, 0.4, tr("memory") + f"\n(n={n}, h·d_k)", va="center", fontsize=TEXT_PT)
    for x, (t, i) in enumerate(blocks):
        block(x, 0, t, i)
    ax.text(
        -2.5, -0.9, kept("view + transpose  ✓"), va="center", fontsize=TEXT_PT, color="#2e7d32", weight="bold"
    )
    ax.text(
        -2.5, -(h + 1.6), tr("view alone  ✗"), va="center", fontsize=TEXT_PT, color="#c62828", weight="bold"
    )
    for i in range(h):  # right: head i holds token 1..n's i-th block
        y = -(i + 2)
        ax.text(-0.3, y + 0.4, tr("head {head}", head=i + 1), ha="right", va="center", fontsize=TEXT_PT)
        for t in range(n):
            block(t, y, t, i)
    for r in range(h):  # wrong: "head" r is the r-th run of n consecutive blocks
        y = -(h + r + 2.6)
        ax.text(-0.3, y + 0.4, tr("head {head}?", head=r + 1), ha="right", va="center", fontsize=TEXT_PT)
        for j, (t, i) in enumerate(blocks[r * n : (r + 1) * n]):
            block(j, y, t, i)
    return fig


def _rotary_pairs(d_k: int, theta: float, positions: int, pairs: tuple[int, ...] | None) -> tuple[int, ...]:
    check_positive_int("d_k", d_k)
    if d_k % 2:
        raise ValueError(f"rotary embeddings need an even head width d_k, got {d_k}")
    check_positive_number("theta", theta)
    check_positive_int("positions", positions)
    pairs = (0, d_k // 2 - 1) if pairs is None else tuple(pairs)
    if not pairs or any(
        isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < d_k // 2 for i in pairs
    ):
        raise ValueError(f"pairs must be indices in 0..{d_k // 2 - 1} (d_k / 2 pairs), got {pairs!r}")
    return pairs


def plot_rotary_pairs(
    d_k: int = 8, theta: float = 10000.0, *, positions: int = 5, pairs: tuple[int, ...] | None = None
) -> Figure:
    r"""How rotary positions turn one pair of a head's query (or key) coordinates, position by position.

    Each panel is one pair ``i`` (coordinates ``i`` and ``i + d_k/2``, the half-split layout of
    :func:`mha.positional.rotary_tables`), drawn as a unit vector ``(1, 0)`` at position 0 and turned by the
    2x2 rotation :math:`R(\varphi)` with :math:`\varphi = p\,\theta_i` at positions ``p = 1, 2, ...``, where
    :math:`\theta_i = b^{-2i/d_k}` and ``b`` is the base (``theta``). The arrows' ends are the cosines and
    sines of the real rotary tables, so the picture is what the layer computes.

    Args:
        d_k: head width (even).
        theta: the base ``b``.
        positions: how many positions to draw (``0 .. positions - 1``).
        pairs: which pairs, one panel each; default the fastest (0) and the slowest (``d_k/2 - 1``).

    Returns:
        The figure; :func:`rotary_pairs_alt` describes it in words.
    """
    pairs = _rotary_pairs(d_k, theta, positions, pairs)
    cos, sin = rotary_tables(positions, d_k, theta=theta, dtype=torch.float64)  # (positions, d_k) each
    fig, axes = _pyplot.subplots(1, len(pairs), figsize=(4.3 * len(pairs), 3.7), squeeze=False,
                                 layout="constrained")  # fmt: skip
    for ax, i in zip(axes[0], pairs, strict=True):
        rate = theta ** (-2 * i / d_k)  # radians per token
        ax.add_patch(Circle((0, 0), 1, fill=False, ec="0.75", lw=1))
        for p in range(positions):
            colour = _HEAD_COLOURS[p % len(_HEAD_COLOURS)]
            end = (cos[p, i].item(), sin[p, i].item())  # R(p theta_i) applied to (1, 0)
            _arrow(ax, (0, 0), end, color=colour, lw=1.6, mutation_scale=12)
            ax.text(1.25, 0.9 - 0.32 * p, f"p = {p}: φ = {p * rate:.3g}", color=colour, fontsize=TEXT_PT,
                    va="center")  # fmt: skip
        ax.set(xlim=(-1.15, 2.85), ylim=(-1.45, 1.45), aspect="equal")
        ax.axis("off")
        title = tr("pair {i} of {pairs}: θ = b^(−{twice}/{d_k})\n= {rate} rad per token", i=i + 1,
                   pairs=d_k // 2, twice=2 * i, d_k=d_k, rate=f"{rate:.3g}")  # fmt: skip
        ax.set_title(title, fontsize=TITLE_PT)
    fig.suptitle(tr("Rotary positions, base b = {theta}: at position p, pair i turns by φ = p θ_i",
                    theta=f"{theta:g}"), fontsize=TITLE_PT)  # fmt: skip
    return fig


def rotary_pairs_alt(
    d_k: int = 8, theta: float = 10000.0, *, positions: int = 5, pairs: tuple[int, ...] | None = None
) -> str:
    """Alt text of :func:`plot_rotary_pairs` for the same arguments."""
    pairs = _rotary_pairs(d_k, theta, positions, pairs)
    panels = "; ".join(
        f"pair {i + 1} turns by {theta ** (-2 * i / d_k):.3g} rad per token, "
        f"{math.degrees((positions - 1) * theta ** (-2 * i / d_k)):.3g} degrees by position {positions - 1}"
        for i in pairs
    )
    return (
        f"Unit circles, one per rotary pair of a head of width {d_k} with base {theta:g}: an arrow per "
        f"position 0 to {positions - 1}, each turned from the one at position 0 by the position times the "
        "pair's angle. "
        f"{panels[0].upper()}{panels[1:]}."
    )


def _latent_widths(layer: MultiHeadLatentAttention) -> dict[str, int | None]:
    if not isinstance(layer, MultiHeadLatentAttention):
        raise TypeError(f"layer must be a mha.MultiHeadLatentAttention, got {type(layer).__name__}")
    return {"d": layer.d_model, "h": layer.h, "d_cq": layer.q_rank, "d_c": layer.kv_rank,
            "d_nope": layer.d_nope, "d_r": layer.d_rope, "d_v": layer.d_v}  # fmt: skip


def plot_latent_attention(layer: MultiHeadLatentAttention) -> Figure:
    """Multi-head latent attention (DeepSeek-V2, section 2.1), drawn with the widths of ``layer``.

    Three paths leave the input ``x``: the query (down to the query latent, then up to every head's
    position-free part ``q^C`` and rotary part ``q^R``), the key/value latent ``c^KV`` (up to every head's
    key ``k^C`` and value ``v``), and one rotary key ``k^R`` shared by all heads. The dashed frame is what a
    decoder caches per token: ``c^KV`` and ``k^R``, ``d_c + d_r`` numbers, whatever the number of heads. The
    rotations (RoPE) sit on the rotary parts only: a rotation that depends on the position, between
    ``W^UQ`` and ``W^UK``, would block folding ``W^UK`` into the query, so positions travel apart.

    Args:
        layer: the layer whose widths to show (its ``d_model``, ``h``, ``q_rank``, ``kv_rank``, ``d_nope``,
            ``d_rope``, ``d_v``); a layer built on the ``meta`` device costs no memory.

    Returns:
        The figure; :func:`latent_attention_alt` describes it in words.
    """
    w = _latent_widths(layer)
    d, h, d_cq, d_c, d_nope, d_r, d_v = (w[k] for k in ("d", "h", "d_cq", "d_c", "d_nope", "d_r", "d_v"))
    fig = _pyplot.figure(figsize=(9.4, 4.9))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set(xlim=(0, 12.4), ylim=(-0.35, 6.35))
    ax.axis("off")
    _box(ax, 0.1, 2.6, 1.2, 0.9, f"x\n({d})", _INPUT)
    # the query path
    if d_cq is None:
        _arrow(ax, (1.3, 3.3), (4.2, 5.2))
    else:
        _arrow(ax, (1.3, 3.3), (1.8, 5.2))
        _box(ax, 1.8, 4.8, 2.0, 0.9, kept(f"$W^{{DQ}}$ → $c^Q$\n({d_cq}), RMSNorm"), _PROJECTION)
        _arrow(ax, (3.8, 5.25), (4.2, 5.25))
    _box(ax, 4.2, 4.8, 2.6, 0.9, f"$W^{{UQ}}$: $q^C_i$ ({h} × {d_nope})\n$W^{{QR}}$: $q^R_i$ ({h} × {d_r})",
         _PROJECTION)  # fmt: skip
    _arrow(ax, (6.8, 5.25), (7.2, 5.25))
    _box(ax, 7.2, 4.8, 1.5, 0.9, tr("RoPE on $q^R_i$"), _HEAD)
    # the key/value latent and the shared rotary key: what is cached
    _arrow(ax, (1.3, 3.05), (1.8, 3.05))
    _box(ax, 1.8, 2.6, 2.0, 0.9, kept(f"$W^{{DKV}}$ → $c^{{KV}}$\n({d_c}), RMSNorm"), _PROJECTION)
    _arrow(ax, (1.3, 2.8), (1.8, 0.95))
    _box(ax, 1.8, 0.5, 2.0, 0.9, f"$W^{{KR}}$ → $k^R$ ({d_r})\n" + tr("one for all heads"), _PROJECTION)
    _arrow(ax, (3.8, 0.95), (4.2, 0.95))
    _box(ax, 4.2, 0.5, 1.5, 0.9, tr("RoPE on $k^R$"), _HEAD)
    ax.add_patch(FancyBboxPatch((1.65, 0.3), 4.2, 3.35, boxstyle="round,pad=0.02", fill=False, ec="#c44e52",
                                lw=1.5, ls="--"))  # fmt: skip
    ax.text(3.75, -0.1, tr("cached per token and layer: d_c + d_r = {d_c} + {d_r} = {sum}", d_c=d_c, d_r=d_r,
                           sum=d_c + d_r),
            ha="center", va="center", fontsize=TEXT_PT, color="#c44e52")  # fmt: skip
    _arrow(ax, (3.8, 3.05), (6.1, 3.05))
    _box(ax, 6.1, 2.6, 2.6, 0.9, f"$W^{{UK}}$: $k^C_i$ ({h} × {d_nope})\n$W^{{UV}}$: $v_i$ ({h} × {d_v})",
         _PROJECTION)  # fmt: skip
    # each head, then the output
    _box(ax, 9.2, 2.1, 3.1, 1.9, tr("head i: softmax of") + "\n$[q^C_i, q^R_i] \\cdot [k^C_i, k^R]$\n"
         + tr("/ √({d_nope} + {d_r}), times $v_i$", d_nope=d_nope, d_r=d_r), _HEAD)  # fmt: skip
    _arrow(ax, (8.7, 5.25), (10.2, 4.0))
    _arrow(ax, (8.7, 3.05), (9.2, 3.05))
    _arrow(ax, (5.7, 0.95), (10.2, 2.1))
    _arrow(ax, (10.75, 2.1), (10.75, 1.4))
    _box(ax, 9.6, 0.5, 2.3, 0.9, tr("concat ({h} × {d_v})", h=h, d_v=d_v) + f"\n$W^O$ → ({d})", _OUTPUT)
    ax.text(6.2, 6.1, tr("Multi-head latent attention: h = {h} heads, d_model = {d}", h=h, d=d), ha="center",
            va="center", fontsize=TITLE_PT)  # fmt: skip
    return fig


def latent_attention_alt(layer: MultiHeadLatentAttention) -> str:
    """Alt text of :func:`plot_latent_attention` for the same layer."""
    w = _latent_widths(layer)
    query = (
        f"down to a query latent of width {w['d_cq']}, then up to" if w["d_cq"] is not None else "directly to"
    )
    return (
        f"Diagram of multi-head latent attention with {w['h']} heads: the input of width {w['d']} goes "
        f"{query} each head's query, a part of width {w['d_nope']} without positions and a rotary part of "
        f"width {w['d_r']}; down to a key/value latent of width {w['d_c']}, from which each head's key "
        f"(width {w['d_nope']}) and value (width {w['d_v']}) are rebuilt; and to one rotary key of width "
        f"{w['d_r']} shared by all heads. A dashed frame marks the latent and the rotary key as the cache, "
        f"{w['d_c']} + {w['d_r']} = {w['d_c'] + w['d_r']} numbers per token and layer. Each head's softmax "
        f"of its query against its key, divided by the square root of {w['d_nope']} + {w['d_r']}, weights "
        f"its values; the heads are concatenated and W^O maps them back to width {w['d']}."
    )
