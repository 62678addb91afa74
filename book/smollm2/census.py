"""The data behind "A decoder's heads" ("What trained heads do") and the real-model circuit of "Heads that
work together": SmolLM2-135M-Instruct's 270 heads (30 layers of 9 query heads, 3 key/value groups of 3).

Regenerate ``book/smollm2/data/smollm2_heads.json`` (deterministic up to floating-point rounding; a few
minutes on 2 cores, most of them the 360 ablation passes: the file records how long each part took, on which
machine)::

    python -m book.smollm2.census

The corpus is written here: :data:`SENTENCES` (ordinary English, each run alone so that its first token
sits at position 0), :data:`HELD_OUT` (the ablations' text) and random tokens written twice
(:func:`repeated_random`). The chapters read the JSON with :func:`load_results` and load no model.

Shape legend:
    L  number of layers, 30
    h  query heads per layer, 9; g key/value groups, 3 (query head i reads group i // 3)
    n  tokens of one text
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import sys
import time
from importlib import resources
from pathlib import Path

import torch
import torch.nn.functional as F

from book.compute.provenance import machine
from book.smollm2.stored import PROMPTS, STORED_FILE, stored_prompts
from mha.pretrained.smollm2 import MODEL_PACKAGE, SMOLLM2, decode, heads_off, load_smollm2, tokenize

RESULTS_FILE = "smollm2_heads.json"
COMMAND = "python -m book.smollm2.census"
DIGITS = 4  # decimals kept in the JSON file

SENTENCES = (
    "The cat slept on the warm windowsill all afternoon.",
    "My grandmother bakes bread every Sunday morning.",
    "The train to Edinburgh was delayed by twenty minutes.",
    "She opened the letter and began to read it slowly.",
    "Rain fell steadily on the roofs of the old town.",
    "He forgot his umbrella at the cafe near the station.",
    "The children built a sandcastle close to the water.",
    "Our neighbours planted tomatoes in their back garden.",
    "The museum is closed on Mondays and public holidays.",
    "A small boat drifted slowly across the quiet lake.",
    "The teacher asked the students to write a short story.",
    "We watched the sun go down behind the distant hills.",
    "The library lends books, films and music for free.",
    "After dinner they played cards until it was late.",
    "The doctor told him to rest for a few days.",
    "Fresh snow covered the fields on the first day of winter.",
    "The shop on the corner sells newspapers and sweets.",
    "She practised the piano for an hour before school.",
    "The bridge was painted red to match the old mill.",
    "They moved to a bigger flat when the baby was born.",
    "The river floods the meadow almost every spring.",
    "He wrote the address on the back of an envelope.",
    "The orchestra rehearsed the symphony twice that week.",
    "Our flight left early, so we slept at the airport.",
    "The farmer sold apples and honey at the market.",
    "A loud knock at the door woke everyone in the house.",
    "The recipe needs two eggs, flour and a little milk.",
    "She lost her keys and had to call a locksmith.",
    "The dog ran across the park to fetch the ball.",
    "Most of the guests arrived just before the speeches.",
    "The old clock in the hall stopped at midnight.",
    "He repaired the bicycle with a borrowed set of tools.",
    "The exam results will be posted on the school website.",
    "Bright lanterns hung from the trees along the path.",
    "The committee will meet again at the end of the month.",
    "Her brother collects stamps from every country he visits.",
)
"""The census corpus: 36 ordinary sentences, written for the book, each run alone."""

HELD_OUT = (
    "The village had one baker, who rose at four every morning to light the oven. By seven the queue reached "
    "the church, and by nine the shelves were empty. When he fell ill one winter, the whole village learned "
    "to bake, and the bread was worse, but nobody went hungry."
)
"""The ablations' text: the model's next-token loss on it, intact and with heads off."""

RANDOM_SEED = 0
RANDOM_SEQUENCES = 4  # random sequences, each written twice
RANDOM_LENGTH = 40  # tokens in one copy
FIRST_ID = 17  # the 17 control tokens (<|endoftext|>, <|im_start|>, ...) are ids 0..16: never drawn

LOCAL_WINDOW = 3  # local: weight on the token itself and the 3 before it
RULES = (  # (kind, score, threshold), tried in order: a head is the first kind whose score reaches it
    ("induction", "induction", 0.3),
    ("previous", "previous", 0.5),
    ("sink", "sink", 0.5),
    ("local", "local", 0.5),
    ("broad", "entropy", 0.6),
)
"""How a head gets its kind; a head that meets no rule is ``"mixed"``."""
KINDS = (*(kind for kind, _, _ in RULES), "mixed")
LITTLE = 0.01  # an ablation "matters little" if it raises the loss by less than this (nats per token)


# -- pure functions of attention and tokens ----------------------------------------------------------------


def repeated_random(
    sequences: int = RANDOM_SEQUENCES, length: int = RANDOM_LENGTH, seed: int = RANDOM_SEED
) -> list[list[int]]:
    """``sequences`` lists of ``length`` random token ids (control tokens excluded), each written twice."""
    generator = torch.Generator().manual_seed(seed)
    draws = torch.randint(FIRST_ID, SMOLLM2.vocab_size, (sequences, length), generator=generator)
    return [row + row for row in draws.tolist()]


def text_scores(attention: torch.Tensor) -> dict[str, torch.Tensor]:
    """Each head's mean scores over the rows of one text (rows 1.., which have a choice).

    Args:
        attention: ``(L, h, n, n)`` causal weights, rows summing to 1, ``n >= 2``.

    Returns:
        ``(L, h)`` tensors: ``sink`` (weight on position 0), ``previous`` (on position ``i - 1``), ``local``
        (on positions ``i - LOCAL_WINDOW .. i``, position 0 left out) and ``entropy`` (each row's entropy
        over ``log(i + 1)``, the most it can be: 1 is uniform).
    """
    n = attention.size(-1)
    rows = torch.arange(1, n)
    sink = attention[..., 1:, 0]  # (L, h, n-1)
    previous = attention[..., rows, rows - 1]  # (L, h, n-1)
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    window = ((j <= i) & (j >= i - LOCAL_WINDOW) & (j > 0)).to(attention.dtype)  # (n, n)
    local = (attention * window).sum(-1)[..., 1:]  # (L, h, n-1)
    p = attention[..., 1:, :]
    entropy = -(p * p.clamp_min(1e-12).log()).sum(-1) / torch.log(rows + 1.0)  # (L, h, n-1)
    return {
        name: t.mean(-1)
        for name, t in dict(sink=sink, previous=previous, local=local, entropy=entropy).items()
    }


def induction_score(attention: torch.Tensor) -> torch.Tensor:
    """``(L, h)``: mean weight from each second-copy position ``T + k`` (``k = 1 .. T - 2``) to position
    ``k + 1``, the token after the earlier occurrence of its own token, for a text of ``T`` tokens written
    twice (``attention`` ``(L, h, 2T, 2T)``)."""
    length = attention.size(-1) // 2
    k = torch.arange(1, length - 1)
    return attention[..., length + k, k + 1].mean(-1)


def classify(scores: dict[str, torch.Tensor], rules=RULES) -> list[list[str]]:
    """``labels[layer][head]``: the first of ``rules`` whose score reaches its threshold, else ``"mixed"``."""
    shape = scores[rules[0][1]].shape
    labels = [["mixed"] * shape[1] for _ in range(shape[0])]
    for layer in range(shape[0]):
        for head in range(shape[1]):
            for kind, score, threshold in rules:
                if scores[score][layer, head] >= threshold:
                    labels[layer][head] = kind
                    break
    return labels


def jensen_shannon(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Jensen-Shannon divergence in bits between distributions along the last dimension (0 same, 1 apart)."""
    m = (p + q) / 2

    def kl(a, b):
        return (a * (a.clamp_min(1e-12).log2() - b.clamp_min(1e-12).log2())).sum(-1)

    return (kl(p, m) + kl(q, m)) / 2


def group_divergence(attention: torch.Tensor, group_size: int) -> torch.Tensor:
    """``(L, h, h)``: the mean Jensen-Shannon divergence between the rows (1..) of every pair of heads."""
    p = attention[..., 1:, :]  # (L, h, n-1, n)
    return jensen_shannon(p[:, :, None], p[:, None, :]).mean(-1)  # (L, h, h)


def within_and_across(divergence: torch.Tensor, group_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per layer, the mean divergence over pairs of distinct heads in one group, and over pairs in two."""
    h = divergence.size(-1)
    group = torch.arange(h) // group_size
    same = group[:, None] == group[None, :]
    distinct = ~torch.eye(h, dtype=torch.bool)
    within = divergence[:, same & distinct].mean(-1)
    across = divergence[:, ~same].mean(-1)
    return within, across


def next_token_loss(logits: torch.Tensor, ids: list[int]) -> float:
    """Mean cross-entropy (nats) of ``logits`` ``(n, V)`` predicting ``ids[1:]``."""
    return float(F.cross_entropy(logits[:-1], torch.tensor(ids[1:])))


def copy_accuracy(logits: torch.Tensor, ids: list[int]) -> tuple[float, float]:
    """Top-1 accuracy of the next token in the first copy (positions 0..T-2) and the second (T..2T-2)."""
    length = len(ids) // 2
    hit = (logits[:-1].argmax(-1) == torch.tensor(ids[1:])).float()  # (2T-1,)
    return float(hit[: length - 1].mean()), float(hit[length : 2 * length - 1].mean())


def _rounded(values):
    if isinstance(values, torch.Tensor):
        values = values.tolist()
    if isinstance(values, list | tuple):
        return [_rounded(v) for v in values]
    return round(float(values), DIGITS)


def load_results() -> dict:
    """The shipped results of :func:`compute_results` (see :func:`main` to regenerate them)."""
    return json.loads((resources.files("book.smollm2") / "data" / RESULTS_FILE).read_text(encoding="utf-8"))


# -- the model ----------------------------------------------------------------------------------------------


@torch.no_grad()
def _run(model, ids: list[int], off=(), need_weights: bool = True):
    with heads_off(model, off):
        logits, attentions, caches = model(torch.tensor([ids]), need_weights=need_weights)
    attention = torch.stack(attentions)[:, 0] if need_weights else None  # (L, h, n, n)
    return logits[0], attention, caches


def compute_results(model) -> dict:
    """Run the five parts: ``census``, ``sink``, ``gqa``, ``ablation``, ``induction``; each timed."""
    c = model.config
    group_size = c.h // c.n_kv_heads
    seconds, cpu_seconds = {}, {}
    clock = {}

    def start(name):
        clock[name] = time.perf_counter(), time.process_time()

    def stop(name):
        wall, cpu = clock.pop(name)
        seconds[name], cpu_seconds[name] = time.perf_counter() - wall, time.process_time() - cpu

    # (a) census
    start("census")
    texts = [tokenize(s) for s in SENTENCES]
    sums = None
    divergence = torch.zeros(c.n_layers, c.h, c.h)
    sink_share, value_ratio = torch.zeros(c.n_layers), torch.zeros(c.n_layers)
    for ids in texts:
        _, attention, caches = _run(model, ids)
        scores = text_scores(attention)
        sums = scores if sums is None else {k: sums[k] + scores[k] for k in sums}
        divergence += group_divergence(attention, group_size)
        sink_share += scores["sink"].mean(-1)
        norms = torch.stack([cache.v[0].norm(dim=-1) for cache in caches])  # (L, g, n)
        value_ratio += (norms[..., 0] / norms[..., 1:].mean(-1)).mean(-1)
    scores = {k: v / len(texts) for k, v in sums.items()}
    randoms = repeated_random()
    induction = torch.zeros(c.n_layers, c.h)
    for ids in randoms:
        induction += induction_score(_run(model, ids)[1])
    scores["induction"] = induction / len(randoms)
    labels = classify(scores)
    stop("census")

    # (b) the sink: change or remove the first token
    start("sink")
    variants = {}
    so = tokenize("So,")  # two tokens put before each sentence: position 0 is now "So"
    for name, make in (
        ("original", lambda ids: ids),
        ("prefixed", lambda ids: so + ids),
        ("first_removed", lambda ids: ids[1:]),
    ):
        on_zero, on_word = torch.zeros(c.n_layers), torch.zeros(c.n_layers)
        for ids in texts:
            new = make(ids)
            attention = _run(model, new)[1]
            rows = attention[..., len(so) + 1 :, :] if name == "prefixed" else attention[..., 1:, :]
            on_zero += rows[..., 0].mean((-1, -2))
            if name == "prefixed":  # the sentence's own first token, now at position len(so)
                on_word += rows[..., len(so)].mean((-1, -2))
        variants[name] = {"position_0": on_zero / len(texts)}
        if name == "prefixed":
            variants[name]["old_first_token"] = on_word / len(texts)
    sink_share = sink_share / len(texts)
    stop("sink")

    # (c) grouped-query attention
    divergence = divergence / len(texts)
    within, across = within_and_across(divergence, group_size)

    # (d) ablation
    start("ablation")
    held = tokenize(HELD_OUT)
    intact = next_token_loss(_run(model, held, need_weights=False)[0], held)
    head_loss = torch.zeros(c.n_layers, c.h)
    for layer in range(c.n_layers):
        for head in range(c.h):
            head_loss[layer, head] = next_token_loss(_run(model, held, [(layer, head)], False)[0], held)
    group_loss = torch.zeros(c.n_layers, c.n_kv_heads)
    for layer in range(c.n_layers):
        for g in range(c.n_kv_heads):
            off = [(layer, g * group_size + i) for i in range(group_size)]
            group_loss[layer, g] = next_token_loss(_run(model, held, off, False)[0], held)
    stop("ablation")

    # (e) induction on random tokens twice, with groups of heads off
    start("induction")
    by_kind = {
        kind: [(layer, i) for layer in range(c.n_layers) for i in range(c.h) if labels[layer][i] == kind]
        for kind in KINDS
    }
    accuracy = {}
    for name, off in (
        ("intact", []),
        ("induction_off", by_kind["induction"]),
        ("previous_off", by_kind["previous"]),
    ):
        first = second = 0.0
        for ids in randoms:
            logits = _run(model, ids, off, False)[0]
            a, b = copy_accuracy(logits, ids)
            first, second = first + a, second + b
        accuracy[name] = {
            "first_copy": first / len(randoms),
            "second_copy": second / len(randoms),
            "heads_off": len(off),
        }
    stop("induction")

    delta = head_loss - intact
    return {
        "corpus": {
            "sentences": list(SENTENCES),
            "held_out": HELD_OUT,
            "held_out_tokens": len(held),
            "random": {"sequences": RANDOM_SEQUENCES, "length": RANDOM_LENGTH, "seed": RANDOM_SEED},
            "sentence_tokens": sum(len(t) for t in texts),
        },
        "rules": [list(rule) for rule in RULES],
        "local_window": LOCAL_WINDOW,
        "scores": {name: _rounded(values) for name, values in scores.items()},
        "labels": labels,
        "counts": {kind: sum(row.count(kind) for row in labels) for kind in KINDS},
        "layers_of": {kind: sorted({layer for layer, _ in heads}) for kind, heads in by_kind.items()},
        "sink": {
            "share_on_position_0_by_layer": _rounded(sink_share),
            "value_norm_first_over_rest_by_layer": _rounded(value_ratio / len(texts)),
            "variants": {name: {k: _rounded(v) for k, v in d.items()} for name, d in variants.items()},
            "prefix": "So,",
        },
        "gqa": {
            "group_size": group_size,
            "divergence": "mean Jensen-Shannon divergence (bits) between two heads' attention rows, corpus",
            "within_by_layer": _rounded(within),
            "across_by_layer": _rounded(across),
            "layers_within_below_across": int((within < across).sum()),
        },
        "ablation": {
            "intact_loss": round(intact, DIGITS),
            "head_loss": _rounded(head_loss),
            "group_loss": _rounded(group_loss),
            "little": LITTLE,
            "heads_little": int((delta < LITTLE).sum()),
            "groups_little": int((group_loss - intact < LITTLE).sum()),
            "passes": c.n_layers * c.h + c.n_layers * c.n_kv_heads + 1,
        },
        "induction": {
            name: {k: _rounded(v) if isinstance(v, float) else v for k, v in d.items()}
            for name, d in accuracy.items()
        },
        "seconds": {name: round(s, 1) for name, s in seconds.items()},
        "cpu_seconds": {name: round(s, 1) for name, s in cpu_seconds.items()},
    }


def prompt_texts() -> list[dict]:
    """The figure's prompts (:data:`book.smollm2.stored.PROMPTS`) as ``{"name", "about", "text", "ids",
    "tokens"}``: the random one is the census's first sequence, the held-out one :data:`HELD_OUT`."""
    out = []
    for name, about, text in PROMPTS:
        if name == "random":
            ids = repeated_random()[0]
            text = decode(ids)
        else:
            text = HELD_OUT if text is None else text
            ids = tokenize(text)
        out.append(
            {"name": name, "about": about, "text": text, "ids": ids, "tokens": [decode([i]) for i in ids]}
        )
    return out


def compute_prompts(model) -> dict:
    """Every head on the figure's prompts (:func:`book.smollm2.stored.stored_prompts`), timed."""
    wall, cpu = time.perf_counter(), time.process_time()
    prompts = prompt_texts()
    attentions = [_run(model, p["ids"])[1] for p in prompts]  # (L, h, n, n) each
    stored = stored_prompts(prompts, attentions, model.config.n_kv_heads)
    stored["source"] = {
        "command": COMMAND,
        "model_package": MODEL_PACKAGE,
        "model_package_version": importlib.metadata.version(MODEL_PACKAGE),
        "torch": torch.__version__,
        "seconds": round(time.perf_counter() - wall, 1),
        "cpu_seconds": round(time.process_time() - cpu, 1),
    }
    return stored


def main(argv: list[str] | None = None) -> None:
    """Compute the results and write them to ``book/smollm2/data/smollm2_heads.json`` (or ``--output``), and
    the figure's prompts to ``data/smollm2_prompts.json`` (or ``--prompts-output``); ``--prompts-only``
    writes only the prompts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "data" / RESULTS_FILE)
    parser.add_argument("--prompts-output", type=Path, default=Path(__file__).parent / "data" / STORED_FILE)
    parser.add_argument("--prompts-only", action="store_true", help="write only the figure's prompts")
    args = parser.parse_args(argv)
    begin = time.perf_counter()
    model = load_smollm2()
    stored = compute_prompts(model)
    args.prompts_output.write_text(
        json.dumps(stored, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    sys.stderr.write(f"wrote {args.prompts_output} ({args.prompts_output.stat().st_size} bytes)\n")
    if args.prompts_only:
        return
    results = compute_results(model)
    metadata = {
        "command": COMMAND,
        "model_package": MODEL_PACKAGE,
        "model_package_version": importlib.metadata.version(MODEL_PACKAGE),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "machine": machine(),
        "load_average_at_end": [round(x, 1) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "wall_seconds": round(time.perf_counter() - begin, 1),
    }
    args.output.write_text(json.dumps({"metadata": metadata, **results}) + "\n", encoding="utf-8")
    sys.stderr.write(f"wrote {args.output} in {metadata['wall_seconds']} s\n")


if __name__ == "__main__":
    main()
