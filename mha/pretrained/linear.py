"""Qwen3-Next's and Qwen3.5's linear-attention layers, transformers' ``Qwen3NextGatedDeltaNet`` and
``Qwen3_5GatedDeltaNet``, as :class:`mha.GatedDeltaNet`.

The two hold the same weights laid out differently. Qwen3.5 keeps one matrix per role: ``in_proj_qkv``
(rows ``[q | k | v]``, each head after head), ``in_proj_z`` (the output gate), ``in_proj_b`` (beta) and
``in_proj_a`` (the step ``dt``). Qwen3-Next packs them per key head ``i``: ``in_proj_qkvz`` holds, for each
``i`` in turn, the rows of ``q_i``, ``k_i``, then of the ``g = h_v / h`` value heads and gates that read key
head ``i``; ``in_proj_ba`` the ``g`` betas then the ``g`` steps of those heads. Gathering each role's rows
gives our ``W_q``, ``W_k``, ``W_v``, ``W_gate``, ``W_beta`` and ``W_dt``. The rest copies as it is: the
convolution over ``[q | k | v]`` (``conv1d``), ``A_log``, ``dt_bias``, the gated RMSNorm's weight (``norm``,
applied as ``x_hat w``) and ``out_proj`` (``W_o``).

Shape legend:
    d_model  the model's ``hidden_size``
    h        ``linear_num_key_heads``; h_v ``linear_num_value_heads``; g = h_v / h
    d_k      ``linear_key_head_dim``; d_v ``linear_value_head_dim``
"""

from __future__ import annotations

import torch
from torch import nn

from mha.linear import GatedDeltaNet


def from_qwen3_next(module: nn.Module, config: object) -> GatedDeltaNet:
    """Return a :class:`mha.GatedDeltaNet` equal to a transformers ``Qwen3NextGatedDeltaNet``.

    Args:
        module: ``model.layers[i].linear_attn`` of a Qwen3-Next model.
        config: the model's config (the layer's sizes are read from ``module``, which has them all).

    Returns:
        The layer, in eval mode, with the module's dtype, device and (copied) weights. Called as
        ``ours(x)`` or ``ours(x, mask=mha.causal_mask(n))`` it gives the module's output at positions
        ``0 .. n-1`` (with no padding in the batch).

    Raises:
        ValueError: an activation other than SiLU after the convolution (``config.hidden_act``).
    """
    ours, g = _empty(module)
    h, d_k, d_v, d_model = ours.h, ours.d_k, ours.d_v, ours.d_model
    qkvz = module.in_proj_qkvz.weight.view(h, 2 * d_k + 2 * g * d_v, d_model)  # per key head i
    q, k, v, z = qkvz.split([d_k, d_k, g * d_v, g * d_v], dim=1)  # (h, d_k or g d_v, d_model) each
    beta, dt = module.in_proj_ba.weight.view(h, 2 * g, d_model).split([g, g], dim=1)  # (h, g, d_model) each
    return _copy(module, ours, [q, k, v, z, beta, dt])


def from_qwen3_5(module: nn.Module, config: object) -> GatedDeltaNet:
    """Return a :class:`mha.GatedDeltaNet` equal to a transformers ``Qwen3_5GatedDeltaNet`` (Qwen3.5, 3.6).

    Args, returns and raises as :func:`from_qwen3_next`.
    """
    ours, _ = _empty(module)
    q, k, v = module.in_proj_qkv.weight.split([ours.h * ours.d_k] * 2 + [ours.n_v_heads * ours.d_v])
    weights = [q, k, v, module.in_proj_z.weight, module.in_proj_b.weight, module.in_proj_a.weight]
    return _copy(module, ours, weights)


def _empty(module: nn.Module) -> tuple[GatedDeltaNet, int]:
    """Our layer with the module's sizes, dtype and device, and ``g = h_v / h``."""
    if module.activation != "silu":
        raise ValueError(
            f"config.hidden_act={module.activation!r} is not supported after the convolution: only 'silu'"
        )
    weight = module.out_proj.weight
    ours = GatedDeltaNet(
        module.hidden_size,
        module.num_k_heads,
        n_v_heads=module.num_v_heads,
        head_dim=module.head_k_dim,
        v_head_dim=module.head_v_dim,
        kernel=module.conv_kernel_size,
        activation="silu",
        eps=module.norm.variance_epsilon,
    ).to(device=weight.device, dtype=weight.dtype)
    return ours, module.num_v_heads // module.num_k_heads


def _copy(module: nn.Module, ours: GatedDeltaNet, weights: list[torch.Tensor]) -> GatedDeltaNet:
    """Copy ``weights`` (W_q, W_k, W_v, W_gate, W_beta, W_dt rows, in any shape that flattens to them) and
    the parameters both layouts share."""
    targets = [ours.W_q, ours.W_k, ours.W_v, ours.W_gate, ours.W_beta, ours.W_dt]
    with torch.no_grad():
        for linear, rows in zip(targets, weights, strict=True):
            linear.weight.copy_(rows.reshape(linear.weight.shape))
        for target, source in (
            (ours.conv.weight, module.conv1d.weight),  # (C_conv, 1, kernel)
            (ours.A_log, module.A_log),
            (ours.dt_bias, module.dt_bias),
            (ours.norm.weight, module.norm.weight),
            (ours.W_o.weight, module.out_proj.weight),
        ):
            target.copy_(source)
    return ours.eval()
