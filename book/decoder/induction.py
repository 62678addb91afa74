"""Measuring induction heads in the book's decoder (:mod:`book.decoder.model`): what the chapter prints.

An induction head (Elhage et al. 2021; Olsson et al. 2022) completes ``... A B ... A`` with ``B``: at the
second ``A`` it attends to the token *after* the earlier ``A`` and copies it. It cannot do this alone: its key
must know which token came before each position, and that is what a previous-token head of an earlier layer
writes into the residual stream. The functions here measure both halves and their composition on the test
the literature uses, a random sequence repeated twice:

- :func:`repeated_sequences`: random sequences of distinct ordinary tokens, each repeated twice;
- :func:`copy_accuracy`: top-1 accuracy and loss on the first and on the second copy (the first copy cannot be
  predicted; the second can, by copying), with chosen heads switched off;
- :func:`head_scores`: each head's induction score and previous-token score, and :func:`find_heads`, the
  heads above a threshold, as groups;
- :func:`ablation_table`: accuracy on each copy with no head off, each group off, and each head off;
- :func:`composition_scores` (Elhage et al.'s K-, Q- and V-composition, from the weights) and
  :func:`path_patching` (the same question asked of the forward pass: remove one head's output from what the
  next layer's keys, queries or values read);
- :func:`training_curves`: the shipped training log as a table, with the in-context-learning score;
- :func:`top_predictions` and :func:`next_token_probabilities`: what the chapter shows of single texts and
  sequences (the top five next tokens at chosen positions; the probability of the true next token).

Shape legend:
    S        number of sequences
    m        length of one random sequence (``lengths``), so a row holds 2 m tokens
    n        row length, the longest 2 m (shorter rows are padded at the end: a causal model never sees it)
    L        number of layers
    h        heads per layer
    d_model  model width; d_k = d_model / h
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from importlib import resources

import pandas as pd
import torch
import torch.nn.functional as F

from book.decoder.model import LOG_FILE, ORDINARY, VOCABULARY, Decoder

SEED = 2022  # seed of the chapter's and the tests' random sequences (the training log uses its own)
COUNT = 200  # random sequences the chapter measures on
LENGTHS = (20, 40)  # shortest and longest random sequence, in tokens
# A head whose score reaches its threshold is one of "the induction heads" or "the previous-token heads". A
# head attending uniformly to what it may see scores about 0.02 (induction) and 0.06 (previous token) on 20-40
# tokens repeated twice; 0.3 is over ten and about five times as much.
INDUCTION_THRESHOLD = 0.3
PREVIOUS_THRESHOLD = 0.3


def repeated_sequences(
    count: int = COUNT,
    *,
    lengths: tuple[int, int] = LENGTHS,
    seed: int = SEED,
    alphabet: Sequence[str] = ORDINARY,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` random sequences of distinct tokens of ``alphabet``, each followed by itself.

    Args:
        count: number of sequences ``S``.
        lengths: ``(shortest, longest)`` length ``m`` of one sequence, drawn uniformly, both included.
        seed: the same seed gives the same sequences.
        alphabet: the tokens to draw from, each a token of the vocabulary, no two alike: by default the 94
            ordinary tokens; e.g. ``string.ascii_lowercase`` for lower-case letters only.

    Returns:
        ``(tokens, lengths)``: ids of shape ``(S, n)`` with ``n = 2 * longest`` (row ``s`` holds its sequence
        twice, then padding that no prediction depends on), and the lengths ``m`` of shape ``(S,)``.

    Raises:
        ValueError: ``alphabet`` holds a token the vocabulary lacks or one twice, or ``lengths`` is not
            ``2 <= shortest <= longest <= len(alphabet)``.
    """
    alphabet = list(alphabet)
    if len(set(alphabet)) != len(alphabet) or not set(alphabet) <= set(VOCABULARY):
        raise ValueError(
            f"alphabet must hold distinct tokens of the vocabulary, got {''.join(map(str, alphabet))!r}"
        )
    shortest, longest = lengths
    if not 2 <= shortest <= longest <= len(alphabet):
        raise ValueError(f"lengths must satisfy 2 <= shortest <= longest <= {len(alphabet)}, got {lengths}")
    ids = torch.tensor([VOCABULARY.index(c) for c in alphabet])  # (len(alphabet),)
    generator = torch.Generator().manual_seed(seed)
    m = torch.randint(shortest, longest + 1, (count,), generator=generator)  # (S,)
    tokens = torch.full((count, 2 * longest), VOCABULARY.index(" "))  # (S, n), padded with spaces
    for s in range(count):
        order = torch.randperm(len(alphabet), generator=generator)[: m[s]]  # distinct tokens
        sequence = ids[order]  # (m,)
        tokens[s, : 2 * m[s]] = torch.cat([sequence, sequence])
    return tokens, m


def _copy_masks(lengths: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Which predictions belong to each copy: ``(first, second)`` boolean masks of shape ``(S, n - 1)``.

    Position ``i`` predicts token ``i + 1``. The first copy's scored predictions are those of its tokens 2 to
    ``m`` (from positions ``0 .. m - 2``); the second copy's those of its tokens 2 to ``m`` (positions
    ``m .. 2m - 2``). The first token of each copy follows nothing that announces it, and is left out of both.
    """
    i = torch.arange(n - 1)[None, :]  # (1, n - 1)
    m = lengths[:, None]  # (S, 1)
    return i <= m - 2, (i >= m) & (i <= 2 * m - 2)  # 2 x (S, n - 1)


@torch.no_grad()
def copy_accuracy(
    model: Decoder, tokens: torch.Tensor, lengths: torch.Tensor, *, off: Iterable[tuple[int, int]] = ()
) -> dict[str, float]:
    """Top-1 accuracy and mean loss (nats) of the next-token predictions on each copy.

    Args:
        model: the decoder.
        tokens, lengths: from :func:`repeated_sequences`.
        off: ``(layer, head)`` pairs switched off.

    Returns:
        ``{"first": ..., "second": ..., "first_loss": ..., "second_loss": ...}``, accuracies in ``[0, 1]``.
    """
    logits, _ = model(tokens, off=off)  # (S, n, V)
    logits, targets = logits[:, :-1], tokens[:, 1:]  # (S, n - 1, V), (S, n - 1)
    correct = logits.argmax(-1) == targets  # (S, n - 1)
    loss = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # (S, n - 1)
    first, second = _copy_masks(lengths, tokens.size(1))
    return {
        "first": correct[first].float().mean().item(),
        "second": correct[second].float().mean().item(),
        "first_loss": loss[first].mean().item(),
        "second_loss": loss[second].mean().item(),
    }


@torch.no_grad()
def head_scores(model: Decoder, tokens: torch.Tensor, lengths: torch.Tensor) -> dict[str, torch.Tensor]:
    """Each head's induction score and previous-token score on repeated random sequences.

    - **induction**: the mean attention from a second-copy position ``i`` (``m <= i <= 2m - 1``) to the token
      after the earlier occurrence of its token, position ``i - m + 1``;
    - **previous**: the mean attention from position ``i`` to position ``i - 1``, over ``1 <= i <= 2m - 1``.

    Both lie in ``[0, 1]``: 1 means all of the weight on that one key, every time.

    Returns:
        ``{"induction": (L, h), "previous": (L, h)}``, float32 tensors.
    """
    _, attention = model(tokens)  # (S, L, h, n, n)
    return _scores(attention, lengths)


def _scores(attention: torch.Tensor, lengths: torch.Tensor) -> dict[str, torch.Tensor]:
    """:func:`head_scores` from attention ``(S, L, h, n, n)`` in hand: ``{"induction": (L, h), ...}``."""
    S, L, h = attention.shape[:3]
    induction = torch.zeros(L, h)
    previous = torch.zeros(L, h)
    for s in range(S):
        m = int(lengths[s])
        i = torch.arange(m, 2 * m)  # second-copy queries
        induction += attention[s, :, :, i, i - m + 1].mean(-1)  # (L, h)
        i = torch.arange(1, 2 * m)
        previous += attention[s, :, :, i, i - 1].mean(-1)  # (L, h)
    return {"induction": induction / S, "previous": previous / S}


def find_heads(scores: torch.Tensor, threshold: float) -> list[tuple[int, int]]:
    """The ``(layer, head)`` pairs, 0-based, whose score reaches ``threshold``, highest score first.

    Args:
        scores: one score per head, ``(L, h)`` (:func:`head_scores`).
        threshold: :data:`INDUCTION_THRESHOLD` or :data:`PREVIOUS_THRESHOLD`, or your own.
    """
    L, h = scores.shape
    pairs = [(layer, j) for layer in range(L) for j in range(h) if scores[layer, j] >= threshold]
    return sorted(pairs, key=lambda pair: -float(scores[pair]))


def head_name(layer: int, head: int) -> str:
    """How the book names a head: 1-based, ``"L1H3"`` for ``(layer, head) = (0, 2)``."""
    return f"L{layer + 1}H{head + 1}"


def ablation_table(
    model: Decoder,
    tokens: torch.Tensor,
    lengths: torch.Tensor,
    groups: dict[str, Sequence[tuple[int, int]]],
) -> pd.DataFrame:
    """Accuracy on each copy with nothing off, with each named group of heads off, and with each head off.

    Args:
        model, tokens, lengths: as :func:`copy_accuracy`.
        groups: named groups of ``(layer, head)`` pairs, e.g. ``{"induction heads": [(1, 0), (1, 3)]}``.

    Returns:
        One row per case (``"none"``, the groups in order, then every head as ``"L1H1"`` ...), with columns
        ``off`` (the pairs), ``first``, ``second`` (accuracies), ``second_loss`` and ``change`` (second-copy
        accuracy minus that with nothing off).
    """
    cases: list[tuple[str, tuple[tuple[int, int], ...]]] = [("none", ())]
    cases += [(name, tuple(pairs)) for name, pairs in groups.items()]
    L, h = model.config.layers, model.config.h
    cases += [(head_name(layer, j), ((layer, j),)) for layer in range(L) for j in range(h)]
    rows = []
    for name, off in cases:
        result = copy_accuracy(model, tokens, lengths, off=off)
        rows.append({"case": name, "off": off, **{k: result[k] for k in ("first", "second", "second_loss")}})
    table = pd.DataFrame(rows).set_index("case")
    table["change"] = table["second"] - table.loc["none", "second"]
    return table


def _head_matrices(model: Decoder, layer: int) -> dict[str, torch.Tensor]:
    """One layer's per-head matrices with its RMSNorm's weight folded into the inputs.

    Returns:
        ``{"W_q": (h, d_k, d_model), "W_k": ..., "W_v": ..., "W_o": (h, d_model, d_k)}``; a head reads
        ``norm(x) = g * x / rms(x)``, so ``W_q diag(g)`` is what its query reads from the residual stream,
        up to one scale per position.
    """
    block = model.layers[layer]
    h, d_k = block.attn.h, block.attn.d_k
    g = block.norm.weight.detach()  # (d_model,)
    out = {}
    for name in ("W_q", "W_k", "W_v"):
        W = getattr(block.attn, name).weight.detach()  # (h d_k, d_model)
        out[name] = (W * g).view(h, d_k, -1)  # (h, d_k, d_model)
    W_o = block.attn.W_o.weight.detach()  # (d_model, h d_k)
    out["W_o"] = W_o.view(-1, h, d_k).transpose(0, 1)  # (h, d_model, d_k)
    return out


@torch.no_grad()
def composition_scores(model: Decoder, *, source: int = 0, target: int = 1) -> dict[str, torch.Tensor]:
    r"""Elhage et al.'s (2021) composition scores between the heads of two layers, from the weights alone.

    With :math:`W_{OV}^{i} = W_O^{i} W_V^{i}` the map from the residual stream to what head ``i`` of layer
    ``source`` writes, and :math:`W_{QK}^{j} = W_Q^{j\top} W_K^{j}` the bilinear form of head ``j`` of layer
    ``target`` (each with its layer's RMSNorm weight folded in), the K-composition score is

    .. math::
        \frac{\lVert W_{QK}^{j} W_{OV}^{i} \rVert_F}{\lVert W_{QK}^{j} \rVert_F \lVert W_{OV}^{i} \rVert_F},

    Q-composition uses :math:`W_{OV}^{i\top} W_{QK}^{j}` and V-composition :math:`W_{OV}^{j} W_{OV}^{i}`. In
    this decoder the rotary positions turn each query before it meets a key, by an angle that depends on the
    offset; :math:`W_{QK}^{j}` is taken at offset 0 (no rotation), as for a model without positions in its
    heads. A score is large when head ``j`` reads, through that path, what head ``i`` writes; the chapter
    compares it with the score of random matrices of the same shapes (``baseline``).

    Returns:
        ``{"k": (h, h), "q": (h, h), "v": (h, h), "baseline": scalar}``, entry ``[i, j]`` from head ``i`` of
        layer ``source`` to head ``j`` of layer ``target``; ``baseline`` is the mean K-composition score of
        ``64`` pairs of Gaussian matrices of the same shapes (seeded).
    """
    A, B = _head_matrices(model, source), _head_matrices(model, target)
    W_ov = A["W_o"] @ A["W_v"]  # (h, d_model, d_k) @ (h, d_k, d_model) -> (h, d_model, d_model)
    W_qk = B["W_q"].transpose(1, 2) @ B["W_k"]  # (h, d_model, d_model)
    W_ov_target = B["W_o"] @ B["W_v"]  # (h, d_model, d_model)

    def score(product: torch.Tensor, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        return product.norm(dim=(-2, -1)) / (left.norm(dim=(-2, -1)) * right.norm(dim=(-2, -1)))

    ov, qk, ov_t = W_ov[:, None], W_qk[None, :], W_ov_target[None, :]  # to (h_source, h_target, ...)
    scores = {
        "k": score(qk @ ov, qk, ov),
        "q": score(ov.transpose(-2, -1) @ qk, qk, ov),
        "v": score(ov_t @ ov, ov_t, ov),
    }
    generator = torch.Generator().manual_seed(0)
    d_model, d_k = W_ov.size(-1), A["W_q"].size(1)

    def random_low_rank() -> torch.Tensor:  # a product of two Gaussian matrices of a head's shapes
        left = torch.randn(d_model, d_k, generator=generator)
        return left @ torch.randn(d_k, d_model, generator=generator)  # (d_model, d_model), rank d_k

    baseline = [score(a @ b, a, b) for a, b in ((random_low_rank(), random_low_rank()) for _ in range(64))]
    return {**scores, "baseline": torch.stack(baseline).mean()}


@torch.no_grad()
def path_patching(
    model: Decoder,
    tokens: torch.Tensor,
    lengths: torch.Tensor,
    heads: Sequence[tuple[int, int]],
    *,
    readers: Sequence[tuple[int, int]] = (),
) -> pd.DataFrame:
    """Second-copy accuracy with the outputs of ``heads`` removed from one path of the later layers only.

    For each path (``"k"``, ``"q"``, ``"v"``: what later layers' keys, queries or values read), the decoder
    runs with the summed output of ``heads`` subtracted from that path's input and kept everywhere else
    (``Decoder.forward``'s ``off_in``); ``"all"`` switches the heads off outright. If the later heads find the
    earlier token by their keys (K-composition), removing ``heads`` from the keys alone breaks the copying.

    Args:
        model, tokens, lengths: as :func:`copy_accuracy`.
        heads: the heads whose output is removed, e.g. the previous-token heads.
        readers: heads whose induction score is reported too (e.g. the induction heads); their mean score is
            in column ``induction``.

    Returns:
        One row per path (``"none"``, ``"q"``, ``"k"``, ``"v"``, ``"all"``) with columns ``second``
        (accuracy), ``second_loss`` and ``induction`` (the readers' mean induction score; NaN if no readers).
    """
    heads = tuple(heads)
    rows = []
    for path in ("none", "q", "k", "v", "all"):
        kwargs: dict = {}
        if path == "all":
            kwargs["off"] = heads
        elif path != "none":
            kwargs["off_in"] = {path: heads}
        logits, attention = model(tokens, **kwargs)  # (S, n, V), (S, L, h, n, n)
        logits, targets = logits[:, :-1], tokens[:, 1:]
        _, second = _copy_masks(lengths, tokens.size(1))
        correct = (logits.argmax(-1) == targets)[second].float().mean().item()
        loss = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")[second].mean().item()
        score = float("nan")
        if readers:
            scores = _scores(attention, lengths)["induction"]  # (L, h)
            score = torch.stack([scores[pair] for pair in readers]).mean().item()
        rows.append({"path": path, "second": correct, "second_loss": loss, "induction": score})
    return pd.DataFrame(rows).set_index("path")


def load_log() -> dict:
    """The shipped training log (``data/decoder_log.json``): config, corpus, timing and curves."""
    return json.loads(resources.files("book.decoder").joinpath("data", LOG_FILE).read_text())


def training_curves(log: dict | None = None) -> pd.DataFrame:
    """The training log's curves as a table, one row per evaluation step.

    Columns: ``step``; ``loss`` (held-out text, nats per character); ``icl`` (the in-context-learning score
    of Olsson et al. 2022: the loss late in a row minus the loss early in it, on held-out text; it falls
    below zero when later tokens are predicted better thanks to the context); ``first`` and ``second``
    (top-1 accuracy on each copy of repeated random sequences), ``first_loss`` and ``second_loss`` (their
    losses) and ``icl_copy`` (the same score on those sequences: second-copy loss minus first-copy loss); and
    per head ``induction L2H1`` ... and ``previous L1H1`` ... (the scores of :func:`head_scores`).
    """
    log = load_log() if log is None else log
    curves = log["curves"]
    columns = ("step", "loss", "icl", "first", "second", "first_loss", "second_loss")
    table = pd.DataFrame({k: curves[k] for k in columns})
    table["icl_copy"] = table["second_loss"] - table["first_loss"]
    for kind in ("induction", "previous"):
        scores = torch.tensor(curves[kind])  # (steps, L, h)
        for layer in range(scores.size(1)):
            for j in range(scores.size(2)):
                table[f"{kind} {head_name(layer, j)}"] = scores[:, layer, j].tolist()
    return table.set_index("step")


def phase_change(
    table: pd.DataFrame | None = None, *, column: str = "second", low: float = 0.1, high: float = 0.9
) -> dict[str, float]:
    """Where a curve of :func:`training_curves` makes its jump: the steps it takes from ``low`` to ``high``.

    The marks are fractions of the way from the curve's first value to its last. ``end`` is the first step at
    or past the ``high`` mark, ``start`` the last step before ``end`` still short of the ``low`` mark; a
    phase change is a jump that takes few steps of the whole run.

    Args:
        table: :func:`training_curves`' table (the shipped log's if ``None``).
        column: the curve, by default second-copy accuracy.
        low, high: the two marks, ``0 <= low < high <= 1``.

    Returns:
        ``{"start": step, "end": step, "before": value at start, "after": value at end}``.
    """
    if not 0 <= low < high <= 1:
        raise ValueError(f"low and high must satisfy 0 <= low < high <= 1, got {low} and {high}")
    table = training_curves() if table is None else table
    values = table[column]
    first, last = values.iloc[0], values.iloc[-1]
    rising = last >= first
    sign = 1.0 if rising else -1.0  # a falling curve (a loss) is measured on its negative
    reached = sign * (values - first) >= sign * high * (last - first)
    end = reached.idxmax()  # the first step where it is True
    short = sign * (values.loc[:end] - first) < sign * low * (last - first)
    start = short[short].index.max()
    return {"start": int(start), "end": int(end), "before": float(values[start]), "after": float(values[end])}


# What the chapter shows of a space and a newline, which print as nothing: an open box and a return symbol.
SHOWN = {" ": "\u2423", "\n": "\u23ce"}


def shown(token: str) -> str:
    """A token as the chapter's tables and figures show it: a space as ``␣``, a newline as ``⏎``."""
    return SHOWN.get(token, token)


def top_predictions(
    result: dict, positions: Sequence[int] | None = None, *, context: int = 16
) -> pd.DataFrame:
    """The five most probable next tokens at chosen positions of a result of :func:`~.decoder.predict`.

    Args:
        result: what :func:`book.decoder.model.predict` returned for a text.
        positions: 0-based positions ``i`` (each row shows what the model expects after token ``i``); all
            positions if ``None``.
        context: how many characters of the text up to and including position ``i`` to show.

    Returns:
        One row per position, indexed by ``position``, with columns ``text`` (the last ``context`` characters
        up to position ``i``), ``next`` (the token that follows in the text, ``""`` after the last),
        ``rank`` (its place among the five, 1 to 5, or 0 when it is not among them) and ``top 1`` to ``top 5``
        (each candidate and its probability, highest first, joined by a no-break space so that a narrow page
        never splits them). Spaces and newlines are shown as :data:`SHOWN`.

    Raises:
        ValueError: a position outside ``0 .. n - 1``.
    """
    tokens, top = result["tokens"], result["top"]
    n = len(tokens)
    positions = range(n) if positions is None else list(positions)
    rows = []
    for i in positions:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
            raise ValueError(f"positions must be ints in 0..{n - 1} (the text's tokens), got {i!r}")
        following = tokens[i + 1] if i + 1 < n else ""
        candidates = [token for token, _ in top[i]]
        rows.append(
            {
                "position": i,
                "text": "".join(shown(t) for t in tokens[max(0, i + 1 - context) : i + 1]),
                "next": shown(following),
                "rank": candidates.index(following) + 1 if following in candidates else 0,
                **{f"top {r + 1}": f"{shown(token)}\u00a0{p:.2f}" for r, (token, p) in enumerate(top[i])},
            }
        )
    return pd.DataFrame(rows).set_index("position")


@torch.no_grad()
def next_token_probabilities(
    model: Decoder, tokens: torch.Tensor, *, off: Iterable[tuple[int, int]] = ()
) -> torch.Tensor:
    """The probability the decoder gives to the token that really comes next, at every position.

    Args:
        model: the decoder.
        tokens: ids of shape ``(S, n)``.
        off: ``(layer, head)`` pairs switched off.

    Returns:
        Shape ``(S, n - 1)``: entry ``[s, i]`` is the probability of ``tokens[s, i + 1]`` after position
        ``i``.
    """
    logits, _ = model(tokens, off=off)  # (S, n, V)
    probabilities = torch.softmax(logits[:, :-1], dim=-1)  # (S, n - 1, V)
    return probabilities.gather(-1, tokens[:, 1:, None])[..., 0]  # (S, n - 1)
