"""The Transformer block of "The math" (book/figures/block.py): the figure draws it; today's decoders run it.

The chapter writes the pre-norm block as ``H = X + MultiHead(RMSNorm(X))``, ``Y = H + MLP(RMSNorm(H))`` with a
SwiGLU MLP, and draws it. Here the figure shows the sublayers in that order with the shapes it is given, and
the block is checked against transformers' decoder layers of Llama, Qwen3, gpt-oss and DeepSeek-V3, inside
tiny random models (the families and sizes of tests/unit/transformers_calls.py, float64): a layer calls
its sublayers in the order of :data:`PRE_NORM_BLOCK`, and the two equations, computed with
``torch.nn.RMSNorm``, our attention converted by ``from_transformers`` and the MLP written out, give the
layer's output. Gemma 3 runs a norm after each sublayer too, as the chapter says.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F
from matplotlib.text import Text

import mha
from book.figures._style import TEXT_PT
from book.figures.block import POST_NORM_LAYER, PRE_NORM_BLOCK, plot_transformer_block, transformer_block_alt
from mha.pretrained import from_transformers
from tests.unit.transformers_calls import SIZES, N, tiny_deepseek, tiny_model

TOL = 1e-5  # transformers runs its RMSNorm in float32, so the float64 block agrees to about 1e-7


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _labels_bottom_up(ax, labels) -> list[str]:
    """The texts of ``ax`` whose first line is one of ``labels``, from the bottom of the panel up."""
    found = [t for t in ax.texts if t.get_text().split("\n")[0] in labels]
    return [t.get_text().split("\n")[0] for t in sorted(found, key=lambda t: t.get_position()[1])]


@pytest.mark.parametrize(("n", "d_model"), [(6, 16), (10, 512)])
def test_the_figure_draws_each_block_in_order_with_its_shapes(n, d_model):
    fig = plot_transformer_block(n=n, d_model=d_model)
    left, right = fig.axes
    assert _labels_bottom_up(left, {s.label for s in PRE_NORM_BLOCK}) == [s.label for s in PRE_NORM_BLOCK]
    assert _labels_bottom_up(right, set(POST_NORM_LAYER)) == list(POST_NORM_LAYER)
    for ax in (left, right):
        texts = [t.get_text() for t in ax.texts]
        assert f"x: tokens ({n}, {d_model})" in texts and f"output ({n}, {d_model})" in texts
    assert sum(t.get_text() == "+" for t in left.texts) == sum(t.get_text() == "+" for t in right.texts) == 2
    alt = transformer_block_alt(n, d_model)
    assert f"({n}, {d_model})" in alt and "RMSNorm" in alt and "LayerNorm" in alt and "residual stream" in alt


def test_the_figure_draws_no_text_below_text_pt():
    fig = plot_transformer_block()
    fig.canvas.draw()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert texts and min(t.get_fontsize() for t in texts) >= TEXT_PT
    width, height = fig.get_size_inches()
    assert width <= 9.5 and height <= 5.5, "the figure keeps within a slide's box (book/figures/_style.py)"


@pytest.mark.parametrize(("argument", "value", "error"), [("n", 0, ValueError), ("d_model", 2.5, TypeError)])
def test_the_figure_rejects_bad_sizes(argument, value, error):
    with pytest.raises(error, match=argument):
        plot_transformer_block(**{argument: value})


# ---------------------------------------------------------------------------------------------------------
# Against transformers' decoder layers
# ---------------------------------------------------------------------------------------------------------

transformers = pytest.importorskip("transformers")


def run_layers(model):
    """Run the model once; per decoder layer, its input, its output and the order its sublayers ran in."""
    seen, order = {}, {}

    def record(layer, args, kwargs, output):
        x = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
        seen[layer] = (x.detach().clone(), output.detach().clone())

    handles = []
    for layer in model.model.layers:
        handles.append(layer.register_forward_hook(record, with_kwargs=True))
        order[layer] = []
        for name, child in layer.named_children():
            log = order[layer]
            handles.append(child.register_forward_hook(lambda *_, name=name, log=log: log.append(name)))
    try:
        with torch.no_grad():
            ids = torch.randint(0, SIZES["vocab_size"], (2, N), generator=torch.Generator().manual_seed(1))
            model(ids)
    finally:
        for handle in handles:
            handle.remove()
    return [(layer, *seen[layer], order[layer]) for layer in model.model.layers]


def rms_norm(theirs) -> torch.nn.RMSNorm:
    """``torch.nn.RMSNorm`` with the gain and epsilon of a transformers RMSNorm (Llama, Qwen3, gpt-oss)."""
    norm = torch.nn.RMSNorm(theirs.weight.numel(), eps=theirs.variance_epsilon, dtype=theirs.weight.dtype)
    with torch.no_grad():
        norm.weight.copy_(theirs.weight)
    return norm


def swiglu(mlp, x: torch.Tensor) -> torch.Tensor:
    """The chapter's MLP written out: ``(SiLU(x W_gate) * x W_up) W_down``, with transformers' weights."""
    gated = F.silu(F.linear(x, mlp.gate_proj.weight)) * F.linear(x, mlp.up_proj.weight)  # (B, n, d_ff)
    return F.linear(gated, mlp.down_proj.weight)  # (B, n, d_model)


def mlp_output(layer, x: torch.Tensor) -> torch.Tensor:
    """A dense MLP as the chapter writes it; a mixture of experts (gpt-oss, DeepSeek-V3's later layers) by its
    own forward, less the router's scores that gpt-oss's also returns."""
    if hasattr(layer.mlp, "gate_proj"):
        return swiglu(layer.mlp, x)
    out = layer.mlp(x)
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("family", ["llama", "qwen3", "gpt_oss", "deepseek_v3"])
def test_todays_decoders_are_the_pre_norm_block_of_the_chapter(family):
    config, model = tiny_deepseek("v3") if family == "deepseek_v3" else tiny_model(family)
    assert config.hidden_act == "silu"
    for layer, x, expected, order in run_layers(model):
        assert order == [s.module for s in PRE_NORM_BLOCK], f"{family}: sublayers ran in the order {order}"
        attn = from_transformers(layer.self_attn, config)  # MultiHeadAttention, or latent attention
        with torch.no_grad():
            z = rms_norm(layer.input_layernorm)(x)  # RMSNorm(X)
            h = x + attn(z, mask=mha.causal_mask(N))[0]  # H = X + MultiHead(RMSNorm(X))
            y = h + mlp_output(layer, rms_norm(layer.post_attention_layernorm)(h))  # Y = H + MLP(RMSNorm(H))
        torch.testing.assert_close(y, expected, rtol=0, atol=TOL)


def test_gemma_3_also_normalises_each_sublayers_output():
    _, model = tiny_model("gemma3")
    for *_, order in run_layers(model):
        assert order == [
            "input_layernorm",
            "self_attn",
            "post_attention_layernorm",
            "pre_feedforward_layernorm",
            "mlp",
            "post_feedforward_layernorm",
        ]
