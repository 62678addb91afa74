"""What the tests of mha.MultiHeadAttention's parts share: one float64 layer per part, and layers that
combine the parts as today's models do (tests/unit/mha/test_multihead.py, test_bands.py, test_positional.py,
test_gates.py, test_scores.py).
"""

import torch
from torch import nn

import mha
from mha.bands import Chunk, Window
from mha.gates import OutputGate
from mha.multihead import KeysAsValues
from mha.positional import Rotary, Temperature
from mha.scores import Sinks, SoftCap

D_MODEL, H, H_KV, D_K = 24, 4, 2, 8  # d_k = 8, not 24 / 4 = 6


def norms(weighted=True):
    """QK-norm: an RMSNorm over each head's query and key."""
    return {name: nn.RMSNorm(D_K, eps=1e-6, elementwise_affine=weighted) for name in ("q_norm", "k_norm")}


def v_norm():
    return {"v_norm": nn.RMSNorm(D_K, eps=1e-6, elementwise_affine=False)}


OPTIONS = {  # one layer per part, and layers that combine them as today's models do (a function: fresh parts)
    "head_dim": dict,
    "rope": lambda: {"positions": Rotary(100.0)},
    "qk_norm": norms,
    "scale": lambda: {"scale": 0.5},
    "softcap": lambda: {"scores": SoftCap(2.0)},
    "window": lambda: {"band": Window(3)},
    "sinks": lambda: {"softmax": Sinks(H)},
    "all": lambda: {
        "positions": Rotary(100.0),
        **norms(),
        "scale": 0.3,
        "scores": SoftCap(5.0),
        "band": Window(4),
        "softmax": Sinks(H),
    },
    "gate": lambda: {"gate": OutputGate(D_MODEL, H * D_K)},
    "partial": lambda: {"positions": Rotary(100.0, fraction=0.25)},
    "proportional": lambda: {"positions": Rotary(100.0, fraction=0.5, style="proportional")},
    "interleaved": lambda: {"positions": Rotary(100.0, style="interleaved")},
    "chunk": lambda: {"positions": Rotary(100.0), "band": Chunk(4)},
    "temperature": lambda: {"positions": Temperature(2.0, 0.5)},
    "v_norm": v_norm,
    "k_eq_v": lambda: {"kind": KeysAsValues},
    "qwen3_next": lambda: {
        "gate": OutputGate(D_MODEL, H * D_K),
        **norms(),
        "positions": Rotary(100.0, fraction=0.25),
    },
    "gemma4_full": lambda: {
        "kind": KeysAsValues,
        **v_norm(),
        **norms(),
        "scale": 1.0,
        "positions": Rotary(100.0, fraction=0.5, style="proportional"),
    },
    "gemma4_sliding": lambda: {
        **v_norm(),
        **norms(),
        "scale": 1.0,
        "positions": Rotary(100.0),
        "band": Window(3),
    },
    "llama4_chunked": lambda: {
        "positions": Rotary(100.0, style="interleaved"),
        **norms(weighted=False),
        "band": Chunk(4),
    },
    "llama4_nope": lambda: {"positions": Temperature(2.0, 0.5)},
    "keys_as_values_in_chunks": lambda: {"kind": KeysAsValues, "band": Chunk(3), "positions": Rotary(10.0)},
}


def layer(kind=mha.MultiHeadAttention, **parts):
    """A float64 layer in eval mode, every weight random (norm weights, sinks and the gate included)."""
    torch.manual_seed(0)
    attn = kind(D_MODEL, H, n_kv_heads=H_KV, head_dim=D_K, **parts).double().eval()
    with torch.no_grad():
        for p in attn.parameters():
            p.normal_(0.0, 0.3)
    return attn


def named(name):
    return layer(**OPTIONS[name]())


def inputs(B=2, n=9):
    return torch.randn(B, n, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(1))


def recorded(attn, x, **kwargs):
    seen = {}
    attn(x, record=seen, **kwargs)
    return seen
