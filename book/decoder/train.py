"""Train the decoder of "Heads that work together" (:mod:`book.decoder.model`); write its weights and log.

Usage::

    python -m book.decoder.train [--out DIR]

(``make decoder``). It writes ``decoder_weights.safetensors`` (the state dict by name, float16) and
``decoder_log.json`` (the config, the corpus, the timing and the curves the chapter plots) into ``DIR``, by
default the package's ``book/chapters/data``. The same Python (the corpus is its documentation) and the same
PyTorch build give the same files.

**The corpus** is the English documentation that every CPython carries in its standard library: the topics
of ``help()``, ``pydoc_data.topics`` (about 465,000 characters in Python 3.11), part of Python's
documentation, which is distributed under the PSF License Agreement (Python Software Foundation License
Version 2), like the rest of CPython. Nothing is downloaded and nothing is kept in the repository; its
SHA-256 and the Python version are logged. The last :data:`HELD_OUT` of it is held out for the curves.

**The rows.** Each training batch holds ``batch_size`` rows of ``context + 1`` characters. A repeated row is
a string of ordinary characters, drawn uniformly with replacement, of a random length
(:attr:`TrainConfig.repeat_lengths`), written again and again to the end of the row; a text row is a window
of the corpus at a random place. The first :attr:`TrainConfig.repeat_first` steps (400 of 3,000) see
repeated rows only; after them a share :attr:`TrainConfig.repeat_share` (a quarter) of every batch is
repeated rows and the rest is text. Why: in a trial with a quarter of repeated rows from the first step
(``TrainConfig(repeat_first=0, steps=2000)``), this decoder had formed no induction heads after 2,000 steps
(second-copy accuracy 0.03). Copying pays only once a previous-token head and an induction head work
together; rows that can be predicted only by copying make the two form within a few hundred steps (the phase
change of the log), and the text that follows keeps them.

**The order** is fixed by the seed: batch ``t`` is drawn from a generator seeded with ``(seed, t)``, and the
initial weights from ``seed``. Training runs on :attr:`TrainConfig.threads` threads.

Shape legend:
    B        batch size (rows)
    n        context, tokens per row; a row has n + 1 characters (inputs and next-token targets)
    V        vocabulary size
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from book.compute.provenance import machine
from book.decoder import induction
from book.decoder.model import (
    DECODER,
    LOG_FILE,
    ORDINARY,
    SHIPPED_DTYPE,
    VOCABULARY,
    WEIGHTS_FILE,
    Decoder,
    DecoderConfig,
    build_decoder,
    encode,
)

CORPUS = "pydoc_data.topics"  # the module whose text the decoder learns
CORPUS_LICENSE = "PSF License Agreement (Python Software Foundation License Version 2), as all of CPython"
HELD_OUT = 0.05  # the last 5 % of the corpus: the held-out text of the curves
ICL_EARLY = (16, 48)  # positions [16, 48) of a row: "early" for the in-context-learning score
ICL_LATE = (96, 128)  # positions [96, 128): "late"
EVAL_ROWS = 64  # held-out text rows per evaluation
EVAL_SEQUENCES = 64  # repeated random sequences per evaluation
EVAL_SEED = 7  # their seed (the chapter's and the tests' sequences use induction.SEED)


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a run besides the corpus; the same config gives the same weights."""

    seed: int = 0  # initial weights and the order of the batches
    steps: int = 3000  # optimiser steps, one fresh batch each
    batch_size: int = 32  # rows per step
    lr: float = 3e-3  # peak AdamW learning rate: linear warm-up, then cosine decay to lr / 10
    warmup: int = 100  # warm-up steps
    weight_decay: float = 0.01  # AdamW's decoupled weight decay
    repeat_share: float = 0.25  # share of each batch's rows made of a repeated random string
    repeat_first: int = 400  # the first steps' rows are all repeated random strings
    repeat_lengths: tuple[int, int] = (4, 64)  # shortest and longest random string of those rows
    eval_every: int = 25  # steps between two points of the curves
    threads: int = 1  # torch threads (the result depends on the count)


def corpus_text() -> str:
    """The documentation topics of ``help()``, in the order of their names, separated by blank lines."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[name] for name in sorted(topics))


def corpus_ids(text: str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The corpus as token ids, split into ``(train, held_out)`` 1-D tensors (the held-out part last)."""
    text = corpus_text() if text is None else text
    ids = torch.tensor(encode(text, context=len(text))["ids"])  # (N,)
    cut = round(len(ids) * (1 - HELD_OUT))
    return ids[:cut], ids[cut:]


_ORDINARY_IDS = torch.tensor([VOCABULARY.index(c) for c in ORDINARY])  # (94,)


def repeated_rows(
    count: int, width: int, lengths: tuple[int, int], generator: torch.Generator
) -> torch.Tensor:
    """``count`` rows of ``width`` ids, each a random string of ordinary characters repeated to fill it."""
    rows = torch.empty(count, width, dtype=torch.long)
    for r in range(count):
        m = int(torch.randint(lengths[0], lengths[1] + 1, (), generator=generator))
        string = _ORDINARY_IDS[torch.randint(len(ORDINARY), (m,), generator=generator)]  # (m,)
        rows[r] = string.repeat(math.ceil(width / m))[:width]
    return rows


def text_rows(ids: torch.Tensor, count: int, width: int, generator: torch.Generator) -> torch.Tensor:
    """``count`` windows of ``width`` consecutive ids of ``ids``, at random places."""
    starts = torch.randint(len(ids) - width + 1, (count,), generator=generator)  # (count,)
    return ids[starts[:, None] + torch.arange(width)]  # (count, width)


def batch(config: TrainConfig, step: int, train_ids: torch.Tensor, context: int) -> torch.Tensor:
    """Batch ``step`` of a run: ``(B, n + 1)`` ids, the repeated rows first; the same arguments, the same."""
    generator = torch.Generator().manual_seed(config.seed * 1_000_003 + step)
    share = 1.0 if step < config.repeat_first else config.repeat_share
    repeated = round(config.batch_size * share)
    rows = [repeated_rows(repeated, context + 1, config.repeat_lengths, generator)]
    rows.append(text_rows(train_ids, config.batch_size - repeated, context + 1, generator))
    return torch.cat(rows)  # (B, n + 1)


def lr_at(config: TrainConfig, step: int) -> float:
    """The learning rate of ``step``: linear warm-up to ``lr``, then a cosine down to ``lr / 10``."""
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    progress = (step - config.warmup) / max(1, config.steps - config.warmup)
    return config.lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress)))


@torch.no_grad()
def evaluate(model: Decoder, held_out: torch.Tensor, sequences: tuple[torch.Tensor, torch.Tensor]) -> dict:
    """One point of the curves: held-out loss, in-context-learning score, copy accuracy, head scores."""
    was_training = model.training
    model.eval()
    context = model.config.context
    rows = text_rows(held_out, EVAL_ROWS, context + 1, torch.Generator().manual_seed(EVAL_SEED))
    logits, _ = model(rows[:, :-1])  # (B, n, V)
    loss = F.cross_entropy(logits.transpose(1, 2), rows[:, 1:], reduction="none").mean(0)  # (n,)
    copies = induction.copy_accuracy(model, *sequences)
    scores = induction.head_scores(model, *sequences)
    model.train(was_training)
    return {
        "loss": loss.mean().item(),
        "icl": (loss[slice(*ICL_LATE)].mean() - loss[slice(*ICL_EARLY)].mean()).item(),
        "first": copies["first"],
        "second": copies["second"],
        "first_loss": copies["first_loss"],
        "second_loss": copies["second_loss"],
        "induction": scores["induction"].tolist(),
        "previous": scores["previous"].tolist(),
    }


def train(
    config: TrainConfig, model_config: DecoderConfig = DECODER, *, text: str | None = None
) -> tuple[Decoder, dict]:
    """Train a decoder; deterministic for the same arguments, corpus, thread count and PyTorch build.

    Args:
        config: the run.
        model_config: the decoder's shape.
        text: the corpus (default :func:`corpus_text`).

    Returns:
        ``(model, curves)``: the trained float32 model in eval mode and the curves, a dict of lists with keys
        ``step``, ``lr``, ``train_loss`` (mean over the steps since the previous point), and those of
        :func:`evaluate`, measured at step 0 and every ``eval_every`` steps.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        train_ids, held_out = corpus_ids(text)
        sequences = induction.repeated_sequences(EVAL_SEQUENCES, seed=EVAL_SEED)
        with torch.random.fork_rng():
            torch.manual_seed(config.seed)
            model = Decoder(model_config)
        optimiser = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        curves: dict[str, list] = {"step": [], "lr": [], "train_loss": []}
        recent: list[float] = []
        for step in range(config.steps + 1):
            if step % config.eval_every == 0 or step == config.steps:
                point = evaluate(model, held_out, sequences)
                curves["step"].append(step)
                curves["lr"].append(lr_at(config, min(step, config.steps - 1)))
                curves["train_loss"].append(sum(recent) / len(recent) if recent else None)
                for key, value in point.items():
                    curves.setdefault(key, []).append(value)
                recent = []
            if step == config.steps:
                break
            model.train()
            rows = batch(config, step, train_ids, model_config.context)  # (B, n + 1)
            logits, _ = model(rows[:, :-1])  # (B, n, V)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), rows[:, 1:].reshape(-1))
            for group in optimiser.param_groups:
                group["lr"] = lr_at(config, step)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            recent.append(loss.item())
    finally:
        torch.set_num_threads(threads)
    return model.eval(), curves


def regenerate(out_dir: str | Path, config: TrainConfig = TrainConfig()) -> dict:
    """Train with ``config`` and write :data:`WEIGHTS_FILE` and :data:`LOG_FILE` into ``out_dir``.

    The final numbers of the log are measured on the shipped float16 weights (loaded back in float32),
    which is what :func:`book.decoder.model.predict` and the page compute with.

    Returns:
        The log that was written.
    """
    text = corpus_text()
    wall, cpu = time.perf_counter(), time.process_time()
    model, curves = train(config, text=text)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    state = {name: t.detach().to(SHIPPED_DTYPE).contiguous() for name, t in model.state_dict().items()}
    shipped = build_decoder(state)
    train_ids, held_out = corpus_ids(text)
    final = evaluate(shipped, held_out, induction.repeated_sequences(EVAL_SEQUENCES, seed=EVAL_SEED))
    log = {
        "command": "python -m book.decoder.train",
        "model": dataclasses.asdict(DECODER),
        "parameters": sum(t.numel() for t in state.values()),
        "weights_dtype": str(SHIPPED_DTYPE).removeprefix("torch."),
        "train": dataclasses.asdict(config),
        "corpus": {
            "module": CORPUS,
            "license": CORPUS_LICENSE,
            "python": platform.python_version(),
            "characters": len(text),
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "unknown_characters": sum(1 for c in text if c not in VOCABULARY),
            "train_tokens": len(train_ids),
            "held_out_tokens": len(held_out),
        },
        "evaluation": {
            "rows": EVAL_ROWS,
            "sequences": EVAL_SEQUENCES,
            "seed": EVAL_SEED,
            "icl_early": list(ICL_EARLY),
            "icl_late": list(ICL_LATE),
        },
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "torch": torch.__version__,
        "machine": machine(),
        "final": final,
        "curves": curves,
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_file(state, out / WEIGHTS_FILE, metadata={"format": "state dict of book.decoder.model.Decoder"})
    (out / LOG_FILE).write_text(json.dumps(log, indent=1) + "\n")
    return log


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, train, write the files, print the timing."""
    parser = argparse.ArgumentParser(prog="python -m book.decoder.train", description=__doc__.splitlines()[0])
    default_out = Path(__file__).resolve().parent / "data"
    parser.add_argument("--out", default=str(default_out), help=f"output directory (default: {default_out})")
    args = parser.parse_args(argv)
    log = regenerate(args.out)
    final = log["final"]
    print(
        f"trained in {log['wall_seconds']:.0f} s ({log['cpu_seconds']:.0f} s of CPU); held-out loss "
        f"{final['loss']:.2f}, copy accuracy {final['first']:.2f} -> {final['second']:.2f}; wrote {args.out}",
        file=sys.stdout,
    )


if __name__ == "__main__":
    main()
