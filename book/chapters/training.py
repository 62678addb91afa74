"""Train tiny one-layer attention models on :mod:`book.chapters.tasks`, evaluate them, and ablate their heads.

The model is the smallest thing that still has the shape of a Transformer layer: token embedding plus a
learned position embedding (as in GPT-2, so a head can learn to look any number of places back), one
causal :class:`mha.MultiHeadAttention` with a residual connection, and an MLP readout at every position.
Its parameter count does not depend on ``h`` (the four projections are ``d_model x d_model`` whatever
``h`` is), so models with different ``h`` are compared at equal size.

Regenerate the chapter's shipped weights and metrics (deterministic; see :mod:`book.chapters.train_heads`)::

    python -m book.chapters.train_heads

Shape legend:
    B        batch size
    n        sequence length
    d_model  model width
    h        number of heads; d_k = d_model / h
    k        number of lookups per position (``task.n_lookups``)
    S        number of symbols a target can take (``task.n_symbols``)
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load, save_file
from torch import nn

from book.chapters.tasks import IGNORE, TASKS, Task
from book.compute.provenance import machine
from mha.compute.ablation import ablate_heads
from mha.masks import causal_mask
from mha.multihead import MultiHeadAttention

EVAL_SEED = 12345  # seed of every task's held-out evaluation batch; training seeds are >= 1_000_003


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines one training run; the same config always gives the same weights."""

    task: str  # a key of mha.TASKS
    h: int  # number of heads
    seed: int = 0  # seeds the initial weights and the stream of training batches
    d_model: int = 16  # model width, the same for every h
    d_ff: int = 32  # hidden width of the readout MLP
    steps: int = 1500  # optimiser steps, one fresh batch each (the data never repeats)
    batch_size: int = 128  # sequences per step
    lr: float = 3e-3  # peak AdamW learning rate: linear warm-up, then cosine decay to zero
    warmup: int = 100  # warm-up steps
    eval_every: int = 100  # steps between two points of the learning curve
    eval_size: int = 2048  # sequences in the held-out evaluation batch

    @property
    def key(self) -> str:
        """A short unique name, e.g. ``"recall-3/h4/seed0"``."""
        return f"{self.task}/h{self.h}/seed{self.seed}"


class OneLayerAttentionModel(nn.Module):
    """Token + learned position embedding, one causal multi-head attention layer with a residual, MLP readout.

    Args:
        task: the task, which fixes the vocabulary, the length and the outputs.
        d_model: model width.
        h: number of heads; must divide ``d_model``.
        d_ff: hidden width of the readout.

    Attributes:
        embedding: ``nn.Embedding(task.vocab_size, d_model)``, one vector per token; for a task with
            ``split_embedding``, ``nn.Embedding(task.n_symbols, d_model)``, one vector per symbol.
        marker: ``None``, or for ``split_embedding`` ``nn.Embedding(task.n_markers + 2, d_model)``: one
            vector per kind of token (unmarked, A, B, ..., query), added to the symbol's.
        position: ``nn.Embedding(task.seq_len, d_model)``, one learned vector per position.
        attn: the :class:`mha.MultiHeadAttention` layer under study.
        readout: ``Linear(d_model, d_ff)``, ReLU, ``Linear(d_ff, k * S)``, applied at every position.
    """

    def __init__(self, task: Task, d_model: int, h: int, *, d_ff: int = 32) -> None:
        super().__init__()
        self.task = task
        if task.split_embedding:
            self.embedding = nn.Embedding(task.n_symbols, d_model)
            self.marker = nn.Embedding(task.n_markers + 2, d_model)
        else:
            self.embedding = nn.Embedding(task.vocab_size, d_model)
            self.marker = None
        self.position = nn.Embedding(task.seq_len, d_model)
        self.register_buffer("mask", causal_mask(task.seq_len), persistent=False)
        self.attn = MultiHeadAttention(d_model, h)
        self.readout = nn.Sequential(
            nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, task.n_lookups * task.n_symbols)
        )

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """Token embedding plus position: ``(B, n)`` integer ids to ``(B, n, d_model)`` vectors."""
        n = tokens.size(1)
        if self.marker is None:
            x = self.embedding(tokens)  # (B, n, d_model)
        else:  # token id = kind * n_symbols + symbol, see book.chapters.tasks
            S = self.task.n_symbols
            x = self.embedding(tokens % S) + self.marker(tokens // S)  # (B, n, d_model)
        return x + self.position.weight[:n]  # (B, n, d_model)

    def embed_names(self, names: Sequence[str]) -> torch.Tensor:
        """Embed tokens given by name (``task.token_names()``, e.g. ``["3", "A5", "?"]``): ``(n, d_model)``.

        This is the ``embed`` argument that :class:`mha.HeadExplorer` expects for a trained model.

        Raises:
            KeyError: a name that is not in the task's vocabulary.
            ValueError: more names than the ``task.seq_len`` positions the model has learned.
        """
        ids = {name: i for i, name in enumerate(self.task.token_names())}
        unknown = [name for name in names if name not in ids]
        if unknown:
            raise KeyError(f"not in the vocabulary of task {self.task.name!r}: {', '.join(unknown)}")
        if not 1 <= len(names) <= self.task.seq_len:
            raise ValueError(f"give 1 to {self.task.seq_len} tokens, got {len(names)}")
        tokens = torch.tensor([[ids[name] for name in names]], device=self.position.weight.device)  # (1, n)
        return self.embed(tokens)[0]  # (n, d_model)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(logits, weights)`` of shapes ``(B, n, k, S)`` and ``(B, h, n, n)``."""
        B, n = tokens.shape
        x = self.embed(tokens)  # (B, n, d_model)
        mask = self.mask[:n, :n]  # (n, n)
        a, weights = self.attn(x, mask=mask)  # (B, n, d_model), (B, h, n, n)
        logits = self.readout(x + a)  # (B, n, k * S)
        return logits.view(B, n, self.task.n_lookups, self.task.n_symbols), weights


def build_model(config: TrainConfig) -> OneLayerAttentionModel:
    """The untrained model of ``config``, its weights drawn from ``config.seed`` (global RNG untouched)."""
    with torch.random.fork_rng():
        torch.manual_seed(config.seed)
        return OneLayerAttentionModel(TASKS[config.task], config.d_model, config.h, d_ff=config.d_ff)


def loss_and_accuracy(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy over the scored targets, and the accuracy of each lookup slot.

    Args:
        logits: shape ``(B, n, k, S)``.
        targets: shape ``(B, n, k)``, :data:`book.chapters.tasks.IGNORE` where nothing is scored.

    Returns:
        ``(loss, slot_accuracy)``: a scalar, and a tensor of shape ``(k,)``, the fraction of correct
        predictions per lookup.
    """
    S = logits.size(-1)
    loss = F.cross_entropy(logits.reshape(-1, S), targets.reshape(-1), ignore_index=IGNORE)
    scored = targets != IGNORE  # (B, n, k)
    correct = (logits.argmax(-1) == targets) & scored  # (B, n, k)
    slot_accuracy = correct.sum(dim=(0, 1)) / scored.sum(dim=(0, 1))  # (k,)
    return loss, slot_accuracy


@torch.no_grad()
def evaluate(model: OneLayerAttentionModel, *, size: int = 2048, heads_off: Iterable[int] = ()) -> dict:
    """Loss and accuracy of ``model`` on its task's held-out batch (seed :data:`EVAL_SEED`).

    Args:
        model: a trained or untrained model.
        size: number of held-out sequences.
        heads_off: heads to ablate during the evaluation (see :func:`ablate_heads`).

    Returns:
        ``{"loss": float, "accuracy": float, "slot_accuracy": list[float]}``; ``accuracy`` is the mean
        over the lookups.
    """
    tokens, targets = model.task.sample(size, seed=EVAL_SEED)
    was_training = model.training
    model.eval()
    with ablate_heads(model.attn, heads_off):
        logits, _ = model(tokens)
    model.train(was_training)
    loss, slot_accuracy = loss_and_accuracy(logits, targets)
    return {
        "loss": loss.item(),
        "accuracy": slot_accuracy.mean().item(),
        "slot_accuracy": slot_accuracy.tolist(),
    }


def head_ablation(model: OneLayerAttentionModel, *, size: int = 2048) -> list[dict]:
    """Evaluate ``model`` with each head ablated in turn.

    Returns:
        One dict per head ``i`` (in order), :func:`evaluate`'s result with head ``i`` zeroed, plus
        ``"head": i`` and ``"drop"``: full accuracy minus ablated accuracy.
    """
    full = evaluate(model, size=size)["accuracy"]
    rows = []
    for i in range(model.attn.h):
        result = evaluate(model, size=size, heads_off=[i])
        rows.append({"head": i, **result, "drop": full - result["accuracy"]})
    return rows


def train(config: TrainConfig) -> tuple[OneLayerAttentionModel, dict]:
    """Train one model; deterministic for a given ``config`` (on one thread, same PyTorch build).

    Returns:
        ``(model, curve)``: the trained model in eval mode and its learning curve,
        ``{"step": [...], "loss": [...], "accuracy": [...]}`` measured on the held-out batch at step 0
        and every ``config.eval_every`` steps.
    """
    task = TASKS[config.task]
    model = build_model(config)
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.0)

    def lr_at(step: int) -> float:
        if step < config.warmup:
            return config.lr * (step + 1) / config.warmup
        progress = (step - config.warmup) / max(1, config.steps - config.warmup)
        return config.lr * 0.5 * (1.0 + math.cos(math.pi * progress))

    curve: dict[str, list] = {"step": [], "loss": [], "accuracy": []}
    for step in range(config.steps + 1):
        if step % config.eval_every == 0 or step == config.steps:
            result = evaluate(model, size=config.eval_size)
            curve["step"].append(step)
            curve["loss"].append(result["loss"])
            curve["accuracy"].append(result["accuracy"])
        if step == config.steps:
            break
        model.train()
        tokens, targets = task.sample(config.batch_size, seed=1_000_003 * (config.seed + 1) + step)
        logits, _ = model(tokens)
        loss, _ = loss_and_accuracy(logits, targets)
        for group in optimiser.param_groups:
            group["lr"] = lr_at(step)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
    return model.eval(), curve


def attention_by_offset(weights: torch.Tensor, *, start: int = 0) -> torch.Tensor:
    """Mean attention weight that each head gives to the key ``o`` places back, for every offset ``o``.

    Args:
        weights: attention weights of shape ``(B, h, n, n)`` (self-attention).
        start: average over the queries ``start..n-1`` only (e.g. those where a copy task is scored).

    Returns:
        Tensor of shape ``(h, n)``: entry ``[j, o]`` is the mean of ``weights[:, j, i, i - o]`` over the
        batch and the queries ``i >= max(start, o)``. Under a causal mask each row sums to 1 when
        ``start = n - 1``; with a smaller ``start`` the columns average over different queries.
    """
    _, h, n, _ = weights.shape  # (B, h, n, n)
    if not 0 <= start < n:
        raise ValueError(f"start must lie in 0..n-1={n - 1}, got {start}")
    profile = torch.zeros(h, n, dtype=weights.dtype)
    for o in range(n):
        diagonal = weights.diagonal(offset=-o, dim1=2, dim2=3)  # (B, h, n - o), entries (i, i - o)
        first = max(start, o) - o  # index of query max(start, o) along the diagonal
        if first < n - o:
            profile[:, o] = diagonal[:, :, first:].mean(dim=(0, 2))
    return profile  # (h, n)


def attention_to_markers(weights: torch.Tensor, tokens: torch.Tensor, task: Task) -> torch.Tensor:
    """Mean attention weight that the final query of a recall task gives to each marker, per head.

    Args:
        weights: attention weights of shape ``(B, h, n, n)``.
        tokens: the input ids of shape ``(B, n)``.
        task: a recall task.

    Returns:
        Tensor of shape ``(h, n_markers + 2)``: the weight on marker A, B, ..., then on the unmarked
        tokens, then on the query itself; each row sums to 1.
    """
    if task.family != "recall":
        raise ValueError(f"task must be a recall task, got {task.name!r}")
    last = weights[:, :, -1, :]  # (B, h, n), where the query looks
    kind = tokens // task.n_symbols  # (B, n): 0 unmarked, 1 + m for marker m, n_markers + 1 the query
    columns = [(last * (kind == m)[:, None, :]).sum(-1) for m in range(1, task.n_markers + 1)]
    columns += [(last * (kind == 0)[:, None, :]).sum(-1), last[:, :, -1]]  # unmarked, the query itself
    return torch.stack(columns, dim=-1).mean(0)  # (h, n_markers + 2)


# --- The chapter's grid of runs: regenerate, save, load ----------------------------------------------

GRID_TASKS = ("copy-1", "copy-3", "recall-1", "recall-3", "recall-3-split")  # the tasks of the chapter
GRID_H = (1, 2, 4, 8, 16)  # numbers of heads at d_model = 16, so d_k = 16, 8, 4, 2, 1
GRID_SEEDS = (0, 1, 2)  # seeds per (task, h)
RESULTS_FILE = "heads_runs.json"  # configs, learning curves, final metrics, timing
# One state dict per run, by name: "<run key>/<parameter>", e.g. "copy-3/h4/seed0/attn.W_q.weight".
WEIGHTS_FILE = "heads_weights.safetensors"
SHIPPED_DTYPE = torch.float16  # storage type of the shipped weights; models compute in float32


def grid_configs() -> list[TrainConfig]:
    """The configs of the chapter's runs: every task x h x seed, other fields at their defaults."""
    return [TrainConfig(task, h, seed) for task in GRID_TASKS for h in GRID_H for seed in GRID_SEEDS]


def _run(config: TrainConfig) -> tuple[str, dict, dict]:
    torch.set_num_threads(1)  # one thread per run: deterministic, and runs go in parallel processes
    start = time.perf_counter()
    model, curve = train(config)
    # Ship the weights in float16 (half the bytes), by name; the final metrics are those of that copy.
    state = {name: t.detach().to(SHIPPED_DTYPE) for name, t in model.state_dict().items()}
    model.load_state_dict(state, strict=True)  # copies the rounded weights back in float32
    final = evaluate(model, size=config.eval_size)
    record = {
        "config": dataclasses.asdict(config),
        "curve": curve,
        "final": final,
        "train_seconds": time.perf_counter() - start,
    }
    return config.key, record, state


def regenerate(out_dir: str | Path, *, jobs: int = 2) -> dict:
    """Train every run of :func:`grid_configs` and write :data:`RESULTS_FILE` and :data:`WEIGHTS_FILE`.

    Args:
        out_dir: directory for the two files (the package's ``book/chapters/data`` for the shipped ones).
        jobs: number of worker processes, one thread each.

    Returns:
        The results dict that was written.
    """
    from concurrent.futures import ProcessPoolExecutor

    configs = grid_configs()
    start = time.perf_counter()
    if jobs == 1:
        outputs = [_run(config) for config in configs]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            outputs = list(pool.map(_run, configs))
    wall = time.perf_counter() - start
    results = {
        "command": "python -m book.chapters.train_heads",
        "wall_seconds": wall,
        "jobs": jobs,
        "threads_per_job": 1,
        "torch": torch.__version__,
        "machine": machine(),
        "eval_seed": EVAL_SEED,
        "weights_dtype": str(SHIPPED_DTYPE).removeprefix("torch."),
        "grid": {"tasks": list(GRID_TASKS), "h": list(GRID_H), "seeds": list(GRID_SEEDS)},
        "runs": {key: record for key, record, _ in outputs},
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / RESULTS_FILE).write_text(json.dumps(results, indent=1) + "\n")
    tensors = {f"{key}/{name}": t for key, _, state in outputs for name, t in state.items()}
    save_file(tensors, out / WEIGHTS_FILE, metadata={"format": "one state dict per run, by name"})
    return results


def load_results() -> dict:
    """The shipped results: the configs, learning curves and final metrics of every run, and the timing."""
    return json.loads(resources.files("book.chapters").joinpath("data", RESULTS_FILE).read_text())


def load_models(results: dict | None = None) -> dict[str, OneLayerAttentionModel]:
    """The shipped trained models, in eval mode, keyed like ``"recall-3/h4/seed0"`` (see ``TrainConfig.key``).

    Args:
        results: :func:`load_results`'s dict (loaded if ``None``); its configs rebuild the models.
    """
    results = load_results() if results is None else results
    tensors = load(resources.files("book.chapters").joinpath("data", WEIGHTS_FILE).read_bytes())
    models = {}
    for key, record in results["runs"].items():
        model = build_model(TrainConfig(**record["config"]))
        prefix = f"{key}/"
        state = {name.removeprefix(prefix): t for name, t in tensors.items() if name.startswith(prefix)}
        model.load_state_dict(state, strict=True)  # a missing, extra or reshaped parameter raises
        models[key] = model.eval()
    return models
