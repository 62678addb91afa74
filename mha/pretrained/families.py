"""Today's decoders' attention layers, from Hugging Face transformers onto :class:`mha.MultiHeadAttention`.

:func:`from_transformers` reads one attention module of a transformers model (and the model's config) and
returns our layer with its weights copied. Each family is Llama's attention plus a few options, which is how
transformers' modular files state them too (``modular_qwen3.py``: Qwen3 is Llama plus a norm):

- Llama: rotary positions, grouped-query heads;
- Qwen3: plus an RMSNorm over each head's query and key;
- Qwen3-Next and Qwen3.5: plus an output gate (``q_proj`` holds, head by head, the query then its gate), the
  norms in the ``x_hat (1 + w)`` form, and partial rotary (the first quarter of each head turns); Qwen3.5's
  multimodal rotary (``mrope_section``) turns text positions exactly as the ordinary rotary does;
- Gemma 3: QK-norm in the ``1 + w`` form, its own scale, sliding-window and global layers with their own
  rotary bases;
- Gemma 4: QK-norm ``x_hat w``, a weightless norm on values, scale 1; sliding layers as Gemma 3's; full layers
  with their own head width and key/value heads, keys that double as values (``attention_k_eq_v``) and
  proportional rotary;
- gpt-oss: a learned sink per head, biases, sliding-window and full layers;
- Llama 4: interleaved rotary and a weightless QK-norm on its chunked layers (``attention_chunk_size``); no
  positions and a temperature that grows with the position on the others (``no_rope_layers`` entry 0).

DeepSeek-V3, DeepSeek-V3.2 and GLM-5 take latent attention (:mod:`mha.pretrained.latent`).

transformers is never imported here: a converter is chosen by the module's class name in
:data:`CONVERTERS`, and reads only attributes that the module and config have (transformers 5.23.0).

Shape legend:
    d_model  the model's ``hidden_size``
    h        ``num_attention_heads``; h_kv ``num_key_value_heads`` (Gemma 4's full layers: their own)
    d_k      ``head_dim``, which these models may set apart from d_model / h (Gemma 4: per layer type)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from mha.multihead import MultiHeadAttention
from mha.pretrained.latent import from_deepseek_v3, from_deepseek_v32, from_glm5
from mha.pretrained.linear import from_qwen3_5, from_qwen3_next


def _convert(
    module: nn.Module,
    config: object,
    *,
    norm_offset: float | None = None,
    gate: bool = False,
    positions: bool = True,
    partial: bool = False,
    **options: object,
) -> MultiHeadAttention:
    """Our layer with ``module``'s weights: the part every family shares.

    Args:
        module: the transformers attention module (``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``; without
            ``v_proj`` with keys as values).
        config: the model's (text) config.
        norm_offset: with a weighted QK-norm, what the family adds to the norm's stored weight: ``0.0`` for
            an RMSNorm ``x_hat w`` (Qwen3, Gemma 4), ``1.0`` for ``x_hat (1 + w)`` (Gemma 3, Qwen3-Next);
            ``None``: no weighted QK-norm.
        gate: ``q_proj`` holds each head's query and then its output gate (Qwen3-Next).
        positions: the layer turns its queries and keys (False: Llama 4's NoPE layers).
        partial: the family reads ``partial_rotary_factor`` in a default rotary (Qwen3-Next; Llama does not).
        options: the :class:`~mha.MultiHeadAttention` options the family sets (``scale``, ``qk_norm``,
            ``v_norm``, ``k_eq_v``, ``sinks``, ``chunk``, ``temperature``, ``rope_style``).
    """
    if getattr(config, "attn_logit_softcapping", None):  # Gemma 3's config has it; its attention ignores it
        raise ValueError(f"config.attn_logit_softcapping={config.attn_logit_softcapping!r} is not supported")
    both_ways = getattr(config, "use_bidirectional_attention", None)
    if both_ways not in (None, False, "vision"):  # "vision": images attend both ways, text causally
        raise ValueError(
            f"config.use_bidirectional_attention={both_ways!r} is not supported (causal layers only)"
        )
    q_proj, d_k = module.q_proj, module.head_dim
    h, h_kv = module.o_proj.in_features // d_k, module.k_proj.out_features // d_k
    if q_proj.out_features != (2 if gate else 1) * h * d_k:
        raise ValueError(
            f"q_proj has {q_proj.out_features} rows for h={h} heads of d_k={d_k}: "
            + ("no output gate beside the queries" if gate else "an output gate this family does not have")
        )
    scale = options.pop("scale")
    rope = _rope(module, config, partial=partial) if positions else {}
    ours = MultiHeadAttention(
        config.hidden_size,
        h,
        n_kv_heads=h_kv,
        head_dim=d_k,
        bias=q_proj.bias is not None,
        dropout=float(config.attention_dropout),
        **{"qk_norm": norm_offset is not None, **rope, **options},
        gate=gate,
        scale=None if math.isclose(scale, d_k**-0.5, rel_tol=1e-15) else scale,
        window=getattr(module, "sliding_window", None),  # None on full layers
    ).to(device=q_proj.weight.device, dtype=q_proj.weight.dtype)
    with torch.no_grad():
        for ours_linear, theirs in _linears(ours, module, h, d_k, gate):
            ours_linear.copy_(theirs)
        theirs_norms = [getattr(module, name, None) for name in ("q_norm", "k_norm", "v_norm")]
        if hasattr(module, "qk_norm"):  # Llama 4: one weightless norm for queries and keys
            theirs_norms[:2] = [module.qk_norm] * 2
        for ours_norm, theirs in zip((ours.q_norm, ours.k_norm, ours.v_norm), theirs_norms, strict=True):
            if ours_norm is None:
                continue
            ours_norm.eps = getattr(theirs, "variance_epsilon", None) or theirs.eps
            if ours_norm.weight is not None:
                ours_norm.weight.copy_(theirs.weight + norm_offset)  # Gemma 3's x_hat (1 + w): weight 1 + w
        if ours.sinks is not None:
            ours.sinks.copy_(module.sinks)
    return ours.eval()


def _linears(ours: MultiHeadAttention, module: nn.Module, h: int, d_k: int, gate: bool) -> list:
    """Pairs (our parameter, theirs) of the projections; a gated ``q_proj`` is cut into ``W_q``, ``W_g``."""
    theirs = {"W_q": module.q_proj, "W_k": module.k_proj, "W_v": module.v_proj, "W_o": module.o_proj}
    pairs = []
    for name, linear in theirs.items():
        for kind in ("weight", "bias"):
            t = None if linear is None else getattr(linear, kind)
            if t is not None and name == "W_q" and gate:  # per head [query | gate]: (h, 2, d_k, ...)
                query, gate_rows = t.view(h, 2, d_k, -1).unbind(1)  # 2 x (h, d_k, d_model or 1)
                t = query.reshape(h * d_k, -1).squeeze(-1)
                pairs.append((getattr(ours.W_g, kind), gate_rows.reshape(h * d_k, -1).squeeze(-1)))
            if t is not None:
                pairs.append((getattr(getattr(ours, name), kind), t))
    return pairs


def _rope(module: nn.Module, config: object, *, partial: bool) -> dict:
    """The rotary options of ``module``'s layer; a ``ValueError`` for a rotary scaling we do not implement."""
    params = getattr(config, "rope_parameters", None)
    if not isinstance(params, dict):
        raise ValueError(
            f"config.rope_parameters must be a dict with rope_type and rope_theta, got {params!r}"
        )
    layer_type = getattr(module, "layer_type", None)
    if layer_type in params:  # Gemma 3 and 4: one set of parameters per layer type
        params = params[layer_type]
    rope_type = params.get("rope_type", "default")
    if rope_type not in ("default", "proportional") or params.get("factor", 1.0) != 1.0:
        raise ValueError(
            f"config.rope_parameters rope_type={rope_type!r}, factor={params.get('factor', 1.0)!r} (rotary "
            "scaling) is not supported; only 'default' and Gemma 4's 'proportional' rotary, unscaled, are"
        )
    fraction = params.get("partial_rotary_factor", 1.0) if partial or rope_type == "proportional" else 1.0
    style = "proportional" if rope_type == "proportional" else "half-split"
    return {"rope_theta": float(params["rope_theta"]), "rope_fraction": fraction, "rope_style": style}


def _llama(module: nn.Module, config: object) -> MultiHeadAttention:
    """``LlamaAttention``: rotary positions, grouped-query heads, biases if ``attention_bias``."""
    return _convert(module, config, scale=module.scaling)


def _qwen3(module: nn.Module, config: object) -> MultiHeadAttention:
    """``Qwen3Attention``: Llama plus an RMSNorm over each head's query and key, and sliding layers if set."""
    return _convert(module, config, scale=module.scaling, norm_offset=0.0)


def _qwen3_next(module: nn.Module, config: object) -> MultiHeadAttention:
    """``Qwen3NextAttention`` and ``Qwen3_5Attention``: Qwen3 plus an output gate, the norms in the form
    ``x_hat (1 + w)`` and partial rotary (``partial_rotary_factor``; Qwen3.5's ``mrope_section`` changes
    nothing for text)."""
    return _convert(module, config, scale=module.scaling, norm_offset=1.0, gate=True, partial=True)


def _gemma3(module: nn.Module, config: object) -> MultiHeadAttention:
    """``Gemma3Attention``: QK-norm in Gemma's ``1 + w`` form, scale ``query_pre_attn_scalar ** -0.5``, and
    a rotary base per layer type (local layers ``sliding_attention``, global ``full_attention``)."""
    return _convert(module, config, scale=module.scaling, norm_offset=1.0)


def _gemma4(module: nn.Module, config: object) -> MultiHeadAttention:
    """``Gemma4TextAttention``: QK-norm ``x_hat w``, a weightless norm of the values, scale 1; its full layers
    with keys as values (``attention_k_eq_v``) and proportional rotary."""
    if getattr(config, "num_kv_shared_layers", 0):
        raise ValueError(
            f"config.num_kv_shared_layers={config.num_kv_shared_layers} (layers reusing another layer's keys "
            "and values) is not supported"
        )
    k_eq_v = module.v_proj is None  # use_alternative_attention
    return _convert(module, config, scale=module.scaling, norm_offset=0.0, v_norm=True, k_eq_v=k_eq_v)


def _gpt_oss(module: nn.Module, config: object) -> MultiHeadAttention:
    """``GptOssAttention``: a learned sink per head, biases, sliding and full layers."""
    return _convert(module, config, scale=module.scaling, sinks=True)


def _llama4(module: nn.Module, config: object) -> MultiHeadAttention:
    """``Llama4TextAttention``: a layer with rotary positions (``no_rope_layers`` entry 1) turns neighbouring
    pairs and, with ``use_qk_norm``, normalises its queries and keys without a weight; a NoPE layer tunes its
    attention temperature; a ``chunked_attention`` layer sees its own chunk only."""
    chunked = config.layer_types[module.layer_idx] == "chunked_attention"
    options = {"scale": module.scaling, "chunk": config.attention_chunk_size if chunked else None}
    if module.use_rope:
        options.update(
            rope_style="interleaved", qk_norm="weightless" if hasattr(module, "qk_norm") else False
        )
    elif config.attn_temperature_tuning:
        options.update(temperature=(config.floor_scale, config.attn_scale))
    return _convert(module, config, positions=bool(module.use_rope), **options)


# One converter per transformers attention class, found by the class name (transformers is not imported).
CONVERTERS: dict[str, Callable[[nn.Module, object], nn.Module]] = {
    "LlamaAttention": _llama,
    "Qwen3Attention": _qwen3,
    "Gemma3Attention": _gemma3,
    "GptOssAttention": _gpt_oss,
    "DeepseekV3Attention": from_deepseek_v3,  # latent attention: a MultiHeadLatentAttention
    "Qwen3NextAttention": _qwen3_next,
    "Qwen3_5Attention": _qwen3_next,
    "Gemma4TextAttention": _gemma4,
    "Llama4TextAttention": _llama4,
    "DeepseekV32Attention": from_deepseek_v32,  # latent attention with DeepSeek Sparse Attention
    "GlmMoeDsaAttention": from_glm5,
    "Qwen3NextGatedDeltaNet": from_qwen3_next,  # linear attention (layer.linear_attn): a GatedDeltaNet
    "Qwen3_5GatedDeltaNet": from_qwen3_5,  # the same layer, Qwen3.5's projection layout
}


def from_transformers(attn_module: nn.Module, config: object) -> nn.Module:
    """Our layer, with the weights of a transformers attention module copied, in eval mode.

    For ``layer.self_attn`` of a transformers model and ``n`` hidden states ``x`` ``(B, n, d_model)`` at
    positions ``0 .. n-1``, ``from_transformers(layer.self_attn, config)(x, mask=mha.causal_mask(n))``
    gives that layer's output in the model's own forward pass, for full, sliding-window, chunked and sparse
    layers alike (the window, chunk or top-k is the layer's; transformers applies it through the mask the
    model builds, ours applies it in the layer). The copy holds no reference to ``attn_module`` and runs no
    transformers code.

    Args:
        attn_module: an attention module whose class name is a key of :data:`CONVERTERS` (``LlamaAttention``,
            ``Qwen3Attention``, ``Qwen3NextAttention``, ``Qwen3_5Attention``, ``Gemma3Attention``,
            ``Gemma4TextAttention``, ``GptOssAttention``, ``Llama4TextAttention``, ``DeepseekV3Attention``,
            ``DeepseekV32Attention``, ``GlmMoeDsaAttention``).
        config: the model's config (for Gemma 3, Gemma 4, Qwen3.5 and Llama 4, its text config).

    Returns:
        The converted layer, with the module's dtype and device, in eval mode.

    Raises:
        TypeError: ``attn_module`` is of a class we cannot convert.
        ValueError: a setting we do not support, named in the message: rotary scaling other than the default
            (YaRN, llama3, a ``factor``); Gemma's bidirectional attention or attention soft-capping; Gemma 4's
            cross-layer KV sharing (``num_kv_shared_layers``); GLM-5 layers that reuse another layer's top-k
            (``indexer_types``).
    """
    name = type(attn_module).__name__
    if name not in CONVERTERS:
        raise TypeError(f"attn_module must be one of {', '.join(CONVERTERS)}, got {name}")
    return CONVERTERS[name](attn_module, config)
