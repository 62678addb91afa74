"""Today's decoders' attention layers, from Hugging Face transformers onto :class:`mha.MultiHeadAttention`.

:func:`from_transformers` reads one attention module of a transformers model (and the model's config) and
returns our layer with its weights copied. What each family adds to Llama's layer is data,
:data:`mha.families.FAMILIES`, which :class:`mha.costs.ModelConfig` reads too; :func:`family_layer` builds a
family's layer from it and the numbers (sizes, bases, windows) that the converter reads from the module and
config:

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

DeepSeek-V3, DeepSeek-V3.2 and GLM-5 take latent attention (:mod:`mha.pretrained.latent`), Qwen3-Next's and
Qwen3.5's linear layers Gated DeltaNet (:mod:`mha.pretrained.linear`).

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
from dataclasses import replace

import torch
from torch import nn

from mha.bands import Chunk, Window
from mha.families import GEMMA3, GEMMA4, GPT_OSS, LLAMA, LLAMA4, QWEN3, QWEN3_NEXT, Family
from mha.gates import OutputGate
from mha.multihead import KeysAsValues, MultiHeadAttention
from mha.positional import Rotary, Temperature
from mha.pretrained.latent import from_deepseek_v3, from_deepseek_v32, from_glm5
from mha.pretrained.linear import from_qwen3_5, from_qwen3_next
from mha.scores import Sinks


def family_layer(
    family: Family,
    d_model: int,
    h: int,
    *,
    n_kv_heads: int | None = None,
    head_dim: int | None = None,
    bias: bool = False,
    dropout: float = 0.0,
    scale: float | None = None,
    rotary: Rotary | None = None,
    window: int | None = None,
    chunk: int | None = None,
    temperature: tuple[float, float] | None = None,
    keys_as_values: bool = False,
    eps: float = 1e-6,
) -> MultiHeadAttention:
    """A layer of ``family``: its parts from the family, its numbers from the arguments (random weights).

    Args:
        family: one of :data:`mha.families.FAMILIES` (or a :func:`dataclasses.replace` of one).
        d_model, h, n_kv_heads, head_dim, bias, dropout, scale: as :class:`mha.MultiHeadAttention`'s.
        rotary: the layer's rotary positions; ``None``: none (with ``temperature`` where the family tunes
            one).
        window, chunk: a sliding window of that many keys, or chunks of that many positions (a family with
            ``chunked`` local layers takes ``chunk``).
        temperature: ``(floor_scale, attn_scale)`` of a layer without positions, for a family that tunes it.
        keys_as_values: a layer whose keys double as values (:class:`mha.multihead.KeysAsValues`), for a
            family that has them.
        eps: the epsilon of the norms.

    Raises:
        ValueError: an argument the family has no part for (a chunk, a temperature, keys as values).
    """
    _check_family(family, chunk=chunk, temperature=temperature, keys_as_values=keys_as_values)
    d_k = head_dim or d_model // h
    weighted = family.qk_norm in ("x w", "x (1 + w)")  # "x (1 + w)" is x w with the stored weight plus 1
    norms = {} if family.qk_norm is None else {"q_norm": None, "k_norm": None}
    parts = {name: nn.RMSNorm(d_k, eps=eps, elementwise_affine=weighted) for name in norms}
    if family.v_norm:
        parts["v_norm"] = nn.RMSNorm(d_k, eps=eps, elementwise_affine=False)
    if rotary is not None or temperature is not None:
        parts["positions"] = rotary if rotary is not None else Temperature(*temperature)
    if window is not None or chunk is not None:
        parts["band"] = Window(window) if window is not None else Chunk(chunk)
    if family.sinks:
        parts["softmax"] = Sinks(h)
    if family.gate:
        parts["gate"] = OutputGate(d_model, h * d_k, bias=bias)
    kind = KeysAsValues if keys_as_values else MultiHeadAttention
    options = {
        "n_kv_heads": n_kv_heads,
        "head_dim": head_dim,
        "bias": bias,
        "dropout": dropout,
        "scale": scale,
    }
    return kind(d_model, h, **options, **parts)


def _check_family(family: Family, **asked: object) -> None:
    """Raise ``ValueError`` for an argument of :func:`family_layer` that ``family`` has no part for."""
    if not isinstance(family, Family):
        raise TypeError(f"family must be an mha.families.Family, got {type(family).__name__}")
    has = {
        "chunk": family.chunked,
        "temperature": family.temperature,
        "keys_as_values": family.keys_as_values,
    }
    for name, value in asked.items():
        if value not in (None, False) and not has[name]:
            raise ValueError(f"{name}={value!r}: the family {family.name} has no such layers")


def _convert(module: nn.Module, config: object, family: Family) -> MultiHeadAttention:
    """Our layer with ``module``'s weights: ``family``'s parts, with numbers from ``module`` and ``config``.

    Args:
        module: the transformers attention module (``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``; without
            ``v_proj`` with keys as values).
        config: the model's (text) config.
        family: the family, as transformers' module and config say it (:func:`_read_family`).
    """
    family, numbers = _read_family(module, config, family)
    q_proj, d_k = module.q_proj, module.head_dim
    h, h_kv = module.o_proj.in_features // d_k, module.k_proj.out_features // d_k
    if q_proj.out_features != (2 if family.gate else 1) * h * d_k:
        raise ValueError(
            f"q_proj has {q_proj.out_features} rows for h={h} heads of d_k={d_k}: "
            + (
                "no output gate beside the queries"
                if family.gate
                else "an output gate this family does not have"
            )
        )
    scale = None if math.isclose(module.scaling, d_k**-0.5, rel_tol=1e-15) else module.scaling
    shape = {"n_kv_heads": h_kv, "head_dim": d_k, "bias": q_proj.bias is not None, "scale": scale}
    dropout = float(config.attention_dropout)
    ours = family_layer(family, config.hidden_size, h, **shape, dropout=dropout, **numbers)
    ours.to(device=q_proj.weight.device, dtype=q_proj.weight.dtype)
    with torch.no_grad():
        for ours_tensor, theirs in _linears(ours, module, h, d_k, family.gate):
            ours_tensor.copy_(theirs)
        theirs_norms = [getattr(module, name, None) for name in ("q_norm", "k_norm", "v_norm")]
        if hasattr(module, "qk_norm"):  # Llama 4: one weightless norm for queries and keys
            theirs_norms[:2] = [module.qk_norm] * 2
        for ours_norm, theirs in zip((ours.q_norm, ours.k_norm, ours.v_norm), theirs_norms, strict=True):
            if isinstance(ours_norm, nn.RMSNorm):
                ours_norm.eps = getattr(theirs, "variance_epsilon", None) or theirs.eps
            if getattr(ours_norm, "weight", None) is not None:  # Gemma 3's x_hat (1 + w): weight 1 + w
                ours_norm.weight.copy_(theirs.weight + (1.0 if family.qk_norm == "x (1 + w)" else 0.0))
        if family.sinks:
            ours.softmax.sinks.copy_(module.sinks)
    return ours.eval()


def _read_family(module: nn.Module, config: object, family: Family) -> tuple[Family, dict]:
    """``family`` as this layer of this config has it, and the numbers of :func:`family_layer` it reads
    (``rotary``, ``window``, ``chunk``, ``temperature``, ``keys_as_values``)."""
    if getattr(config, "attn_logit_softcapping", None):  # Gemma 3's config has it; its attention ignores it
        raise ValueError(f"config.attn_logit_softcapping={config.attn_logit_softcapping!r} is not supported")
    both_ways = getattr(config, "use_bidirectional_attention", None)
    if both_ways not in (None, False, "vision"):  # "vision": images attend both ways, text causally
        raise ValueError(
            f"config.use_bidirectional_attention={both_ways!r} is not supported (causal layers only)"
        )
    if getattr(config, "num_kv_shared_layers", 0):
        raise ValueError(
            f"config.num_kv_shared_layers={config.num_kv_shared_layers} (layers reusing another layer's keys "
            "and values) is not supported"
        )
    numbers = {"window": getattr(module, "sliding_window", None)}  # None on full layers
    numbers["keys_as_values"] = family.keys_as_values and module.v_proj is None  # Gemma 4's full layers
    if family is LLAMA4:  # the chunked layers turn (no_rope_layers entry 1), the others tune a temperature
        chunked = config.layer_types[module.layer_idx] == "chunked_attention"
        numbers["chunk"] = config.attention_chunk_size if chunked else None
        if not module.use_rope or not hasattr(module, "qk_norm"):  # use_qk_norm: on rotary layers only
            family = replace(family, qk_norm=None)
        if not module.use_rope:
            tuned = config.attn_temperature_tuning
            numbers["temperature"] = (config.floor_scale, config.attn_scale) if tuned else None
            return family, numbers
    return family, {**numbers, "rotary": _rotary(module, config, family)}


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
                pairs.append((getattr(ours.gate.W_g, kind), gate_rows.reshape(h * d_k, -1).squeeze(-1)))
            if t is not None:
                pairs.append((getattr(getattr(ours, name), kind), t))
    return pairs


def _rotary(module: nn.Module, config: object, family: Family) -> Rotary:
    """The rotary positions of ``module``'s layer; ``ValueError`` for a rotary scaling we do not implement."""
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
    proportional = rope_type == "proportional"  # Gemma 4's full layers; its sliding layers: half-split
    partial = family.partial_rotary or proportional
    fraction = params.get("partial_rotary_factor", 1.0) if partial else 1.0
    style = "proportional" if proportional else family.rope_style.replace("proportional", "half-split")
    return Rotary(float(params["rope_theta"]), fraction=fraction, style=style)


# One converter per transformers attention class, found by the class name (transformers is not imported):
# a family of mha.families for the layers onto MultiHeadAttention, a function for the others.
CONVERTERS: dict[str, Family | Callable[[nn.Module, object], nn.Module]] = {
    "LlamaAttention": LLAMA,
    "Qwen3Attention": QWEN3,
    "Gemma3Attention": GEMMA3,
    "GptOssAttention": GPT_OSS,
    "DeepseekV3Attention": from_deepseek_v3,  # latent attention: a MultiHeadLatentAttention
    "Qwen3NextAttention": QWEN3_NEXT,
    "Qwen3_5Attention": QWEN3_NEXT,  # the same layer
    "Gemma4TextAttention": GEMMA4,
    "Llama4TextAttention": LLAMA4,
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
    target = CONVERTERS[name]
    return (
        _convert(attn_module, config, target) if isinstance(target, Family) else target(attn_module, config)
    )
