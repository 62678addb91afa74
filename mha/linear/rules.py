"""One causal layer, three ways to compute it: token by token, by chunks, and (linear attention) all at once.

**From softmax to a state.** Softmax attention gives query ``t`` the output ``sum_j softmax_j(q_t . k_j) v_j``
over the keys ``j <= t``. Drop the softmax and the sum regroups around the query:
``o_t = sum_{j<=t} (q_t . k_j) v_j = (sum_{j<=t} v_j k_j^T) q_t = S_t q_t``, with a state
``S_t = S_{t-1} + v_t k_t^T`` of shape ``(d_v, d_k)``, whatever ``t``: linear attention (Katharopoulos et al.
2020). Their version puts a feature map on ``q`` and ``k`` and divides by ``q_t . sum_j k_j``; the layers of
2024-2026 normalise ``q`` and ``k`` instead and divide by nothing, as here.

**The delta rule** (Schlag et al. 2021; Yang et al. 2024) reads what the state holds for the key, ``S k_t``,
and writes only the difference, with a strength ``beta_t`` in (0, 1):
``S_t = S_{t-1} + beta_t (v_t - S_{t-1} k_t) k_t^T``. With a unit key and ``beta_t = 1`` the value stored
under ``k_t`` is replaced, not added to.

**The gated delta rule** (Yang, Kautz and Hatamizadeh 2024, Gated DeltaNet) decays the state first by
``alpha_t`` in (0, 1): ``S_t = alpha_t S_{t-1} + beta_t (v_t - alpha_t S_{t-1} k_t) k_t^T``. The decay is
passed as its logarithm, ``log_alpha`` (<= 0), which is what the layer computes and what sums over a chunk.

Every function takes ``beta=None`` (no delta: linear attention's plain sum) and ``log_alpha=None`` (no
decay), so one call covers the whole path, and the forms agree to round-off (the tests: 1e-10 in float64):

- :func:`recurrent`: the state, one token at a time; what decoding does.
- :func:`chunked`: blocks of ``C`` tokens. Within a block the outputs are a masked ``q k^T`` product, as in
  softmax attention; the state carries the blocks before. The delta rule's updates within a block form a
  unit lower-triangular system, solved once per block (the WY/UT form of Yang et al. 2024). What fast
  kernels compute, and what :meth:`mha.GatedDeltaNet.forward` uses.
- :func:`parallel`: linear attention (with or without decay) as attention without a softmax, a causal mask
  on the ``(n, n)`` scores: the bridge to :func:`mha.scaled_dot_product_attention`.

Queries and keys may have fewer heads than values (Qwen3-Next: 16 and 32): value head ``j`` reads query and
key head ``j // g``, ``g = h / h_k``, each group's ``q k^T`` computed once.

Shape legend:
    B    batch size
    h    number of value heads, each with its own state (and beta and decay)
    h_k  number of query and key heads, dividing h; g = h / h_k value heads read each
    n    number of tokens
    d_k  width of a query and key head
    d_v  width of a value head
    C    chunk length; N = ceil(n / C) chunks
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from mha._checks import check_float_tensor, check_positive_int, check_same_dtype_device
from mha.masks import causal_mask


def recurrent(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    beta: Tensor | None = None,
    log_alpha: Tensor | None = None,
    state: Tensor | None = None,
    norms: bool = False,
) -> tuple[Tensor, Tensor, Tensor | None]:
    """The recurrent form: update the state with each token, then read it with the token's query.

    Args:
        q: queries ``(B, h_k, n, d_k)``.
        k: keys ``(B, h_k, n, d_k)``.
        v: values ``(B, h, n, d_v)``.
        beta: the delta rule's writing strength ``(B, h, n)``; ``None``: linear attention's plain sum.
        log_alpha: the log of the decay ``(B, h, n)``, each <= 0; ``None``: no decay.
        state: the state ``S`` before the first token ``(B, h, d_v, d_k)``; ``None``: zeros.
        norms: also return the Frobenius norm of the state after each token.

    Returns:
        ``(o, S, state_norm)``: outputs ``(B, h, n, d_v)``, the state after the last token
        ``(B, h, d_v, d_k)``, and ``||S_t||`` ``(B, h, n)`` (or ``None`` without ``norms``).
    """
    B, h, n, g = _check_inputs(q, k, v, beta, log_alpha, state)
    h_k, d_k, d_v = h // g, k.size(-1), v.size(-1)
    v = v.reshape(B, h_k, g, n, d_v)  # each key head's group of value heads
    S = q.new_zeros(B, h_k, g, d_v, d_k) if state is None else state.reshape(B, h_k, g, d_v, d_k)
    beta, log_alpha = (None if x is None else x.reshape(B, h_k, g, n, 1, 1) for x in (beta, log_alpha))
    outs, sizes = [], []
    for t in range(n):
        k_t = k[:, :, None, t, :, None]  # (B, h_k, 1, d_k, 1): read by each value head of its group
        v_t = v[:, :, :, t, :, None]  # (B, h_k, g, d_v, 1)
        if log_alpha is not None:  # forget a little of everything
            S = S * log_alpha[:, :, :, t].exp()  # (B, h_k, g, d_v, d_k)
        if beta is not None:  # write only what the state does not already hold for this key
            v_t = beta[:, :, :, t] * (v_t - S @ k_t)  # (B, h_k, g, d_v, 1)
        S = S + v_t @ k_t.mT  # (B, h_k, g, d_v, d_k): outer product v_t k_t^T
        outs.append(S @ q[:, :, None, t, :, None])  # (B, h_k, g, d_v, 1): o_t = S_t q_t
        if norms:
            sizes.append(torch.linalg.matrix_norm(S).view(B, h))  # (B, h)
    o = torch.cat(outs, dim=-1).view(B, h, d_v, n).mT  # (B, h, n, d_v)
    return o, S.view(B, h, d_v, d_k), torch.stack(sizes, dim=-1) if norms else None


def chunked(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    beta: Tensor | None = None,
    log_alpha: Tensor | None = None,
    state: Tensor | None = None,
    chunk: int = 64,
) -> tuple[Tensor, Tensor]:
    """The chunked form: the same outputs and final state as :func:`recurrent`, ``C`` tokens at a time.

    Within a chunk, with ``gamma_t`` the decay since the chunk began (``exp`` of the cumulative
    ``log_alpha``) and ``S_0`` the state before it, the values actually written, ``delta_t`` (``v_t`` itself
    for linear attention; ``beta_t (v_t - alpha_t S_{t-1} k_t)`` for the delta rule), give
    ``o_t = gamma_t S_0 q_t + sum_{j<=t} (gamma_t / gamma_j) (q_t . k_j) delta_j``: a read of the old state
    plus attention without a softmax inside the chunk. For the delta rule the ``delta_t`` depend on each
    other through ``S_{t-1}``; written out they satisfy ``(I + A) Delta = beta V - (beta gamma K) S_0^T``
    with ``A_tj = beta_t (k_t . k_j) gamma_t / gamma_j`` for ``j < t``, a unit lower-triangular system that
    one triangular solve per chunk answers for all its tokens. Only the pass from chunk to chunk is
    sequential: ``N`` steps instead of ``n``.

    Args:
        q, k, v, beta, log_alpha, state: as in :func:`recurrent`.
        chunk: the chunk length ``C``; the last chunk is padded (with keys, values and decays that change
            nothing).

    Returns:
        ``(o, S)``: outputs ``(B, h, n, d_v)`` and the state after the last token ``(B, h, d_v, d_k)``.
    """
    B, h, n, g = _check_inputs(q, k, v, beta, log_alpha, state)
    C = check_positive_int("chunk", chunk)
    h_k, d_k, d_v, pad = h // g, k.size(-1), v.size(-1), -n % C
    N = (n + pad) // C
    # Padding tokens have zero keys and values and no decay: they neither write to the state nor fade it.
    q, k = (F.pad(x, (0, 0, 0, pad)).view(B, h_k, 1, N, C, d_k) for x in (q, k))  # (B, h_k, 1, N, C, d_k)
    v = F.pad(v, (0, 0, 0, pad)).view(B, h_k, g, N, C, d_v)  # (B, h_k, g, N, C, d_v)
    causal = causal_mask(C, device=q.device)  # (C, C), the diagonal included
    decay = None
    if log_alpha is not None:
        G = F.pad(log_alpha, (0, pad)).view(B, h_k, g, N, C).cumsum(-1)  # (B, h_k, g, N, C): log gamma_t
        gaps = (G[..., :, None] - G[..., None, :]).masked_fill(~causal, -torch.inf)  # (B, h_k, g, N, C, C)
        decay = gaps.exp()  # (B, h_k, g, N, C, C): gamma_t / gamma_j for j <= t, else 0
    scores = q @ k.mT  # (B, h_k, 1, N, C, C): q_t . k_j, once per key head
    scores = scores.masked_fill(~causal, 0.0) if decay is None else scores * decay  # (B, h_k, g, N, C, C)
    if beta is not None:
        beta = F.pad(beta, (0, pad)).view(B, h_k, g, N, C, 1)  # (B, h_k, g, N, C, 1)
        # beta_t (k_t . k_j), (B, h_k, g, N, C, C): the solve reads only its strict lower part
        A = (k @ k.mT) * beta
        k_read = k * beta  # (B, h_k, g, N, C, d_k): beta_t k_t
        if decay is not None:
            A, k_read = A * decay, k_read * G[..., None].exp()  # times gamma_t / gamma_j, and gamma_t
        rhs = torch.cat([v * beta, k_read], dim=-1)  # (B, h_k, g, N, C, d_v + d_k): beta V, beta gamma K
        # (I + A)^-1 rhs, one batch axis (PyTorch 2.13 solves a 6-D batch some 20 times slower)
        solved = torch.linalg.solve_triangular(
            A.flatten(0, -3), rhs.flatten(0, -3), upper=False, unitriangular=True
        )
        solved = solved.view(rhs.shape)  # (B, h_k, g, N, C, d_v + d_k)
        u, w = solved.split([d_v, d_k], dim=-1)  # (B, h_k, g, N, C, d_v), (B, h_k, g, N, C, d_k)
    else:
        u, w = v, None  # linear attention writes the values as they are
    q_old, k_new, fade = q, k, None  # without decay, the state is read and written as it is
    if decay is not None:
        q_old = q * G[..., None].exp()  # (B, h_k, g, N, C, d_k): gamma_t q_t reads the old state
        k_new = k * (G[..., -1:] - G)[..., None].exp()  # (B, h_k, g, N, C, d_k): faded to the chunk's end
        fade = G[..., -1, None, None].exp()  # (B, h_k, g, N, 1, 1): gamma of the whole chunk
    M = q.new_zeros(B, h_k, g, d_k, d_v) if state is None else state.reshape(B, h_k, g, d_v, d_k).mT  # S^T
    o = v.new_empty(B, h_k, g, N, C, d_v)
    for c in range(N):  # (B, h_k, g, C, d_v) each: the values written, then the outputs
        delta = u[:, :, :, c] if w is None else u[:, :, :, c] - w[:, :, :, c] @ M
        o[:, :, :, c] = q_old[:, :, :, c] @ M + scores[:, :, :, c] @ delta
        M = M if fade is None else M * fade[:, :, :, c]  # (B, h_k, g, d_k, d_v): the old state, faded
        M = M + k_new[:, :, :, c].mT @ delta  # and what the chunk wrote
    o = o.view(B, h, N * C, d_v)[:, :, :n]  # (B, h, n, d_v)
    return o, M.mT.reshape(B, h, d_v, d_k)  # and S: (B, h, d_v, d_k)


def parallel(q: Tensor, k: Tensor, v: Tensor, *, log_alpha: Tensor | None = None) -> Tensor:
    """Linear attention all at once: attention scores ``q k^T`` under a causal mask, with no softmax.

    ``o = (mask * D * q k^T) v`` with ``mask = mha.causal_mask(n)`` and ``D_tj = alpha_{j+1} ... alpha_t``
    (the decay between key ``j`` and query ``t``; all ones without ``log_alpha``). It costs ``n^2`` like
    softmax attention; :func:`recurrent` and :func:`chunked` give the same outputs from a state. The delta
    rule has no such form: its values written depend on the state (:func:`chunked` with one chunk of all
    ``n`` tokens is the nearest thing).

    Args:
        q, k, v, log_alpha: as in :func:`recurrent`.

    Returns:
        The outputs ``(B, h, n, d_v)``.
    """
    B, h, n, g = _check_inputs(q, k, v, None, log_alpha, None)
    mask = causal_mask(n, device=q.device)  # (n, n): query t sees keys j <= t
    scores = (q @ k.mT)[:, :, None]  # (B, h_k, 1, n, n), once per key head
    if log_alpha is not None:
        G = log_alpha.reshape(B, h // g, g, n).cumsum(-1)  # (B, h_k, g, n)
        scores = scores * (G[..., :, None] - G[..., None, :]).masked_fill(~mask, -torch.inf).exp()  # times D
    o = scores.masked_fill(~mask, 0.0) @ v.reshape(B, h // g, g, n, -1)  # (B, h_k, g, n, d_v)
    return o.reshape(B, h, n, -1)


def _check_inputs(
    q: Tensor, k: Tensor, v: Tensor, beta: Tensor | None, log_alpha: Tensor | None, state: Tensor | None
) -> tuple[int, int, int, int]:
    """Check the shapes of a form's inputs against each other; return ``(B, h, n, g)``."""
    tensors = {"q": q, "k": k, "v": v, "beta": beta, "log_alpha": log_alpha, "state": state}
    tensors = {name: check_float_tensor(name, x) for name, x in tensors.items() if x is not None}
    if q.dim() != 4 or q.size(2) == 0:
        raise ValueError(f"q must have shape (B, h_k, n, d_k) with n >= 1, got {tuple(q.shape)}")
    B, h_k, n, d_k = q.shape
    if v.dim() != 4 or v.shape[::2] != (B, n) or v.size(1) % h_k:
        raise ValueError(
            f"v must have shape (B, h, n, d_v) with B={B}, n={n} and h a multiple of q's h_k={h_k}, "
            f"got {tuple(v.shape)}"
        )
    h, d_v = v.size(1), v.size(3)
    expected = {
        "k": ((B, h_k, n, d_k), "(B, h_k, n, d_k)"),
        "beta": ((B, h, n), "(B, h, n)"),
        "log_alpha": ((B, h, n), "(B, h, n)"),
        "state": ((B, h, d_v, d_k), "(B, h, d_v, d_k)"),
    }
    for name, (shape, legend) in expected.items():
        got = tuple(tensors[name].shape) if name in tensors else shape
        if got != shape:
            raise ValueError(f"{name} must have shape {legend} = {shape} to match q and v, got {got}")
    check_same_dtype_device(**tensors)
    return B, h, n, h // h_k
