"""What the heads of a pretrained encoder do, and what each one is worth.

Two kinds of measurement on :class:`mha.pretrained.minilm.MiniLMEncoder`:

- **Census** (:func:`head_census`): where each head's attention goes, averaged over the rows of real tokens
  of a list of sentences: to ``[CLS]``, to ``[SEP]``, to the previous or next token, to itself, to other
  occurrences of the same token, and how spread out its rows are (entropy). :func:`classify_heads` names
  each head after its dominant pattern.
- **Ablation**: switch heads off (their outputs zeroed before ``W_o``, with
  :func:`mha.compute.ablation.ablate_heads`) and compare the sentence embeddings with the intact model's:
  :func:`mean_cosine` to the intact embeddings, and :func:`paraphrase_accuracy` (is each sentence's
  paraphrase its nearest neighbour?). :func:`greedy_pruning` removes heads one at a time, always the one
  whose removal keeps the embeddings closest to the intact ones.

Heads are named ``(layer, head)``, both 0-based: ``(0, 2)`` is "layer 1, head 3" in 1-based prose.

Shape legend:
    B        number of sentences
    n        padded sequence length in tokens
    L        number of layers, 6
    h        heads per layer, 12
    d_model  model width, 384
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator, Sequence

import torch

from mha.compute.ablation import ablate_heads, ablate_layer_heads
from mha.pretrained.minilm import MiniLMEncoder, key_mask, mean_pool, tokenize

# The patterns of the census, in the order of its keys.
PATTERNS = ("cls", "sep", "previous", "next", "self", "same_token")
MIN_SHARE = 0.5  # classify_heads: a pattern dominates a head if it holds at least this mean weight
BROAD_ENTROPY = 0.6  # classify_heads: else the head is "broad" if its normalised entropy is at least this

Head = tuple[int, int]  # (layer, head), 0-based


def _masked_mean(values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Mean of ``values`` ``(B, h, n)`` over the ``(B, n)`` entries where ``valid`` is True: ``(h,)``."""
    valid = valid[:, None, :].to(values.dtype)  # (B, 1, n)
    return (values * valid).sum(dim=(0, 2)) / valid.sum(dim=(0, 2)).clamp(min=1.0)  # (h,)


@torch.no_grad()
def head_census(encoder: MiniLMEncoder, texts: Sequence[str]) -> dict[str, torch.Tensor]:
    """Where every head's attention goes, on average over the real tokens of ``texts``.

    Each measure is a mean over query rows, pooled over all sentences (each real token's row counts once);
    padding rows never count, and padding keys get zero weight. For a row ``i``:

    - ``cls``: the weight on ``[CLS]`` (position 0); ``sep``: on the closing ``[SEP]``;
    - ``previous``: on position ``i - 1``, over rows that have one (all but ``[CLS]``);
    - ``next``: on position ``i + 1``, over rows that have a real next token (all but ``[SEP]``);
    - ``self``: on position ``i`` itself;
    - ``same_token``: the total weight on *other* positions holding the same token id, over the rows whose
      token occurs more than once in the sentence (e.g. both "the"s of "the cat saw the dog");
    - ``entropy``: ``-sum_j w_ij log w_ij`` in nats; ``entropy_normalised``: the same divided by
      ``log(number of real tokens)``, 1 for a uniform row, 0 for a row on one token.

    The patterns overlap (for the first word, the previous token *is* ``[CLS]``), so they need not sum to 1.

    Args:
        encoder: an encoder from :func:`mha.pretrained.load_minilm`.
        texts: ``B`` sentences.

    Returns:
        ``{name: tensor (L, h)}`` for each name of :data:`PATTERNS` and ``"entropy"``,
        ``"entropy_normalised"``.
    """
    input_ids, attention_mask = tokenize(encoder, texts)  # (B, n)
    _, attentions = encoder(input_ids, attention_mask)  # L x (B, h, n, n)
    real = attention_mask.bool()  # (B, n)
    B, n = real.shape
    lengths = real.sum(dim=1)  # (B,)
    sep_index = (lengths - 1)[:, None, None, None]  # (B, 1, 1, 1): the last real token is [SEP]
    has_previous = real.clone()
    has_previous[:, 0] = False  # (B, n): [CLS] has no previous token
    has_next = torch.zeros_like(real)
    has_next[:, :-1] = real[:, 1:]  # (B, n): a real token follows
    same = (input_ids[:, :, None] == input_ids[:, None, :]) & real[:, :, None] & real[:, None, :]  # (B, n, n)
    same &= ~torch.eye(n, dtype=torch.bool)  # other positions only
    has_same = same.any(dim=-1)  # (B, n)
    log_length = torch.log(lengths.to(torch.float32))[:, None, None]  # (B, 1, 1)

    rows: dict[str, list[torch.Tensor]] = {name: [] for name in (*PATTERNS, "entropy", "entropy_normalised")}
    for w in attentions:  # (B, h, n, n), w[b, i, q, k]: weight of query q on key k
        sep = w.gather(-1, sep_index.expand(B, w.size(1), n, 1)).squeeze(-1)  # (B, h, n)
        previous = torch.zeros_like(w[..., 0])  # (B, h, n)
        previous[..., 1:] = torch.diagonal(w, offset=-1, dim1=-2, dim2=-1)  # w[q, q-1] for q >= 1
        following = torch.zeros_like(w[..., 0])  # (B, h, n)
        following[..., :-1] = torch.diagonal(w, offset=1, dim1=-2, dim2=-1)  # w[q, q+1] for q < n-1
        entropy = torch.special.entr(w).sum(dim=-1)  # (B, h, n), in nats; 0 log 0 = 0
        measures = {
            "cls": (w[..., 0], real),
            "sep": (sep, real),
            "previous": (previous, has_previous),
            "next": (following, has_next),
            "self": (torch.diagonal(w, dim1=-2, dim2=-1), real),
            "same_token": ((w * same[:, None]).sum(dim=-1), has_same),
            "entropy": (entropy, real),
            "entropy_normalised": (entropy / log_length, real),
        }
        for name, (values, valid) in measures.items():
            rows[name].append(_masked_mean(values, valid))  # (h,)
    return {name: torch.stack(per_layer) for name, per_layer in rows.items()}  # each (L, h)


def classify_heads(
    census: dict[str, torch.Tensor], *, min_share: float = MIN_SHARE, broad_entropy: float = BROAD_ENTROPY
) -> list[list[str]]:
    """Name each head after its dominant pattern, by one explicit rule.

    1. If the largest of the :data:`PATTERNS` shares is at least ``min_share``, the head is that pattern
       (``"cls"``, ``"previous"``, ...).
    2. Otherwise, if its normalised entropy is at least ``broad_entropy``, it is ``"broad"``: it spreads its
       weight over many tokens.
    3. Otherwise it is ``"mixed"``: focused, but on no single pattern of the census.

    Args:
        census: the result of :func:`head_census`.
        min_share: the weight a pattern must hold to dominate, in ``(0, 1]``.
        broad_entropy: the normalised entropy from which an undominated head is broad, in ``[0, 1]``.

    Returns:
        ``labels[layer][head]``, an ``L x h`` nested list of strings.
    """
    if not 0.0 < min_share <= 1.0:
        raise ValueError(f"min_share must lie in (0, 1], got {min_share}")
    if not 0.0 <= broad_entropy <= 1.0:
        raise ValueError(f"broad_entropy must lie in [0, 1], got {broad_entropy}")
    missing = [name for name in (*PATTERNS, "entropy_normalised") if name not in census]
    if missing:
        raise ValueError(f"census must be a head_census result; it lacks {missing}")
    shares = torch.stack([census[name] for name in PATTERNS], dim=-1)  # (L, h, patterns)
    best_share, best = shares.max(dim=-1)  # (L, h), (L, h)
    labels = []
    for layer in range(shares.size(0)):
        row = []
        for head in range(shares.size(1)):
            if best_share[layer, head] >= min_share:
                row.append(PATTERNS[best[layer, head]])
            elif census["entropy_normalised"][layer, head] >= broad_entropy:
                row.append("broad")
            else:
                row.append("mixed")
        labels.append(row)
    return labels


def _check_heads(encoder: MiniLMEncoder, heads: Iterable[Head]) -> list[Head]:
    heads = list(heads)
    L, h = len(encoder.layers), encoder.config.h
    for pair in heads:
        if (
            not isinstance(pair, tuple | list)
            or len(pair) != 2
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in pair)
            or not (0 <= pair[0] < L and 0 <= pair[1] < h)
        ):
            raise ValueError(
                f"heads must be (layer, head) pairs of ints with layer in 0..{L - 1} and head in "
                f"0..{h - 1}, got {pair!r}"
            )
    return [tuple(pair) for pair in heads]


@contextlib.contextmanager
def ablate_encoder_heads(encoder: MiniLMEncoder, heads: Iterable[Head]) -> Iterator[None]:
    """Within the ``with`` block, switch off ``heads``, given as ``(layer, head)`` pairs (0-based).

    Each layer's heads are zeroed before its ``W_o`` by :func:`mha.compute.ablation.ablate_heads`; the
    heads may come from several layers. An empty iterable switches nothing off.
    """
    with ablate_layer_heads([layer.attn for layer in encoder.layers], _check_heads(encoder, heads)):
        yield


@torch.no_grad()
def ablated_embeddings(encoder: MiniLMEncoder, texts: Sequence[str], heads: Iterable[Head]) -> torch.Tensor:
    """Sentence embeddings ``(B, d_model)`` of ``texts`` with ``heads``, ``(layer, head)`` pairs, off."""
    input_ids, attention_mask = tokenize(encoder, texts)  # (B, n)
    with ablate_encoder_heads(encoder, heads):
        hidden, _ = encoder(input_ids, attention_mask, need_weights=False)  # (B, n, d_model)
    return mean_pool(hidden, attention_mask)  # (B, d_model)


def mean_cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    """Mean cosine similarity of matching rows of two ``(B, d_model)`` embedding matrices."""
    if a.shape != b.shape or a.dim() != 2:
        raise ValueError(f"a and b must both have shape (B, d_model), got {tuple(a.shape)}, {tuple(b.shape)}")
    return torch.nn.functional.cosine_similarity(a, b, dim=-1).mean().item()


def paraphrase_accuracy(embeddings: torch.Tensor) -> float:
    """Share of sentences whose paraphrase is their nearest neighbour among all the others.

    Args:
        embeddings: ``(2N, d_model)``, the first sentences of ``N`` pairs then their partners in the same
            order: sentence ``i``'s partner is ``i + N`` (and the other way round).

    Returns:
        The share of the ``2N`` sentences whose most cosine-similar other sentence is their partner
        (chance is ``1 / (2N - 1)``).
    """
    if embeddings.dim() != 2 or embeddings.size(0) % 2 or embeddings.size(0) < 2:
        raise ValueError(f"embeddings must have shape (2N, d_model), got {tuple(embeddings.shape)}")
    unit = torch.nn.functional.normalize(embeddings, dim=-1)  # (2N, d_model)
    similarity = unit @ unit.T  # (2N, d_model) @ (d_model, 2N) -> (2N, 2N)
    similarity.fill_diagonal_(-math.inf)  # a sentence is not its own neighbour
    N = embeddings.size(0) // 2
    partner = (torch.arange(2 * N) + N) % (2 * N)  # (2N,)
    return (similarity.argmax(dim=-1) == partner).float().mean().item()


def _pair_texts(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """``[a_0, ..., a_{N-1}, b_0, ..., b_{N-1}]``, the order :func:`paraphrase_accuracy` expects."""
    if not pairs or not all(len(pair) == 2 and all(isinstance(t, str) for t in pair) for pair in pairs):
        raise ValueError("pairs must be a non-empty sequence of (sentence, paraphrase) string pairs")
    return [a for a, _ in pairs] + [b for _, b in pairs]


class _Probe:
    """The sentences of ``pairs``, tokenized once, with the hidden state entering each layer cached.

    Switching off a head of layer ``l`` leaves layers ``0..l-1`` unchanged, so a candidate head is scored by
    running the layers from ``l`` on the cached input of layer ``l`` (on average half the model). The
    sentences are sorted by length and run in chunks of similar lengths, so little time goes on padding.
    """

    def __init__(self, encoder: MiniLMEncoder, pairs: Sequence[tuple[str, str]], *, chunk: int = 24) -> None:
        self.encoder = encoder
        texts = _pair_texts(pairs)
        lengths = [len(e.ids) for e in encoder.tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        self.chunks = []  # one (input_ids (b, n), attention_mask (b, n), mask (b, 1, 1, n)) per chunk
        for start in range(0, len(order), chunk):
            input_ids, attention_mask = tokenize(encoder, [texts[i] for i in order[start : start + chunk]])
            self.chunks.append((input_ids, attention_mask, key_mask(attention_mask)))
        self.unsort = torch.argsort(torch.tensor(order))  # (2N,): sorted position of each sentence
        self.reference = self.refresh()  # the intact model's embeddings, (2N, d_model)

    def refresh(self) -> torch.Tensor:
        """Recompute each layer's input under the ablations now in force; return the embeddings."""
        self.layer_inputs = []  # per chunk, the input of each layer, L x (b, n, d_model)
        pooled = []
        for input_ids, attention_mask, mask in self.chunks:
            x = self.encoder.embed(input_ids)  # (b, n, d_model)
            inputs = []
            for layer in self.encoder.layers:
                inputs.append(x)
                x, _ = layer(x, mask, need_weights=False)  # (b, n, d_model)
            self.layer_inputs.append(inputs)
            pooled.append(mean_pool(x, attention_mask))  # (b, d_model)
        return torch.cat(pooled)[self.unsort]  # (2N, d_model), in the order of _pair_texts

    def embeddings_without(self, layer: int, head: int) -> torch.Tensor:
        """Embeddings ``(2N, d_model)`` with ``(layer, head)`` also switched off."""
        pooled = []
        with ablate_heads(self.encoder.layers[layer].attn, [head]):
            for (_, attention_mask, mask), inputs in zip(self.chunks, self.layer_inputs, strict=True):
                hidden, _ = self.encoder.run_layers(
                    inputs[layer], mask, start=layer, need_weights=False
                )  # (b, n, d_model)
                pooled.append(mean_pool(hidden, attention_mask))  # (b, d_model)
        return torch.cat(pooled)[self.unsort]  # (2N, d_model)

    def score(self, embeddings: torch.Tensor) -> dict[str, float]:
        return {
            "cosine": mean_cosine(embeddings, self.reference),
            "paraphrase_accuracy": paraphrase_accuracy(embeddings),
        }


@torch.no_grad()
def single_head_ablation(
    encoder: MiniLMEncoder, pairs: Sequence[tuple[str, str]]
) -> dict[str, torch.Tensor | float]:
    """Switch off each head alone and measure the sentence embeddings of ``pairs``' sentences.

    Args:
        encoder: an encoder from :func:`mha.pretrained.load_minilm`.
        pairs: ``N`` (sentence, paraphrase) pairs.

    Returns:
        ``{"cosine": (L, h), "paraphrase_accuracy": (L, h), "intact_paraphrase_accuracy": float}``: the mean
        cosine between the ablated and intact embeddings and the paraphrase accuracy with head
        ``(layer, head)`` off, and the intact model's paraphrase accuracy.
    """
    probe = _Probe(encoder, pairs)
    L, h = len(encoder.layers), encoder.config.h
    cosine, accuracy = torch.zeros(L, h), torch.zeros(L, h)
    for layer in range(L):
        for head in range(h):
            scores = probe.score(probe.embeddings_without(layer, head))
            cosine[layer, head], accuracy[layer, head] = scores["cosine"], scores["paraphrase_accuracy"]
    return {
        "cosine": cosine,
        "paraphrase_accuracy": accuracy,
        "intact_paraphrase_accuracy": paraphrase_accuracy(probe.reference),
    }


@torch.no_grad()
def greedy_pruning(
    encoder: MiniLMEncoder, pairs: Sequence[tuple[str, str]], *, steps: int | None = None
) -> dict[str, list | int]:
    """Remove heads one at a time, each time the one whose removal hurts the embeddings least.

    The metric is the mean cosine between the pruned and the intact model's sentence embeddings of the
    ``2N`` sentences of ``pairs`` (smooth, so there are no ties); the paraphrase accuracy is recorded beside
    it. Step ``k`` (from 1) tries every one of the ``L * h - k + 1`` remaining heads, each by a partial
    forward pass (the layers from the head's own on), so pruning all ``H = L * h`` heads costs
    ``H (H + 1) / 2`` of them: 2,628 for all-MiniLM-L6-v2's 72 heads. ``passes`` counts them as they run.

    Args:
        encoder: an encoder from :func:`mha.pretrained.load_minilm`.
        pairs: ``N`` (sentence, paraphrase) pairs.
        steps: number of heads to remove; ``None`` (the default) removes all ``L * h``.

    Returns:
        ``{"removed": [(layer, head), ...], "cosine": [...], "paraphrase_accuracy": [...], "passes": int}``;
        ``removed`` has ``steps`` entries in removal order, the two curves have ``steps + 1`` entries, the
        first for the intact model (cosine 1), and ``passes`` is the number of partial forward passes run
        (candidate heads scored, over every step).
    """
    L, h = len(encoder.layers), encoder.config.h
    steps = L * h if steps is None else steps
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= L * h:
        raise ValueError(f"steps must be an int in 0..{L * h}, got {steps!r}")
    probe = _Probe(encoder, pairs)
    intact = probe.score(probe.reference)
    curve: dict[str, list] = {"removed": [], "cosine": [intact["cosine"]]}
    curve["paraphrase_accuracy"] = [intact["paraphrase_accuracy"]]
    passes = 0
    remaining = [(layer, head) for layer in range(L) for head in range(h)]
    for _ in range(steps):
        with ablate_encoder_heads(encoder, curve["removed"]):
            probe.refresh()
            scored = [(probe.score(probe.embeddings_without(*pair)), pair) for pair in remaining]
        passes += len(scored)
        best_scores, best = max(scored, key=lambda item: item[0]["cosine"])
        remaining.remove(best)
        curve["removed"].append(best)
        curve["cosine"].append(best_scores["cosine"])
        curve["paraphrase_accuracy"].append(best_scores["paraphrase_accuracy"])
    return {**curve, "passes": passes}
