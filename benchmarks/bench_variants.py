"""Speed of today's layers on mha.MultiHeadAttention against transformers' own attention layers, on the CPU.

Usage:
    python -m benchmarks.bench_variants [--batch 4] [--n 512] [--d-model 1024] [--heads 16] [--kv-heads 4]
        [--head-dim 64] [--repeats 15] [--inner 3]

Each case builds a transformers attention layer with its SDPA implementation (every case here has one; the
output names the implementation) and ours from it (``mha.pretrained.from_transformers``, the same weights),
in eval mode under ``torch.inference_mode``, and times both on the same input with the same causal mask
(``mha.causal_mask(n)``; transformers takes it as a ``(1, 1, n, n)`` boolean mask):

- ``theirs``: transformers' module, with its rotary tables computed by the model's rotary embedding in the
  timed call (our layer computes its tables in every call too);
- ``ours``:   ``layer(x, mask=causal_mask(n), need_weights=False)``, our fused path.

The cases, at the default sizes (B 4, n 512, d_model 1024):

- ``llama``: a Llama-like layer (16 heads, 4 key/value heads, head_dim 64, rotary);
- ``deepseek``: a DeepSeek-like latent-attention layer (16 heads; q rank 384, kv rank 128, no-position width
  64, rotary width 32, value width 64; DeepSeek-V3's interleaved rotary pairs);
- ``qwen3_next``: a Qwen3-Next-like gated, partially rotary layer (half the heads and key/value heads at
  twice the head width: 8 heads, 2 key/value heads, head_dim 128; a quarter of each head turns);
- ``dsa``: ``deepseek`` with DeepSeek Sparse Attention (DeepSeek-V3.2's layer: a lightning indexer of 4
  heads of width 64, each query attending to its top 128 keys).
Candidates run interleaved within each repeat and each figure is a median over repeats
(``benchmarks/_timing.py``). The last line is machine-readable:
``ratio_variants=<x.xx>``, the worst ratio ours / theirs over the cases.

A case is one entry of :data:`CASES`: a name, a function from the parsed arguments to a :class:`Pair` (the
two calls to time, and what a check needs), and the check run before timing: the same output, or, for
sparse attention, the same output wherever the two top-k selections agree and a tie wherever they differ
(:func:`same_output_but_ties`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import torch
import transformers
from transformers.models.deepseek_v3 import modeling_deepseek_v3
from transformers.models.deepseek_v32 import modeling_deepseek_v32
from transformers.models.llama import modeling_llama
from transformers.models.qwen3_next import modeling_qwen3_next

import mha
from benchmarks._timing import interleaved_medians
from mha.pretrained import from_transformers

Run = Callable[[], torch.Tensor]


@dataclass(frozen=True)
class Pair:
    """Their layer and ours on one input: the two timed calls, and what a check needs."""

    ours: Run  # our fused path
    theirs: Run  # their layer, its rotary tables made in the call
    implementation: str  # transformers' attention implementation: "sdpa" or "eager"
    layers: tuple[torch.nn.Module, torch.nn.Module]  # (ours, theirs)
    inputs: tuple[torch.Tensor, torch.Tensor, tuple]  # x (B, n, d_model), the mask (n, n), their (cos, sin)


def same_output(pair: Pair) -> None:
    """The check before timing: both layers give the same output."""
    torch.testing.assert_close(pair.ours(), pair.theirs(), atol=1e-4, rtol=1e-4)


def same_output_but_ties(pair: Pair) -> None:
    """The check for sparse attention. Its indexer sums ReLUs, so with few indexer heads many keys score
    exactly 0, and which of them fill a query's last top-k places is arbitrary (``topk`` here, a stable sort
    in mha). So: the outputs agree on every query whose selection agrees, and where the selections differ,
    every key in one and not the other scores exactly what the query's k-th best key scores (a tie)."""
    ours, theirs = pair.layers
    x, mask, position_embeddings = pair.inputs
    steps = {}  # our layer's intermediates, from its forward
    ours(x, mask, record=steps)
    q_resid = theirs.q_a_layernorm(theirs.q_a_proj(x))  # the query latent their indexer reads
    best = theirs.indexer(x, q_resid, position_embeddings, mask[None], None).long()  # (B, n, top_k)
    chosen = torch.zeros_like(steps["selected"]).scatter_(-1, best, True) & mask  # (B, n, n)
    differ = chosen != steps["selected"]  # (B, n, n)
    k = min(ours.top_k, x.size(1))
    kth = steps["index_scores"].sort(dim=-1, descending=True).values[..., k - 1 : k]  # (B, n, 1): k-th best
    ties = kth.expand_as(differ)[differ]  # what the k-th best key of each differing query scores
    torch.testing.assert_close(steps["index_scores"][differ], ties, atol=1e-6, rtol=0)
    agree = ~differ.any(-1)  # (B, n)
    torch.testing.assert_close(pair.ours()[agree], pair.theirs()[agree], atol=1e-4, rtol=1e-4)


@dataclass(frozen=True)
class Case:
    name: str  # printed in the results, e.g. "llama"
    build: Callable[[argparse.Namespace], Pair]  # arguments -> the pair to time
    check: Callable[[Pair], None] = same_output  # run once before timing


def _pair(args: argparse.Namespace, config: object, attention: type, rotary_class: type) -> Pair:
    """Their attention layer with random weights, ours converted from it, and one input and causal mask."""
    torch.manual_seed(0)
    theirs = attention(config, layer_idx=0).eval()
    rotary = rotary_class(config)  # the model-level rotary embedding, run once per forward
    ours = from_transformers(theirs, config)
    x = torch.randn(args.batch, args.n, args.d_model)  # (B, n, d_model)
    mask = mha.causal_mask(args.n)  # (n, n)
    positions = torch.arange(args.n)[None]  # (1, n)

    def run_theirs() -> torch.Tensor:  # their rotary tables are made in the timed call, as ours are
        return theirs(x, position_embeddings=rotary(x, positions), attention_mask=mask[None, None])[0]

    def run_ours() -> torch.Tensor:
        return ours(x, mask=mask, need_weights=False)[0]

    inputs = (x, mask, rotary(x, positions))
    return Pair(run_ours, run_theirs, config._attn_implementation, (ours, theirs), inputs)


def llama(args: argparse.Namespace) -> Pair:
    """A Llama-like layer: grouped-query heads, head_dim apart from d_model / h, rotary positions."""
    config = transformers.LlamaConfig(
        hidden_size=args.d_model,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        head_dim=args.head_dim,
        num_hidden_layers=1,
        rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
        attn_implementation="sdpa",
    )
    return _pair(args, config, modeling_llama.LlamaAttention, modeling_llama.LlamaRotaryEmbedding)


LATENT = {  # the DeepSeek-like sizes: q rank 384, kv rank 128, d_nope 64, d_rope 32, d_v 64
    "q_lora_rank": 384,
    "kv_lora_rank": 128,
    "qk_nope_head_dim": 64,
    "qk_rope_head_dim": 32,
    "v_head_dim": 64,
    "num_hidden_layers": 1,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
    "attn_implementation": "sdpa",
}


def deepseek(args: argparse.Namespace) -> Pair:
    """A DeepSeek-like latent-attention layer."""
    config = transformers.DeepseekV3Config(
        hidden_size=args.d_model, num_attention_heads=args.heads, num_key_value_heads=args.heads, **LATENT
    )
    return _pair(
        args, config, modeling_deepseek_v3.DeepseekV3Attention, modeling_deepseek_v3.DeepseekV3RotaryEmbedding
    )


def qwen3_next(args: argparse.Namespace) -> Pair:
    """A Qwen3-Next-like layer: an output gate, QK-norm, a quarter of each head rotary, grouped queries."""
    config = transformers.Qwen3NextConfig(
        hidden_size=args.d_model,
        num_attention_heads=args.heads // 2,
        num_key_value_heads=args.kv_heads // 2,
        head_dim=args.head_dim * 2,
        num_hidden_layers=1,
        layer_types=["full_attention"],
        rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25},
        attn_implementation="sdpa",
    )
    return _pair(
        args, config, modeling_qwen3_next.Qwen3NextAttention, modeling_qwen3_next.Qwen3NextRotaryEmbedding
    )


def dsa(args: argparse.Namespace) -> Pair:
    """``deepseek`` with DeepSeek Sparse Attention: an indexer of 4 heads of width 64, top-k 128."""
    config = transformers.DeepseekV32Config(
        hidden_size=args.d_model,
        num_attention_heads=args.heads,
        num_key_value_heads=args.heads,
        index_n_heads=4,
        index_head_dim=64,
        index_topk=128,
        **LATENT,
    )
    return _pair(
        args,
        config,
        modeling_deepseek_v32.DeepseekV32Attention,
        modeling_deepseek_v32.DeepseekV32RotaryEmbedding,
    )


CASES = [
    Case("llama", llama),
    Case("deepseek", deepseek),
    Case("qwen3_next", qwen3_next),
    Case("dsa", dsa, check=same_output_but_ties),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--d-model", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--inner", type=int, default=3, help="calls per timing")
    args = parser.parse_args()

    print(
        f"B={args.batch} n={args.n} d_model={args.d_model} h={args.heads} h_kv={args.kv_heads} "
        f"d_k={args.head_dim} threads={torch.get_num_threads()} repeats={args.repeats}x{args.inner}"
    )
    ratios = {}
    with torch.inference_mode():
        for case in CASES:
            pair = case.build(args)
            case.check(pair)  # the same answer before timing
            print(f"{case.name} (theirs: transformers' {pair.implementation} attention):")
            medians = interleaved_medians(
                {"theirs": pair.theirs, "ours": pair.ours}, repeats=args.repeats, inner=args.inner
            )
            ratios[case.name] = medians["ours"] / medians["theirs"]
            print(f"{case.name}: ours / theirs = {ratios[case.name]:.2f}")
    print(f"ratio_variants={max(ratios.values()):.2f}")


if __name__ == "__main__":
    main()
