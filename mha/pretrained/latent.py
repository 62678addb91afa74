"""DeepSeek-V3's attention, transformers' ``DeepseekV3Attention``, as :class:`mha.MultiHeadLatentAttention`.

The weights are copied, not shared, and the names change to the V2 paper's: ``q_a_proj`` is ``W_dq``,
``q_a_layernorm`` is ``q_norm``, ``q_b_proj`` (or ``q_proj``) is ``W_uq``, ``kv_a_proj_with_mqa`` is
``W_dkv``, ``kv_a_layernorm`` is ``kv_norm``, ``kv_b_proj`` is ``W_ukv`` and ``o_proj`` is ``W_o``.

DeepSeek rotates interleaved pairs ``(x_0, x_1), (x_2, x_3), ...`` (``rope_interleave=True``, the default)
and lays the result out as ``[rotated evens, rotated odds]``; the core rotates the two halves of a vector
(``x_i`` with ``x_{i + d_r/2}``). Moving the even rows of each rotary projection first and the odd rows
after them makes the core's rotation give exactly DeepSeek's result, with no second rotary code.
"""

from __future__ import annotations

import torch
from torch import nn

from mha.latent import MultiHeadLatentAttention


def from_deepseek_v3(module: nn.Module, config: object) -> MultiHeadLatentAttention:
    """Return a :class:`mha.MultiHeadLatentAttention` equal to a transformers ``DeepseekV3Attention``.

    Args:
        module: the ``DeepseekV3Attention`` of one layer (``model.layers[i].self_attn``).
        config: the model's ``DeepseekV3Config``.

    Returns:
        The layer, in eval mode, with the module's dtype, device and (copied) weights. Called as
        ``ours(x, mask=mha.causal_mask(n))`` it gives the module's output at positions ``0 .. n-1``.

    Raises:
        ValueError: a setting the core does not implement: rope scaling other than ``"default"`` (YaRN,
            with its ``mscale``), or ``num_key_value_heads`` different from ``num_attention_heads``.
    """
    rope = dict(getattr(config, "rope_parameters", None) or {})
    rope_type = rope.get("rope_type", "default")
    if rope_type != "default":
        raise ValueError(
            f"rope_parameters rope_type={rope_type!r} is not supported (YaRN and other rope scaling, with "
            "their mscale on the attention scale): only 'default'"
        )
    if config.num_key_value_heads != config.num_attention_heads:
        raise ValueError(
            f"num_key_value_heads={config.num_key_value_heads} must equal num_attention_heads="
            f"{config.num_attention_heads}: latent attention rebuilds a key and a value for every head"
        )
    h, d_nope, d_r, d_v = (
        module.num_heads,
        module.qk_nope_head_dim,
        module.qk_rope_head_dim,
        module.v_head_dim,
    )
    weight = module.kv_a_proj_with_mqa.weight
    ours = MultiHeadLatentAttention(
        module.hidden_size,
        h,
        kv_rank=module.kv_lora_rank,
        d_nope=d_nope,
        d_rope=d_r,
        d_v=d_v,
        q_rank=module.q_lora_rank,
        rope_theta=float(rope["rope_theta"]),
        eps=module.kv_a_layernorm.variance_epsilon,
        bias=module.o_proj.bias is not None,
        dropout=float(module.attention_dropout),
    ).to(device=weight.device, dtype=weight.dtype)
    # Half-split order of DeepSeek's interleaved rotary rows: evens first, then odds (identity otherwise).
    order = torch.arange(d_r, device=weight.device)
    if getattr(config, "rope_interleave", True):
        order = torch.cat([order[0::2], order[1::2]])  # (d_r,)
    q_rows = torch.arange(h * (d_nope + d_r), device=weight.device).view(h, d_nope + d_r)  # (h, d_nope + d_r)
    q_rows = torch.cat([q_rows[:, :d_nope], q_rows[:, d_nope:][:, order]], dim=1).flatten()  # per head
    kv_rows = torch.cat(
        [torch.arange(module.kv_lora_rank, device=weight.device), module.kv_lora_rank + order]
    )
    q_up = module.q_proj if module.q_lora_rank is None else module.q_b_proj
    pairs = [
        (ours.W_uq.weight, q_up.weight[q_rows]),
        (ours.W_dkv.weight, weight[kv_rows]),
        (ours.kv_norm.weight, module.kv_a_layernorm.weight),
        (ours.W_ukv.weight, module.kv_b_proj.weight),
        (ours.W_o.weight, module.o_proj.weight),
    ]
    if module.q_lora_rank is not None:
        pairs += [
            (ours.W_dq.weight, module.q_a_proj.weight),
            (ours.q_norm.weight, module.q_a_layernorm.weight),
        ]
    if ours.W_o.bias is not None:
        pairs += [
            (ours.W_dkv.bias, module.kv_a_proj_with_mqa.bias[kv_rows]),
            (ours.W_o.bias, module.o_proj.bias),
        ]
        if module.q_lora_rank is not None:
            pairs.append((ours.W_dq.bias, module.q_a_proj.bias))
    with torch.no_grad():
        for target, source in pairs:
            target.copy_(source)
    return ours.eval()
