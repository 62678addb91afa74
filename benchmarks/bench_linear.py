"""Gated DeltaNet on the CPU: our layer against transformers', and a state against a KV cache when decoding.

Usage:
    python -m benchmarks.bench_linear [--batch 2] [--n 1024] [--d-model 1024] [--heads 8] [--v-heads 16]
        [--head-dim 128] [--kernel 4] [--chunk 64] [--contexts 1024 4096 16384 65536]
        [--repeats 9] [--inner 2]

1. **A whole sequence.** A Qwen3-Next-like linear-attention layer (B 2, n 1,024, d_model 1,024, 8 key heads
   and 16 value heads of width 128, convolution 4, chunks of 64): transformers' ``Qwen3NextGatedDeltaNet``
   with random weights, on its pure-PyTorch path (no ``fla``, no ``causal_conv1d``: its chunked delta rule
   and ``F.conv1d``), against ours converted from it (``mha.pretrained.from_transformers``, the same weights;
   :func:`mha.linear.chunked`), in float32 under ``torch.inference_mode``, on the same input. The two are
   checked equal first, then timed interleaved (``benchmarks/_timing.py``), each figure a median.
2. **One more token.** Decoding one token after a context of ``n`` tokens (B 1): our Gated DeltaNet, which
   holds a :class:`mha.RecurrentState`, against a softmax layer of the same width, ``mha.MultiHeadAttention(
   d_model, heads, head_dim)`` (8 heads of 128: the key heads of the linear layer), which holds a
   :class:`mha.KVCache` of the ``n`` tokens. What a context leaves depends on its length only through the
   cache's size, so the state and the cache are filled with random numbers of that size rather than by a
   prefill of 64K tokens. Memory is what each holds for the context (``nbytes``): the state's is constant,
   the cache's grows with ``n``; so does the time per token.

The last line is machine-readable: ``ratio_linear=<ours / theirs for 1., two decimals> state_bytes=<the
state at the longest context> cache_bytes=<the cache at the longest context>``, the bytes as plain integers.
"""

from __future__ import annotations

import argparse

import torch
import transformers
from transformers.models.qwen3_next import modeling_qwen3_next

import mha
from benchmarks._timing import interleaved_medians
from mha.pretrained import from_transformers


def whole_sequence(args: argparse.Namespace) -> float:
    """Time ours against transformers' layer on one sequence; return the ratio ours / theirs."""
    config = transformers.Qwen3NextConfig(
        hidden_size=args.d_model,
        linear_num_key_heads=args.heads,
        linear_num_value_heads=args.v_heads,
        linear_key_head_dim=args.head_dim,
        linear_value_head_dim=args.head_dim,
        linear_conv_kernel_dim=args.kernel,
        num_hidden_layers=1,
        layer_types=["linear_attention"],
    )
    torch.manual_seed(0)
    theirs = modeling_qwen3_next.Qwen3NextGatedDeltaNet(config, layer_idx=0).eval()  # PyTorch's init
    ours = from_transformers(theirs, config)
    ours.chunk = args.chunk  # transformers' chunk is 64
    x = torch.randn(args.batch, args.n, args.d_model)  # (B, n, d_model)
    with torch.inference_mode():
        run_ours, run_theirs = (lambda: ours(x)[0]), (lambda: theirs(x))
        torch.testing.assert_close(
            run_ours(), run_theirs(), atol=1e-4, rtol=1e-4
        )  # same answer before timing
        print(
            f"1. a sequence: B={args.batch} n={args.n} d_model={args.d_model} h={args.heads} "
            f"h_v={args.v_heads} d_k=d_v={args.head_dim} kernel={args.kernel} chunk={args.chunk} "
            f"threads={torch.get_num_threads()} repeats={args.repeats}x{args.inner}"
        )
        medians = interleaved_medians(
            {"theirs": run_theirs, "ours": run_ours}, repeats=args.repeats, inner=args.inner
        )
    ratio = medians["ours"] / medians["theirs"]
    print(f"ours / theirs = {ratio:.2f}")
    return ratio


def one_more_token(args: argparse.Namespace) -> tuple[int, int]:
    """Time one decoding step after each context; return the state's and the cache's bytes at the last."""
    torch.manual_seed(0)
    linear = mha.GatedDeltaNet(
        args.d_model,
        args.heads,
        n_v_heads=args.v_heads,
        head_dim=args.head_dim,
        kernel=args.kernel,
        chunk=args.chunk,
    ).eval()
    softmax = mha.MultiHeadAttention(args.d_model, args.heads, head_dim=args.head_dim, bias=False).eval()
    h_v, d, channels = args.v_heads, args.head_dim, linear.conv.weight.size(0)
    x = torch.randn(1, 1, args.d_model)  # (B, 1, d_model): the new token
    sizes = {
        name: sum(p.numel() for p in layer.parameters()) for name, layer in (("l", linear), ("s", softmax))
    }
    print(
        f"2. one more token: B=1 d_model={args.d_model}; softmax: h={args.heads} d_k={d}, a KV cache, "
        f"{sizes['s']} parameters; Gated DeltaNet: h={args.heads} h_v={h_v} d_k=d_v={d}, a state, "
        f"{sizes['l']} parameters (read once per token by both)"
    )
    print(f"{'context':>8} {'state bytes':>12} {'cache bytes':>12} {'linear ms':>10} {'softmax ms':>11}")
    with torch.inference_mode():
        for n in args.contexts:
            state = mha.RecurrentState(torch.randn(1, h_v, d, d), torch.randn(1, args.kernel - 1, channels))
            cache = mha.KVCache(torch.randn(1, args.heads, n, d), torch.randn(1, args.heads, n, d))
            steps = {  # bound now, not when called (the loop moves on)
                "linear": lambda state=state: linear.decode(x, state),
                "softmax": lambda cache=cache: softmax.decode(x, cache),
            }
            medians = interleaved_medians(steps, repeats=args.repeats, inner=args.inner)
            print(
                f"{n:>8} {state.nbytes:>12} {cache.nbytes:>12} {medians['linear'] * 1e3:>10.3f} "
                f"{medians['softmax'] * 1e3:>11.3f}"
            )
    return state.nbytes, cache.nbytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--d-model", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=8, help="key heads (and the softmax layer's heads)")
    parser.add_argument("--v-heads", type=int, default=16)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--kernel", type=int, default=4)
    parser.add_argument("--chunk", type=int, default=64)
    parser.add_argument("--contexts", type=int, nargs="+", default=[1024, 4096, 16384, 65536])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--inner", type=int, default=2, help="calls per timing")
    args = parser.parse_args()
    ratio = whole_sequence(args)
    state_bytes, cache_bytes = one_more_token(args)
    print(f"ratio_linear={ratio:.2f} state_bytes={state_bytes} cache_bytes={cache_bytes}")


if __name__ == "__main__":
    main()
