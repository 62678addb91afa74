"""Latent attention from transformers onto :class:`mha.MultiHeadLatentAttention`: DeepSeek-V3's
``DeepseekV3Attention``, and DeepSeek Sparse Attention, DeepSeek-V3.2's ``DeepseekV32Attention`` and GLM-5's
``GlmMoeDsaAttention`` (the same latent attention with a lightning indexer choosing each query's top-k keys).

The weights are copied, not shared, and the names change to the V2 paper's: ``q_a_proj`` is ``W_dq``,
``q_a_layernorm`` is ``q_norm``, ``q_b_proj`` (or ``q_proj``) is ``W_uq``, ``kv_a_proj_with_mqa`` is
``W_dkv``, ``kv_a_layernorm`` is ``kv_norm``, ``kv_b_proj`` is ``W_ukv`` and ``o_proj`` is ``W_o``; the
indexer's ``wq_b`` is ``W_iq``, ``wk`` is ``W_ik``, ``k_norm`` is ``ik_norm``, ``weights_proj`` is ``W_iw``.
Each norm keeps its own eps (GLM-5's latent norms use 1e-6 while its ``rms_norm_eps`` is 1e-5).

DeepSeek rotates interleaved pairs ``(x_0, x_1), (x_2, x_3), ...`` (``rope_interleave=True``, the default)
and lays the result out as ``[rotated evens, rotated odds]``; the core rotates the two halves of a vector
(``x_i`` with ``x_{i + d_r/2}``). Moving the even rows of each rotary projection first and the odd rows
after them makes the core's rotation give exactly DeepSeek's result, with no second rotary code. The same
holds for the indexer, which rotates the first ``d_r`` coordinates of its heads: half-split in
DeepSeek-V3.2, interleaved in GLM-5 (whose rows are reordered likewise, with its key norm's weight and bias).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

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
    return _convert(module, config)


def from_deepseek_v32(module: nn.Module, config: object) -> MultiHeadLatentAttention:
    """:func:`from_deepseek_v3` for ``DeepseekV32Attention``, with its lightning indexer (half-split)."""
    return _convert(module, config, index_interleaved=False)


def from_glm5(module: nn.Module, config: object) -> MultiHeadLatentAttention:
    """:func:`from_deepseek_v3` for GLM-5's ``GlmMoeDsaAttention``: with its lightning indexer (interleaved
    rotary). A layer whose ``indexer_types`` entry is ``"shared"`` reuses the previous layer's selection,
    which a layer on its own cannot compute: it raises a ``ValueError`` naming ``indexer_types``."""
    if module.indexer is None:
        raise ValueError(
            f"config.indexer_types[{module.layer_idx}]={config.indexer_types[module.layer_idx]!r}: this "
            "layer reuses the top-k keys of an earlier layer, which is not supported; only 'full' layers are"
        )
    return _convert(module, config, index_interleaved=True)


def _convert(
    module: nn.Module, config: object, *, index_interleaved: bool | None = None
) -> MultiHeadLatentAttention:
    """The part the three share; ``index_interleaved``: ``None`` without an indexer, else its rotary style."""
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
    h, d_nope, d_r, d_c = (
        module.num_heads,
        module.qk_nope_head_dim,
        module.qk_rope_head_dim,
        module.kv_lora_rank,
    )
    indexer = None if index_interleaved is None else module.indexer
    sparse = {} if indexer is None else {"index_heads": indexer.n_heads, "index_dim": indexer.head_dim}
    weight = module.kv_a_proj_with_mqa.weight
    ours = MultiHeadLatentAttention(
        module.hidden_size,
        h,
        kv_rank=d_c,
        d_nope=d_nope,
        d_rope=d_r,
        d_v=module.v_head_dim,
        q_rank=module.q_lora_rank,
        rope_theta=float(rope["rope_theta"]),
        eps=module.kv_a_layernorm.variance_epsilon,
        bias=module.o_proj.bias is not None,
        dropout=float(module.attention_dropout),
        **sparse,
        top_k=None if indexer is None else indexer.index_topk,
    ).to(device=weight.device, dtype=weight.dtype)
    # Half-split order of DeepSeek's interleaved rotary rows: evens first, then odds (identity otherwise).
    order = _half_split(d_r, weight.device, getattr(config, "rope_interleave", True))  # (d_r,)
    q_rows = _per_head(h, torch.cat([torch.arange(d_nope, device=weight.device), d_nope + order]))
    kv_rows = torch.cat([torch.arange(d_c, device=weight.device), d_c + order])
    q_up = module.q_proj if module.q_lora_rank is None else module.q_b_proj
    pairs = [
        (ours.W_uq.weight, q_up.weight[q_rows]),
        (ours.W_dkv.weight, weight[kv_rows]),
        (ours.kv_norm.weight, module.kv_a_layernorm.weight),
        (ours.W_ukv.weight, module.kv_b_proj.weight),
        (ours.W_o.weight, module.o_proj.weight),
    ]
    if module.q_lora_rank is not None:
        ours.q_norm.eps = module.q_a_layernorm.variance_epsilon  # its own, like every norm here
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
    if indexer is not None:  # its heads rotate their first d_r coordinates: [rope | rest]
        rest = torch.arange(d_r, indexer.head_dim, device=weight.device)
        order = torch.cat([_half_split(d_r, weight.device, index_interleaved), rest])  # (d_i,)
        ours.ik_norm.eps = indexer.k_norm.eps
        pairs += [
            (ours.W_iq.weight, indexer.wq_b.weight[_per_head(indexer.n_heads, order)]),
            (ours.W_ik.weight, indexer.wk.weight[order]),
            (ours.ik_norm.weight, indexer.k_norm.weight[order]),
            (ours.ik_norm.bias, indexer.k_norm.bias[order]),
            (ours.W_iw.weight, indexer.weights_proj.weight),
        ]
    with torch.no_grad():
        for target, source in pairs:
            target.copy_(source)
    return ours.eval()


def _half_split(d: int, device: torch.device, interleaved: bool) -> Tensor:
    """The order that turns ``d`` interleaved rotary coordinates into half-split ones: evens, then odds."""
    order = torch.arange(d, device=device)
    return torch.cat([order[0::2], order[1::2]]) if interleaved else order  # (d,)


def _per_head(heads: int, order: Tensor) -> Tensor:
    """Row indices of a projection of ``heads`` heads side by side, each head's rows taken in ``order``."""
    width = order.numel()
    return (torch.arange(heads, device=order.device)[:, None] * width + order).flatten()  # (heads width,)
