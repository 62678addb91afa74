"""mha.compute.ablation: an ablated head's output is zero where W_o reads it, every other head's is untouched,
and the layer is as before once the context ends."""

import pytest
import torch

import mha
from mha.compute.ablation import ablate_heads, ablate_layer_heads

D_MODEL, H = 12, 3  # d_k = 4


def layer(seed=0):
    torch.manual_seed(seed)
    return mha.MultiHeadAttention(D_MODEL, H).double().eval()


def inputs():
    return torch.randn(2, 5, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(1))


def w_o_input(attn, x):
    """The merged heads ``(B, n, h, d_k)`` as ``W_o`` receives them (after every pre-hook), and the output."""
    seen = []
    handle = attn.W_o.register_forward_hook(lambda module, args, out: seen.append(args[0]))
    try:
        out, _ = attn(x)
    finally:
        handle.remove()
    return seen[0].view(*x.shape[:2], H, D_MODEL // H), out


def test_an_ablated_head_is_zero_before_w_o_and_the_others_untouched():
    attn, x = layer(), inputs()
    intact, out = w_o_input(attn, x)
    with ablate_heads(attn, [1]):
        ablated, ablated_out = w_o_input(attn, x)
    assert not ablated[:, :, 1].any() and intact[:, :, 1].abs().max() > 0
    torch.testing.assert_close(ablated[:, :, [0, 2]], intact[:, :, [0, 2]], rtol=0, atol=0)
    d_k = D_MODEL // H  # the output loses exactly head 1's share of W_o: its d_k columns
    share = intact[:, :, 1] @ attn.W_o.weight[:, d_k : 2 * d_k].T  # (B, n, d_model)
    torch.testing.assert_close(ablated_out, out - share, rtol=0, atol=1e-12)


def test_the_layer_is_restored_after_the_context_even_on_an_error():
    attn, x = layer(), inputs()
    before, _ = attn(x)
    with ablate_heads(attn, []):  # no heads: nothing changes
        torch.testing.assert_close(attn(x)[0], before, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="inside"), ablate_heads(attn, [0, 2]):
        raise RuntimeError("inside")
    torch.testing.assert_close(attn(x)[0], before, rtol=0, atol=0)
    assert not attn.W_o._forward_pre_hooks


@pytest.mark.parametrize("heads", [[3], [-1], [True], [0.0]])
def test_a_head_outside_the_layer_is_refused(heads):
    with pytest.raises(ValueError, match=r"heads must be ints in 0..h-1=2"), ablate_heads(layer(), heads):
        pass


def test_ablating_layer_heads_ablates_each_pair_on_its_layer():
    layers, x = [layer(0), layer(1)], inputs()
    with ablate_layer_heads(layers, [(1, 0), (1, 2)]):
        first, _ = w_o_input(layers[0], x)
        second, _ = w_o_input(layers[1], x)
    assert first.abs().amax(dim=(0, 1, 3)).min() > 0  # layer 0: every head intact
    assert not second[:, :, [0, 2]].any() and second[:, :, 1].abs().max() > 0
    assert not any(attn.W_o._forward_pre_hooks for attn in layers)
