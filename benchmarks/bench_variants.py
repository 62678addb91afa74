"""Speed of today's layers on mha.MultiHeadAttention against transformers' own attention layers, on the CPU.

Usage:
    python -m benchmarks.bench_variants [--batch 4] [--n 512] [--d-model 1024] [--heads 16] [--kv-heads 4]
        [--head-dim 64] [--repeats 15] [--inner 3]

Each case builds a transformers attention layer with its SDPA implementation and ours from it
(``mha.pretrained.from_transformers``, the same weights), in eval mode under ``torch.inference_mode``, and
times both on the same input with the same causal mask (``mha.causal_mask(n)``; transformers takes it as a
``(1, 1, n, n)`` boolean mask):

- ``theirs``: transformers' module, with its rotary tables computed by the model's rotary embedding in the
  timed call (our layer computes its tables in every call too);
- ``ours``:   ``layer(x, mask=causal_mask(n), need_weights=False)``, our fused path.

The default case is a Llama-like layer (B 4, n 512, d_model 1024, 16 heads, 4 key/value heads, head_dim 64,
rotary); a DeepSeek-like latent-attention layer follows (the same B, n, d_model and heads; q rank 384, kv
rank 128, no-position width 64, rotary width 32, value width 64; DeepSeek-V3's interleaved rotary pairs).
Candidates run interleaved within each repeat and each figure is a median over repeats
(``benchmarks/_timing.py``). The last line is machine-readable:
``ratio_variants=<x.xx>``, the worst ratio ours / theirs over the cases.

A case is one entry of :data:`CASES`: a name and a function from the parsed arguments to ``(ours, theirs)``,
two callables that run the layer and return its output.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import torch
import transformers
from transformers.models.deepseek_v3 import modeling_deepseek_v3
from transformers.models.llama import modeling_llama

import mha
from benchmarks._timing import interleaved_medians
from mha.pretrained import from_transformers

Run = Callable[[], torch.Tensor]


@dataclass(frozen=True)
class Case:
    name: str  # printed in the results, e.g. "llama"
    build: Callable[[argparse.Namespace], tuple[Run, Run]]  # arguments -> (ours, theirs)


def _pair(args: argparse.Namespace, config: object, attention: type, rotary_class: type) -> tuple[Run, Run]:
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

    return (lambda: ours(x, mask=mask, need_weights=False)[0]), run_theirs


def llama(args: argparse.Namespace) -> tuple[Run, Run]:
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


def deepseek(args: argparse.Namespace) -> tuple[Run, Run]:
    """A DeepSeek-like latent-attention layer (q rank 384, kv rank 128, d_nope 64, d_rope 32, d_v 64)."""
    config = transformers.DeepseekV3Config(
        hidden_size=args.d_model,
        num_attention_heads=args.heads,
        num_key_value_heads=args.heads,
        q_lora_rank=384,
        kv_lora_rank=128,
        qk_nope_head_dim=64,
        qk_rope_head_dim=32,
        v_head_dim=64,
        num_hidden_layers=1,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        attn_implementation="sdpa",
    )
    return _pair(
        args, config, modeling_deepseek_v3.DeepseekV3Attention, modeling_deepseek_v3.DeepseekV3RotaryEmbedding
    )


CASES = [Case("llama", llama), Case("deepseek", deepseek)]


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
            ours, theirs = case.build(args)
            torch.testing.assert_close(ours(), theirs(), atol=1e-4, rtol=1e-4)  # same answer before timing
            print(f"{case.name}:")
            medians = interleaved_medians(
                {"theirs": theirs, "ours": ours}, repeats=args.repeats, inner=args.inner
            )
            ratios[case.name] = medians["ours"] / medians["theirs"]
            print(f"{case.name}: ours / theirs = {ratios[case.name]:.2f}")
    print(f"ratio_variants={max(ratios.values()):.2f}")


if __name__ == "__main__":
    main()
