"""Parts that change the scores and their softmax, beside the 2017 layer's: each is what one family adds.

:class:`mha.MultiHeadAttention` calls ``scaled = scores(q k^T * scale)`` and ``weights = softmax(masked)``;
the 2017 layer's parts are ``nn.Identity()`` and ``nn.Softmax(dim=-1)``. Here are the others:
:class:`SoftCap` (Gemma 2's logit soft-capping) for ``scores``, and :class:`Sinks` (gpt-oss) for ``softmax``.
PyTorch's fused kernel has neither, so a layer with one runs its explicit path even when asked for the fused
one: each says so in ``kernel_lacks``, which :attr:`mha.MultiHeadAttention.why_not_fused` reads.

Shape legend:
    ...  leading dimensions, the head axis last among them: (B, h)
    h    number of heads
    n_q  number of queries
    n_k  number of keys
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from mha._checks import check_positive_int, check_positive_number


class SoftCap(nn.Module):
    """Logit soft-capping, ``c tanh(s / c)`` on the scaled scores, before the mask: every score inside
    ``(-c, c)`` (Gemma 2, Team Gemma 2024, section 2: ``attn_logit_softcapping`` 50).

    Args:
        cap: ``c``, the bound.
    """

    kernel_lacks = "soft-capping"

    def __init__(self, cap: float) -> None:
        super().__init__()
        self.cap = check_positive_number("cap", cap)

    def extra_repr(self) -> str:
        return f"cap={self.cap:g}"

    def forward(self, scores: Tensor) -> Tensor:
        return self.cap * torch.tanh(scores / self.cap)  # (..., n_q, n_k), inside (-cap, cap)


class Sinks(nn.Module):
    """A softmax with a learned sink per head (gpt-oss, OpenAI 2025; Xiao et al. 2024's attention sinks): one
    logit per head joins each row's softmax as an extra key with no value and is then dropped, so a row's
    weights on the keys sum to ``1 - sink`` and a head may attend to nothing. A row with every key masked
    puts all its weight on the sink.

    Args:
        h: the number of heads, one sink logit each.

    Attributes:
        sinks: ``nn.Parameter`` of shape ``(h,)``, zeros at first (transformers' ``sinks``).
    """

    kernel_lacks = "sinks"

    def __init__(self, h: int) -> None:
        super().__init__()
        self.sinks = nn.Parameter(torch.zeros(check_positive_int("h", h)))

    def check(self, *, h: int, **_: int) -> None:
        """Raise ``ValueError`` unless the layer has one head per sink."""
        if self.sinks.numel() != h:
            raise ValueError(
                f"softmax=Sinks({self.sinks.numel()}) needs h={self.sinks.numel()} heads, got h={h}"
            )

    def weights(self, masked: Tensor) -> tuple[Tensor, Tensor]:
        """``(weights, sink)``: each row's weights on its keys ``(..., n_q, n_k)`` and on its sink
        ``(..., n_q)``, from the masked scores ``(..., n_q, n_k)`` (head axis at -3)."""
        sink = self.sinks.to(masked)[:, None, None].expand(*masked.shape[:-1], 1)  # (..., n_q, 1)
        with_sink = torch.softmax(torch.cat([masked, sink], dim=-1), dim=-1)  # (..., n_q, n_k + 1)
        return with_sink[..., :-1], with_sink[..., -1]  # (..., n_q, n_k), (..., n_q)

    def forward(self, masked: Tensor) -> Tensor:
        return self.weights(masked)[0]  # (..., n_q, n_k)
