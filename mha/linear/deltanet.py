"""Gated DeltaNet as an ``nn.Module``: the linear-attention layer of Qwen3-Next and Qwen3.5, with a state.

Three layers in four of Qwen3-Next and Qwen3.5 are this layer (Yang, Kautz and Hatamizadeh 2024), with the
call and decode contract of :class:`mha.MultiHeadAttention`. What it adds around the rule of
:mod:`mha.linear.rules`:

1. three projections ``W_q``, ``W_k``, ``W_v`` (key heads and value heads counted and sized apart), then a
   short causal convolution over ``[q | k | v]``, one filter per channel (each channel mixes its own last
   ``kernel`` tokens), and an activation (SiLU);
2. each query and key head divided by its length (L2 norm), the query then by ``sqrt(d_k)``;
3. per value head and token, a writing strength ``beta_t = sigmoid(x W_beta)`` and a decay
   ``alpha_t = exp(-exp(A_log) softplus(x W_dt + dt_bias))`` in (0, 1), as Mamba 2 discretises a step;
4. the gated delta rule, each value head ``j`` reading query and key head ``j // (h_v / h)``;
5. each value head's output through an RMSNorm (weight applied as ``x_hat w``) times ``SiLU(x W_gate)``,
   then ``W_o``.

Decoding keeps a state, not a cache: per sequence the rule's ``h_v`` matrices ``d_v x d_k``, and the
convolution's last ``kernel - 1`` inputs, however long the context.

Shape legend:
    B        batch size
    n        number of tokens (n_new when decoding)
    d_model  model width
    h        number of query and key heads (``linear_num_key_heads``)
    h_v      number of value heads (``linear_num_value_heads``), a multiple of h
    d_k      width of a query and key head; d_v of a value head
    C_conv   channels of the convolution: 2 h d_k + h_v d_v
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from mha._checks import (
    check_float_tensor,
    check_heads,
    check_mask,
    check_positive_int,
    check_same_dtype_device,
)
from mha.linear.rules import chunked, recurrent
from mha.masks import causal_mask

RULES = ("linear", "delta", "gated_delta")  # the path: plain sum, + delta rule, + decay
ACTIVATIONS = {"silu": F.silu, None: lambda x: x}  # after the convolution (transformers: config.hidden_act)
L2_EPS = 1e-6  # q / sqrt(|q|^2 + eps), as transformers' l2norm and the fla kernels


class RecurrentState(NamedTuple):
    """What :meth:`GatedDeltaNet.decode` keeps of the tokens seen so far, whatever their number.

    ``S``: the rule's state, one ``(d_v, d_k)`` matrix per value head, ``(B, h_v, d_v, d_k)``.
    ``conv``: the convolution's last ``kernel - 1`` inputs (the projections ``[q | k | v]`` before it),
    ``(B, kernel - 1, C_conv)``.
    """

    S: Tensor
    conv: Tensor

    @property
    def nbytes(self) -> int:
        """Bytes held: ``B (h_v d_v d_k + (kernel - 1) C_conv)`` elements, constant as the context grows."""
        return self.S.nbytes + self.conv.nbytes


class GatedDeltaNet(nn.Module):
    """Causal linear attention with a state: the gated delta rule as Qwen3-Next and Qwen3.5 use it.

    Args:
        d_model: width of the input and output vectors.
        h: number of query and key heads; must divide ``d_model`` unless ``head_dim`` is given.
        n_v_heads: number of value heads ``h_v``, a multiple of ``h``; ``None`` means ``h``. Value head
            ``j`` reads key head ``j // (h_v / h)``.
        head_dim: ``d_k``; ``None`` means ``d_model / h``.
        v_head_dim: ``d_v``; ``None`` means ``d_k``.
        kernel: the causal convolution's length (Qwen: 4); 1 scales each channel, nothing more.
        activation: after the convolution, ``"silu"`` or ``None``.
        rule: ``"gated_delta"`` (the layer), ``"delta"`` (no decay) or ``"linear"`` (no delta: the
            state sums ``v k^T``), so that one module walks the path of :mod:`mha.linear.rules`.
        chunk: the chunk length of :func:`mha.linear.chunked`, which ``forward`` uses.
        eps: the epsilon of the output's RMSNorm.

    Attributes:
        W_q, W_k: ``nn.Linear(d_model, h d_k)``; W_v: ``nn.Linear(d_model, h_v d_v)`` (no biases).
        conv: ``nn.Conv1d(C_conv, C_conv, kernel, groups=C_conv)``, no bias, over ``[q | k | v]``.
        W_beta: ``nn.Linear(d_model, h_v)`` (``None`` for ``rule="linear"``).
        W_dt, A_log, dt_bias: ``nn.Linear(d_model, h_v)`` and two ``(h_v,)`` parameters
            (``rule="gated_delta"`` only, else ``None``).
        W_gate: ``nn.Linear(d_model, h_v d_v)``; norm: ``nn.RMSNorm(d_v)``; W_o: ``nn.Linear(h_v d_v,
            d_model)``.

    Example:
        >>> layer = GatedDeltaNet(32, 2, n_v_heads=4, head_dim=8, v_head_dim=6)
        >>> x = torch.randn(2, 10, 32)  # (B, n, d_model)
        >>> out, _ = layer(x)  # causal by construction; mask=causal_mask(10) gives the same
        >>> _, _, state = layer.decode(x)
        >>> out.shape, state.S.shape  # (B, n, d_model), (B, h_v, d_v, d_k)
        (torch.Size([2, 10, 32]), torch.Size([2, 4, 6, 8]))
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        *,
        n_v_heads: int | None = None,
        head_dim: int | None = None,
        v_head_dim: int | None = None,
        kernel: int = 4,
        activation: str | None = "silu",
        rule: str = "gated_delta",
        chunk: int = 64,
        eps: float = 1e-6,
    ) -> None:
        super().__init__()
        _, _, d_k = check_heads(d_model, h, head_dim=head_dim)
        h_v = h if n_v_heads is None else check_positive_int("n_v_heads", n_v_heads)
        if h_v % h:
            raise ValueError(f"n_v_heads={h_v} must be a multiple of the number of key heads h={h}")
        d_v = d_k if v_head_dim is None else check_positive_int("v_head_dim", v_head_dim)
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {list(ACTIVATIONS)}, got {activation!r}")
        if rule not in RULES:
            raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
        self.d_model, self.h, self.n_v_heads, self.d_k, self.d_v = d_model, h, h_v, d_k, d_v
        self.kernel = check_positive_int("kernel", kernel)
        self.chunk = check_positive_int("chunk", chunk)
        self.activation, self.rule = activation, rule
        channels = 2 * h * d_k + h_v * d_v  # C_conv
        self.W_q = nn.Linear(d_model, h * d_k, bias=False)
        self.W_k = nn.Linear(d_model, h * d_k, bias=False)
        self.W_v = nn.Linear(d_model, h_v * d_v, bias=False)
        self.conv = nn.Conv1d(channels, channels, kernel, groups=channels, bias=False)
        self.W_beta = None if rule == "linear" else nn.Linear(d_model, h_v, bias=False)
        self.W_dt = self.A_log = self.dt_bias = None
        if rule == "gated_delta":  # Mamba 2's initialisation: A in [1, 16], softplus(dt_bias) in [1e-3, 0.1]
            self.W_dt = nn.Linear(d_model, h_v, bias=False)
            self.A_log = nn.Parameter(torch.empty(h_v).uniform_(1.0, 16.0).log())
            dt = torch.empty(h_v).uniform_(math.log(1e-3), math.log(0.1)).exp()
            self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))  # softplus^-1(dt)
        self.W_gate = nn.Linear(d_model, h_v * d_v, bias=False)
        self.norm = nn.RMSNorm(d_v, eps=eps)
        self.W_o = nn.Linear(h_v * d_v, d_model, bias=False)

    def extra_repr(self) -> str:
        names = ("d_model", "h", "n_v_heads", "d_k", "d_v", "kernel", "activation", "rule", "chunk")
        return ", ".join(f"{name}={getattr(self, name)!r}" for name in names)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, None]:
        """The layer over ``x`` at positions ``0 .. n-1``, by chunks (:func:`mha.linear.chunked`).

        Args:
            x: shape ``(B, n, d_model)``.
            mask: ``None`` or a causal mask (:func:`mha.causal_mask`, broadcastable to ``(B, h_v, n, n)``),
                which changes nothing: the layer is causal by construction and can apply no other mask.

        Returns:
            ``(out, None)``: ``out`` of shape ``(B, n, d_model)``; there are no attention weights.

        Raises:
            ValueError: any other mask (padding, a window, bidirectional), or a wrong shape of ``x``.
        """
        self._check_x(x)
        if mask is not None:
            self._check_mask(mask, x)
        return self._run(x, None, "chunked")["out"], None

    def decode(self, x: Tensor, state: RecurrentState | None = None) -> tuple[Tensor, None, RecurrentState]:
        """The layer for new tokens, starting from the state the tokens before them left.

        One token steps the recurrence (:func:`mha.linear.recurrent`); several (a prompt) go by chunks.
        Token by token this equals ``forward`` on the whole sequence.

        Args:
            x: the new tokens, shape ``(B, n_new, d_model)``.
            state: the :class:`RecurrentState` of the previous call, or ``None`` at the start.

        Returns:
            ``(out, None, state)``: ``out`` of shape ``(B, n_new, d_model)``, no weights, and the state after
            the new tokens, of the same size as before.
        """
        self._check_x(x)
        if state is not None:
            self._check_state(state, x)
        steps = self._run(x, state, "recurrent" if x.size(1) == 1 else "chunked")
        return steps["out"], None, steps["state"]

    def steps(self, x: Tensor, state: RecurrentState | None = None) -> dict[str, Tensor]:
        """The forward pass token by token (the recurrent form), keeping what a figure shows.

        Takes the arguments of :meth:`decode`; its ``out`` equals ``forward``'s (and ``decode``'s).

        Returns:
            A dict, in the order of computation: ``q``, ``k`` ``(B, h, n, d_k)`` (after the convolution,
            normalised, ``q`` scaled) and ``v`` ``(B, h_v, n, d_v)``; ``beta`` ``(B, h_v, n)`` (without
            ``rule="linear"``); ``alpha``, the decay ``(B, h_v, n)`` (``rule="gated_delta"`` only);
            ``heads`` ``(B, h_v, n, d_v)``, the rule's outputs ``S_t q_t``; ``state_norm`` ``(B, h_v, n)``,
            ``||S_t||`` after each token; ``gated`` ``(B, n, h_v d_v)``; ``out`` ``(B, n, d_model)``; and
            ``state``, the :class:`RecurrentState` after the last token.
        """
        self._check_x(x)
        if state is not None:
            self._check_state(state, x)
        return self._run(x, state, "recurrent", norms=True)

    def _run(self, x: Tensor, state: RecurrentState | None, form: str, *, norms: bool = False) -> dict:
        """The pass shared by ``forward``, ``decode`` and ``steps``; ``form`` picks the rule's form."""
        B, n, _ = x.shape
        h, h_v, d_k, d_v = self.h, self.n_v_heads, self.d_k, self.d_v
        steps: dict = {}
        qkv = torch.cat([self.W_q(x), self.W_k(x), self.W_v(x)], dim=-1)  # (B, n, C_conv)
        past = qkv.new_zeros(B, self.kernel - 1, qkv.size(-1)) if state is None else state.conv
        window = torch.cat([past, qkv], dim=1)  # (B, kernel - 1 + n, C_conv)
        w = self.conv.weight[:, 0]  # (C_conv, kernel): a filter per channel, the last tap on token t
        mixed = window[:, :n] * w[:, 0]  # (B, n, C_conv): token t - kernel + 1 ...
        for i in range(1, self.kernel):  # ... up to token t itself: what F.conv1d(groups=C_conv) computes
            mixed = mixed.addcmul_(window[:, i : i + n], w[:, i])  # (B, n, C_conv)
        mixed = ACTIVATIONS[self.activation](mixed)  # (B, n, C_conv)
        q, k, v = mixed.split([h * d_k, h * d_k, h_v * d_v], dim=-1)
        q = _l2_normalise(q.view(B, n, h, d_k)).transpose(1, 2) * d_k**-0.5  # (B, h, n, d_k)
        k = _l2_normalise(k.view(B, n, h, d_k)).transpose(1, 2)  # (B, h, n, d_k)
        v = v.reshape(B, n, h_v, d_v).transpose(1, 2)  # (B, h_v, n, d_v)
        steps.update(q=q, k=k, v=v)
        rule = {}
        if self.W_beta is not None:
            rule["beta"] = steps["beta"] = torch.sigmoid(self.W_beta(x)).mT  # (B, h_v, n)
        if self.W_dt is not None:  # log alpha_t = -A dt_t: a step dt_t of a decay at rate A
            dt = F.softplus(self.W_dt(x) + self.dt_bias)  # (B, n, h_v)
            rule["log_alpha"] = (-self.A_log.exp() * dt).mT  # (B, h_v, n)
            steps["alpha"] = rule["log_alpha"].exp()  # (B, h_v, n)
        S = None if state is None else state.S  # (B, h_v, d_v, d_k)
        # Value head j reads query and key head j // (h_v / h): the forms take the key heads as they are.
        if form == "recurrent":
            heads, S, state_norm = recurrent(q, k, v, state=S, norms=norms, **rule)  # (B, h_v, n, d_v)
        else:
            heads, S = chunked(q, k, v, state=S, chunk=self.chunk, **rule)  # (B, h_v, n, d_v)
        steps["heads"] = heads
        if norms:
            steps["state_norm"] = state_norm  # (B, h_v, n)
        gate = F.silu(self.W_gate(x)).view(B, n, h_v, d_v)  # (B, n, h_v, d_v)
        gated = (self.norm(heads.transpose(1, 2)) * gate).reshape(B, n, h_v * d_v)  # (B, n, h_v d_v)
        conv = window[:, window.size(1) - (self.kernel - 1) :].clone()  # (B, kernel - 1, C_conv), alone
        steps.update(gated=gated, out=self.W_o(gated), state=RecurrentState(S, conv))
        return steps

    def _check_x(self, x: object) -> None:
        check_float_tensor("x", x)
        if x.dim() != 3 or x.size(-1) != self.d_model or x.size(1) == 0:
            raise ValueError(
                f"x must have shape (B, n, d_model={self.d_model}) with n >= 1, got {tuple(x.shape)}"
            )
        weight = self.W_q.weight
        if x.dtype != weight.dtype or x.device != weight.device:
            raise TypeError(
                f"x has dtype {x.dtype} on {x.device} but the module's parameters have dtype {weight.dtype} "
                f"on {weight.device}; use module.to(x) or convert the input"
            )

    def _check_mask(self, mask: object, x: Tensor) -> None:
        """Accept only a causal mask: the one mask a causal layer can apply, and already applies."""
        B, n, _ = x.shape
        check_mask(mask, (B, self.n_v_heads, n, n), "(B, h_v, n, n)")
        if not bool((mask == causal_mask(n, device=mask.device)).all()):
            raise ValueError(
                f"mask must be None or a causal mask, mha.causal_mask({n}): a linear-attention layer is "
                "causal by construction and can apply no other mask (padding, window, bidirectional); got a "
                f"mask of shape {tuple(mask.shape)} that differs from it"
            )

    def _check_state(self, state: object, x: Tensor) -> None:
        if not isinstance(state, RecurrentState):
            raise TypeError(
                f"state must be the RecurrentState that decode returned, or None, got {type(state).__name__}"
            )
        B, channels = x.size(0), self.conv.weight.size(0)
        for name, t, shape, legend in (
            ("state.S", state.S, (B, self.n_v_heads, self.d_v, self.d_k), "(B, h_v, d_v, d_k)"),
            ("state.conv", state.conv, (B, self.kernel - 1, channels), "(B, kernel - 1, C_conv)"),
        ):
            if tuple(t.shape) != shape:
                raise ValueError(
                    f"{name} must have shape {legend} = {shape} for this module and x, got {tuple(t.shape)}"
                )
        check_same_dtype_device(x=x, state_S=state.S, state_conv=state.conv)


def _l2_normalise(x: Tensor) -> Tensor:
    """Each vector (last axis) over its length: ``x / sqrt(|x|^2 + eps)``."""
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + L2_EPS)
