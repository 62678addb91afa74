"""Today's decoders' attention layers, from Hugging Face transformers onto :class:`mha.MultiHeadAttention`.

:func:`from_transformers` reads one attention module of a transformers model (and the model's config) and
returns our layer with its weights copied: Llama (rotary positions, grouped-query heads), Qwen3 (Llama plus
an RMSNorm over each head's query and key), Gemma 3 (QK-norm in Gemma's ``1 + w`` form, its own scale,
sliding-window and global layers with their own rotary bases) and gpt-oss (a learned sink per head, biases,
sliding-window and full layers). Each family differs from Llama by a few options, which is how
transformers' modular files state them too (``modular_qwen3.py``: Qwen3 is Llama plus a norm).

transformers is never imported here: a converter is chosen by the module's class name in
:data:`CONVERTERS`, and reads only attributes that the module and config have (transformers 5.23.0).

Shape legend:
    d_model  the model's ``hidden_size``
    h        ``num_attention_heads``; h_kv ``num_key_value_heads``
    d_k      ``head_dim``, which these models may set apart from d_model / h
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from mha.multihead import MultiHeadAttention
from mha.pretrained.latent import from_deepseek_v3
from mha.pretrained.linear import from_qwen3_5, from_qwen3_next


def _convert(
    module: nn.Module,
    config: object,
    *,
    scale: float | None = None,
    norm_offset: float | None = None,
    sinks: bool = False,
) -> MultiHeadAttention:
    """Our layer with ``module``'s weights: the part every family shares.

    Args:
        module: the transformers attention module (``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``).
        config: the model's (text) config.
        scale: the factor on ``q k^T``; ``None`` means ``1 / sqrt(d_k)``.
        norm_offset: with QK-norm, what the family adds to the norm's stored weight: ``0.0`` for Qwen3's
            RMSNorm (``x_hat w``), ``1.0`` for Gemma's (``x_hat (1 + w)``); ``None``: no QK-norm.
        sinks: copy the module's per-head ``sinks`` (gpt-oss).
    """
    for name in ("use_bidirectional_attention", "attn_logit_softcapping"):
        if getattr(config, name, None):  # Gemma 3's config has both; its attention applies neither as is
            raise ValueError(f"config.{name}={getattr(config, name)!r} is not supported (causal layers only)")
    h, h_kv, d_k = config.num_attention_heads, config.num_key_value_heads, module.head_dim
    weight = module.q_proj.weight
    ours = MultiHeadAttention(
        config.hidden_size,
        h,
        n_kv_heads=h_kv,
        head_dim=d_k,
        bias=module.q_proj.bias is not None,
        dropout=float(config.attention_dropout),
        rope_theta=_rope_theta(module, config),
        qk_norm=norm_offset is not None,
        scale=None if scale is None or math.isclose(scale, d_k**-0.5, rel_tol=1e-15) else scale,
        window=getattr(module, "sliding_window", None),  # None on full layers
        sinks=sinks,
    ).to(device=weight.device, dtype=weight.dtype)
    with torch.no_grad():
        for ours_linear, theirs in zip(
            (ours.W_q, ours.W_k, ours.W_v, ours.W_o),
            (module.q_proj, module.k_proj, module.v_proj, module.o_proj),
            strict=True,
        ):
            ours_linear.weight.copy_(theirs.weight)
            if theirs.bias is not None:
                ours_linear.bias.copy_(theirs.bias)
        if norm_offset is not None:
            for ours_norm, theirs in ((ours.q_norm, module.q_norm), (ours.k_norm, module.k_norm)):
                ours_norm.weight.copy_(theirs.weight + norm_offset)  # Gemma's x_hat (1 + w): weight 1 + w
                ours_norm.eps = getattr(theirs, "variance_epsilon", None) or theirs.eps
        if sinks:
            ours.sinks.copy_(module.sinks)
    return ours.eval()


def _rope_theta(module: nn.Module, config: object) -> float:
    """The rotary base of ``module``'s layer; a ``ValueError`` for a rotary scaling we do not implement."""
    params = getattr(config, "rope_parameters", None)
    if not isinstance(params, dict):
        raise ValueError(
            f"config.rope_parameters must be a dict with rope_type and rope_theta, got {params!r}"
        )
    layer_type = getattr(module, "layer_type", None)
    if layer_type in params:  # Gemma 3: one set of parameters per layer type
        params = params[layer_type]
    rope_type = params.get("rope_type", "default")
    if rope_type != "default":
        raise ValueError(
            f"config.rope_parameters rope_type={rope_type!r} (rotary scaling) is not supported; "
            "only 'default' rotary embeddings are"
        )
    return float(params["rope_theta"])


def _llama(module: nn.Module, config: object) -> MultiHeadAttention:
    """``LlamaAttention``: rotary positions, grouped-query heads, biases if ``attention_bias``."""
    return _convert(module, config, scale=module.scaling)


def _qwen3(module: nn.Module, config: object) -> MultiHeadAttention:
    """``Qwen3Attention``: Llama plus an RMSNorm over each head's query and key, and sliding layers if set."""
    return _convert(module, config, scale=module.scaling, norm_offset=0.0)


def _gemma3(module: nn.Module, config: object) -> MultiHeadAttention:
    """``Gemma3Attention``: QK-norm in Gemma's ``1 + w`` form, scale ``query_pre_attn_scalar ** -0.5``, and
    a rotary base per layer type (local layers ``sliding_attention``, global ``full_attention``)."""
    return _convert(module, config, scale=module.scaling, norm_offset=1.0)


def _gpt_oss(module: nn.Module, config: object) -> MultiHeadAttention:
    """``GptOssAttention``: a learned sink per head, biases, sliding and full layers."""
    return _convert(module, config, scale=module.scaling, sinks=True)


# One converter per transformers attention class, found by the class name (transformers is not imported).
CONVERTERS: dict[str, Callable[[nn.Module, object], nn.Module]] = {
    "LlamaAttention": _llama,
    "Qwen3Attention": _qwen3,
    "Gemma3Attention": _gemma3,
    "GptOssAttention": _gpt_oss,
    "DeepseekV3Attention": from_deepseek_v3,  # latent attention: a MultiHeadLatentAttention
    "Qwen3NextGatedDeltaNet": from_qwen3_next,  # linear attention (layer.linear_attn): a GatedDeltaNet
    "Qwen3_5GatedDeltaNet": from_qwen3_5,  # the same layer, Qwen3.5's projection layout
}


def from_transformers(attn_module: nn.Module, config: object) -> nn.Module:
    """Our layer, with the weights of a transformers attention module copied, in eval mode.

    For ``layer.self_attn`` of a transformers model and ``n`` hidden states ``x`` ``(B, n, d_model)`` at
    positions ``0 .. n-1``, ``from_transformers(layer.self_attn, config)(x, mask=mha.causal_mask(n))``
    gives that layer's output in the model's own forward pass, for full and sliding-window layers alike (the
    window is the module's ``sliding_window``; transformers applies it through the mask the model builds,
    ours applies it in the layer). The copy holds no reference to ``attn_module``.

    Args:
        attn_module: an attention module whose class name is a key of :data:`CONVERTERS`
            (``LlamaAttention``, ``Qwen3Attention``, ``Gemma3Attention``, ``GptOssAttention``).
        config: the model's config (for Gemma 3, its text config).

    Returns:
        The converted layer, with the module's dtype and device, in eval mode.

    Raises:
        TypeError: ``attn_module`` is of a class we cannot convert.
        ValueError: a setting we do not support (rotary scaling other than the default, such as YaRN or
            llama3; Gemma's bidirectional attention or attention soft-capping), named in the message.
    """
    name = type(attn_module).__name__
    if name not in CONVERTERS:
        raise TypeError(f"attn_module must be one of {', '.join(CONVERTERS)}, got {name}")
    return CONVERTERS[name](attn_module, config)
