"""mha.compute.tensor_parallel: a layer's heads split over ranks add up to the whole layer."""

from __future__ import annotations

import pytest
import torch

import mha
from mha.bands import Window
from mha.compute.tensor_parallel import check_divisible, shard_heads, tensor_parallel_forward
from mha.gates import OutputGate
from mha.positional import Rotary
from mha.scores import Sinks, SoftCap


def _layer(**options):
    torch.manual_seed(0)
    attn = mha.MultiHeadAttention(32, 4, n_kv_heads=2, **options).double()  # float64: exact comparisons
    with torch.no_grad():
        for p in attn.parameters():
            p.normal_(0, 0.3)
    return attn


def _qk_norm():
    return {name: torch.nn.RMSNorm(8, eps=1e-6) for name in ("q_norm", "k_norm")}  # d_k = 32 / 4


@pytest.mark.parametrize(
    "options",
    [
        dict,
        lambda: {"positions": Rotary(10000.0), **_qk_norm(), "softmax": Sinks(4)},
        lambda: {"bias": False, "band": Window(3), "scores": SoftCap(5.0)},
        lambda: {"gate": OutputGate(32, 32), "positions": Rotary(10000.0, fraction=0.5)},
    ],
    ids=["plain", "rope-qknorm-sinks", "window-softcap", "gate-partial"],
)
@pytest.mark.parametrize("world_size", [1, 2])
def test_shards_sum_to_the_whole_layer(options, world_size):
    attn = _layer(**options())
    x = torch.randn(2, 6, 32, dtype=torch.float64)  # (B, n, d_model)
    mask = mha.causal_mask(6)
    whole, _ = attn(x, mask=mask)
    with torch.no_grad():
        parts = sum(shard_heads(attn, r, world_size)(x, mask=mask)[0] for r in range(world_size))
    torch.testing.assert_close(parts, whole, atol=1e-12, rtol=0)
    assert shard_heads(attn, 0, world_size).h == 4 // world_size


def test_bad_world_sizes_and_ranks_name_themselves():
    attn = _layer()  # h = 4, h_kv = 2
    with pytest.raises(ValueError, match=r"world_size=3 must divide h=4"):
        check_divisible(attn, 3)
    with pytest.raises(ValueError, match=r"world_size=4 must divide h_kv \(n_kv_heads\)=2"):
        tensor_parallel_forward(attn, torch.randn(1, 3, 32, dtype=torch.float64), world_size=4)
    with pytest.raises(ValueError, match="rank"):
        shard_heads(attn, 2, 2)
    with pytest.raises(TypeError, match="attn"):
        check_divisible(torch.nn.Linear(2, 2), 2)
    with pytest.raises(ValueError, match="x must be"):
        tensor_parallel_forward(attn, torch.randn(1, 3, 16))
