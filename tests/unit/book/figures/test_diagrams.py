"""book.figures.diagrams: the drawn shapes and layouts are the ones PyTorch computes."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from book.figures.diagrams import multihead_block_alt, plot_head_layout, plot_multihead_block
from mha.multihead import split_heads


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


@pytest.mark.parametrize(("d_model", "h", "n"), [(512, 8, 10), (8, 2, 4), (64, 1, 3)])
def test_the_block_shows_every_shape(d_model, h, n):
    d_k = d_model // h
    shown = texts(plot_multihead_block(d_model, h, n))
    assert f"X\n({n}, {d_model})" in shown
    assert sum(f"\n({n}, {d_k})" in t and t.startswith("head") for t in shown) == min(h, 3)
    assert f"Concat\n({n}, {h}·{d_k} = {d_model})" in shown
    assert any(t.endswith(f"\n({n}, {d_model})") and "W^O" in t for t in shown)
    alt = multihead_block_alt(d_model, h, n)
    assert f"({n}, {d_k})" in alt and f"({n}, {d_model})" in alt and f"{h} attention heads" in alt


def test_the_block_rejects_a_width_heads_do_not_divide():
    with pytest.raises(ValueError, match="divisible"):
        plot_multihead_block(10, 3)


def rows_of(fig, label_prefix: str) -> dict[str, list[str]]:
    """The block labels drawn in each row whose name starts with ``label_prefix``, left to right."""
    (ax,) = fig.axes
    names = {t.get_position()[1]: t.get_text() for t in ax.texts if t.get_text().startswith(label_prefix)}
    rows: dict[str, list[tuple[float, str]]] = {}
    for t in ax.texts:
        x, y = t.get_position()
        for name_y, name in names.items():
            if abs(y - name_y) < 1e-9 and t.get_text().startswith("t"):
                rows.setdefault(name, []).append((x, t.get_text()))
    return {name: [label for _, label in sorted(blocks)] for name, blocks in rows.items()}


@pytest.mark.parametrize(("n", "h"), [(3, 4), (6, 4), (2, 2)])
def test_the_layout_is_what_view_and_transpose_compute(n, h):
    fig = plot_head_layout(n, h)
    code = torch.tensor([[10 * t + i for i in range(h)] for t in range(n)])  # (n, h): token-major memory
    right = split_heads(code[None].float(), h)[0, :, :, 0]  # (h, n): view + transpose
    wrong = code.reshape(-1).view(h, n)  # "heads" of view alone

    def label(c: int) -> str:
        return f"t{c // 10 + 1} h{c % 10 + 1}"

    drawn_right = rows_of(fig, "head ")
    drawn_wrong = {k: v for k, v in drawn_right.items() if k.endswith("?")}
    for i in range(h):
        assert drawn_right[f"head {i + 1}"] == [label(int(c)) for c in right[i]]
        assert drawn_wrong[f"head {i + 1}?"] == [label(int(c)) for c in wrong[i]]
    assert label(int(wrong[0, 0])) == "t1 h1" and label(int(wrong[0, 1])) == "t1 h2"  # head 1? mixes heads


def test_the_rotary_pairs_are_the_rotary_tables():
    import math

    from book.figures.diagrams import plot_rotary_pairs, rotary_pairs_alt
    from mha.positional import rotary_tables

    fig = plot_rotary_pairs(8, 10000.0, positions=4, pairs=(0, 3))
    cos, sin = rotary_tables(4, 8, theta=10000.0, dtype=torch.float64)
    for ax, i in zip(fig.axes, (0, 3), strict=True):
        arrows = [patch for patch in ax.patches if type(patch).__name__ == "FancyArrowPatch"]
        assert len(arrows) == 4
        heads = [a._posA_posB[1] for a in arrows]  # the arrows' ends (matplotlib has no public getter)
        assert heads == [(cos[p, i].item(), sin[p, i].item()) for p in range(4)]  # R(p theta_i) (1, 0)
        rate = 10000.0 ** (-2 * i / 8)
        assert f"p = 3: φ = {3 * rate:.3g}" in [t.get_text() for t in ax.texts]
    alt = rotary_pairs_alt(8, 10000.0, positions=4, pairs=(0, 3))
    assert f"{math.degrees(3 * 1.0):.3g} degrees by position 3" in alt
    with pytest.raises(ValueError, match="pairs"):
        plot_rotary_pairs(8, pairs=(4,))
    with pytest.raises(ValueError, match="even"):
        plot_rotary_pairs(7)


@pytest.mark.parametrize("q_rank", [24, None])
def test_the_latent_diagram_shows_the_layers_widths(q_rank):
    import mha
    from book.figures.diagrams import latent_attention_alt, plot_latent_attention

    with torch.device("meta"):  # DeepSeek-V3's widths, no memory
        v3 = mha.MultiHeadLatentAttention(7168, 128, kv_rank=512, d_nope=128, d_rope=64, q_rank=1536)
    shown = "\n".join(texts(plot_latent_attention(v3)))
    assert "d_c + d_r = 512 + 64 = 576" in shown and "(128 × 128)" in shown and "(1536)" in shown
    small = mha.MultiHeadLatentAttention(64, 4, kv_rank=16, d_nope=8, d_rope=4, d_v=6, q_rank=q_rank)
    shown = "\n".join(texts(plot_latent_attention(small)))
    assert "16 + 4 = 20" in shown and "$v_i$ (4 × 6)" in shown and ("(24)" in shown) == (q_rank is not None)
    alt = latent_attention_alt(small)
    assert "16 + 4 = 20 numbers per token" in alt and ("query latent of width 24" in alt) == (q_rank == 24)
    with pytest.raises(TypeError, match="MultiHeadLatentAttention"):
        plot_latent_attention(mha.MultiHeadAttention(16, 2))
