"""mha.pretrained.from_transformers on Qwen3-Next and Qwen3.5: Gated DeltaNet equal to transformers', layer by
layer.

Tiny random models of both families (three linear-attention layers and one gated full-attention layer; key and
value heads counted and sized apart, a convolution of 3), every weight random: the convolution, ``A_log``,
``dt_bias`` and the gated norm's weight included, with ``A_log`` and ``dt_bias`` spread so that some heads
forget within a token and others keep their state for tens. Each linear-attention layer's input and output
are recorded by a forward hook during the model's own forward pass (transformers' pure-PyTorch path: no
``fla``, no ``causal_conv1d``). transformers computes the delta rule and the gated norm in float32 even in a
float64 model, so the weights are scaled to give outputs of order 1, where a float64 implementation lands
about 1e-6 away; the bound is the contract's 1e-5, and the outputs' scale is asserted too.
"""

import pytest
import torch

import mha
from mha.pretrained import from_transformers
from mha.pretrained.linear import from_qwen3_5, from_qwen3_next
from tests.unit.transformers_calls import random_ids, recorded_calls

transformers = pytest.importorskip("transformers")

TOL = 1e-5  # the contract's bound
N = 70  # more than one chunk of 64, in transformers and in ours
SIZES = {  # d_model 32; linear: 2 key heads of 6, 4 value heads of 5, kernel 3; full: 4 heads of 8
    "hidden_size": 32,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "linear_key_head_dim": 6,
    "linear_value_head_dim": 5,
    "linear_conv_kernel_dim": 3,
    "intermediate_size": 24,
    "vocab_size": 32,
    "max_position_embeddings": 128,
    "attn_implementation": "eager",
}
MOE = {  # Qwen3-Next's mixture of experts, tiny
    "moe_intermediate_size": 8,
    "shared_expert_intermediate_size": 8,
    "num_experts": 4,
    "num_experts_per_tok": 2,
    "experts_implementation": "eager",  # the grouped kernel takes no float64
}
FAMILIES = {
    "qwen3-next": lambda: (transformers.Qwen3NextConfig(**SIZES, **MOE), transformers.Qwen3NextForCausalLM),
    "qwen3.5": lambda: (transformers.Qwen3_5TextConfig(**SIZES), transformers.Qwen3_5ForCausalLM),
}


def tiny_model(family):
    config, model_class = FAMILIES[family]()
    assert config.layer_types == ["linear_attention"] * 3 + ["full_attention"]
    torch.manual_seed(0)
    model = model_class(config).double().eval()
    with torch.no_grad():
        for (
            name,
            p,
        ) in model.named_parameters():  # every weight random, of a size that gives outputs of order 1
            if name.endswith("A_log"):
                p.uniform_(-3.0, 1.0)  # rates exp(A_log) from 0.05 to 2.7
            elif name.endswith("dt_bias"):
                p.normal_(-1.0, 1.0)
            else:
                p.normal_(0.0, 0.25)
    return config, model


def ids(n=N):
    return random_ids(SIZES["vocab_size"], n)


def recorded_layers(model):
    """Run the model on random tokens; return each linear-attention layer's (module, input, output)."""
    modules = [layer.linear_attn for layer in model.model.layers if hasattr(layer, "linear_attn")]
    return recorded_calls(model, modules, ids())


@pytest.fixture(scope="module", params=list(FAMILIES))
def recorded(request):
    config, model = tiny_model(request.param)
    return request.param, config, model, recorded_layers(model)


def test_each_linear_layer_equals_transformers_inside_the_model(recorded):
    family, config, _, records = recorded
    assert len(records) == 3
    worst = 0.0
    for module, x, theirs in records:
        ours = from_transformers(module, config)
        assert isinstance(ours, mha.GatedDeltaNet) and not ours.training
        assert (ours.h, ours.n_v_heads, ours.d_k, ours.d_v, ours.kernel) == (2, 4, 6, 5, 3)
        out, weights = ours(x, mask=mha.causal_mask(N))
        assert weights is None
        assert 0.5 < theirs.abs().max() < 10  # order 1: a gap of 1e-5 means something
        torch.testing.assert_close(out, theirs, rtol=0, atol=TOL)
        torch.testing.assert_close(ours(x)[0], out, rtol=0, atol=0)  # mask=None: the same
        worst = max(worst, (out - theirs).abs().max().item())
        # The decays span forgetting and keeping, so the test covers both.
        alpha = ours.steps(x)["alpha"]
        assert alpha.min() < 0.5 and alpha.max() > 0.95, family
    assert worst > 1e-9  # transformers' float32 is visible: the comparison is not of a tensor with itself


def test_decoding_equals_transformers_and_its_state_is_transformers_state(recorded):
    """A prompt, then single tokens, against the model's own pass; and the prompt's state against the state
    transformers caches for it (``(B, h_v, d_k, d_v)`` and the last ``kernel`` convolution inputs)."""
    _, config, model, records = recorded
    module, x, theirs = records[1]
    ours = from_transformers(module, config)
    out, _, state = ours.decode(x[:, :50])
    outs = [out]
    for t in range(50, N):
        out, _, state = ours.decode(x[:, t : t + 1], state)
        outs.append(out)
    torch.testing.assert_close(torch.cat(outs, dim=1), theirs, rtol=0, atol=TOL)

    seen = []  # transformers' own cache after 50 tokens, and the layer's input in that pass
    hook = module.register_forward_hook(
        lambda m, args, kwargs, output: seen.append((kwargs["hidden_states"], kwargs["cache_params"])),
        with_kwargs=True,
    )
    try:
        with torch.no_grad():
            model(input_ids=ids()[:, :50], use_cache=True)
    finally:
        hook.remove()
    x, cache = seen[0]
    _, _, state = ours.decode(x)
    their_state = cache.get_recurrent_state(module.layer_idx)  # (B, h_v, d_k, d_v)
    torch.testing.assert_close(state.S.mT, their_state.to(state.S.dtype), rtol=0, atol=TOL)
    their_conv = cache.get_conv_state(module.layer_idx)  # (B, C_conv, kernel): one input more than needed
    torch.testing.assert_close(state.conv, their_conv[..., 1:].mT, rtol=0, atol=1e-12)
    assert state.nbytes == 2 * (4 * 5 * 6 + 2 * (2 * 2 * 6 + 4 * 5)) * 8


def test_the_copy_holds_no_transformers_module_and_runs_without_it(recorded):
    _, config, _, records = recorded
    module, x, theirs = records[0]
    ours = from_transformers(module, config)
    assert not any(type(m).__module__.startswith("transformers") for m in ours.modules())
    with torch.no_grad():
        module.out_proj.weight.zero_()  # copied, not shared
    assert ours.W_o.weight.abs().sum() > 0
    torch.testing.assert_close(ours(x)[0], theirs, rtol=0, atol=TOL)


def test_the_two_layouts_hold_the_same_layer():
    """Qwen3-Next's per-key-head packing and Qwen3.5's separate matrices give the same layer."""
    _, next_model = tiny_model("qwen3-next")
    config_5, model_5 = tiny_model("qwen3.5")
    packed = next_model.model.layers[0].linear_attn
    separate = model_5.model.layers[0].linear_attn
    ours = from_qwen3_next(packed, None)
    h, g, d_k, d_v = 2, 2, 6, 5
    with torch.no_grad():  # write our weights in Qwen3.5's layout
        separate.in_proj_qkv.weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        separate.in_proj_z.weight.copy_(ours.W_gate.weight)
        separate.in_proj_b.weight.copy_(ours.W_beta.weight)
        separate.in_proj_a.weight.copy_(ours.W_dt.weight)
        for name in ("conv1d.weight", "A_log", "dt_bias", "norm.weight", "out_proj.weight"):
            separate.get_parameter(name).copy_(packed.get_parameter(name))
    theirs = from_qwen3_5(separate, config_5)
    for name, param in ours.state_dict().items():
        torch.testing.assert_close(theirs.state_dict()[name], param, rtol=0, atol=0)
    # Key head 1's query rows sit after key head 0's q, k, value and gate rows in Qwen3-Next's packing.
    row = 2 * d_k + 2 * g * d_v
    torch.testing.assert_close(ours.W_q.weight[d_k : 2 * d_k], packed.in_proj_qkvz.weight[row : row + d_k])
    assert h * row == packed.in_proj_qkvz.weight.size(0)


def test_an_activation_other_than_silu_is_named():
    config, model = tiny_model("qwen3.5")
    module = model.model.layers[0].linear_attn
    module.activation = "gelu"
    with pytest.raises(ValueError, match=r"config\.hidden_act='gelu' is not supported"):
        from_transformers(module, config)
