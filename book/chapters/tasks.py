"""Synthetic tasks of the toy-model experiment (chapter 1 in brief, the appendix in full): a position must
look up one or several others.

Every task is a frozen :class:`Task` in :data:`TASKS`. ``task.sample(batch_size, seed=...)`` returns
integer ``tokens`` and ``targets``; the same seed always gives the same batch. Two families:

* **copy** (lookup by *position*): tokens are uniform over ``n_symbols`` symbols; at every position ``i``
  that has all its offsets inside the sequence, the targets are the tokens ``offsets`` places back,
  in order: ``targets[:, i, j] = tokens[:, i - offsets[j]]``.
* **recall** (lookup by *content*): ``n_markers`` tokens of the sequence carry a marker (A, B, C, ...) and a
  symbol; the others are unmarked symbols (noise). The last token is a query; its targets are the symbols
  of the markers in ``lookups``, in order. Markers sit at random places, so only content can find them.
  With ``split_embedding`` the data are the same, but the model embeds a token as the sum of a marker
  embedding and a symbol embedding (as a Transformer adds a word and its position), so which symbol goes
  with which marker is no longer written into one vector per token.

What a token carries is called a *symbol*, never a value: in attention, "values" are the vectors that
``W_v`` makes, and the two must not be confused.

A target of :data:`IGNORE` (``-100``, PyTorch's ``ignore_index``) means "no prediction here".

Shape legend:
    B  batch size
    n  sequence length
    k  number of lookups (targets per position), ``task.n_lookups``
    S  number of symbols, ``task.n_symbols``
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mha._checks import check_positive_int

IGNORE = -100  # target that the loss and the accuracy skip (the default ignore_index of cross_entropy)


@dataclass(frozen=True)
class Task:
    """A synthetic sequence task: which places each query must look up, and what it must output.

    Use the presets in :data:`TASKS`; the fields are here so a reader can build variants.
    """

    name: str  # key in TASKS
    family: str  # "copy" (lookup by position) or "recall" (lookup by content)
    description: str  # what the answers are, one line for tables
    seq_len: int = 16  # n, tokens per sequence (for recall, including the final query token)
    n_symbols: int = 8  # symbols a token carries and a target can take; chance accuracy is 1 / n_symbols
    offsets: tuple[int, ...] = ()  # copy: how far back each target lies, in target order
    n_markers: int = 0  # recall: marked tokens per sequence (markers 0, 1, ... = A, B, ...)
    lookups: tuple[int, ...] = ()  # recall: which markers' symbols the query must output, in order
    split_embedding: bool = False  # recall: the model embeds a token as marker + symbol, two tables added

    def __post_init__(self) -> None:
        if self.family == "copy":
            if not self.offsets or min(self.offsets) < 1 or max(self.offsets) >= self.seq_len:
                raise ValueError(f"offsets must lie in 1..seq_len-1={self.seq_len - 1}, got {self.offsets}")
        elif self.family == "recall":
            if not 1 <= self.n_markers <= self.seq_len - 1:
                raise ValueError(f"n_markers must lie in 1..seq_len-1, got {self.n_markers}")
            if not self.lookups or not all(0 <= m < self.n_markers for m in self.lookups):
                raise ValueError(f"lookups must name markers 0..{self.n_markers - 1}, got {self.lookups}")
        else:
            raise ValueError(f"family must be 'copy' or 'recall', got {self.family!r}")
        if self.split_embedding and self.family != "recall":
            raise ValueError("split_embedding applies to recall tasks only")

    @property
    def n_lookups(self) -> int:
        """k: how many separate places each predicting position must read."""
        return len(self.offsets) if self.family == "copy" else len(self.lookups)

    @property
    def vocab_size(self) -> int:
        """Number of distinct input tokens: the symbols, plus (recall) marked symbols and the query token."""
        return self.n_symbols if self.family == "copy" else (self.n_markers + 1) * self.n_symbols + 1

    @property
    def query_token(self) -> int | None:
        """The id of the recall task's query token (the last one in the vocabulary); ``None`` for copy."""
        return self.vocab_size - 1 if self.family == "recall" else None

    def token_names(self) -> list[str]:
        """A readable name per token id: ``"5"`` for a symbol, ``"B5"`` for symbol 5 marked B, ``"?"``."""
        names = [str(s) for s in range(self.n_symbols)]
        if self.family == "recall":
            for m in range(self.n_markers):
                names += [f"{chr(ord('A') + m)}{s}" for s in range(self.n_symbols)]
            names.append("?")
        return names

    def sample(self, batch_size: int, *, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Draw a batch; the same ``seed`` always gives the same batch, on any machine.

        Args:
            batch_size: B, the number of sequences.
            seed: seed of the private random generator (the global torch seed is not touched).

        Returns:
            ``(tokens, targets)``: ``tokens`` of shape ``(B, n)`` with ids in ``0..vocab_size-1`` and
            ``targets`` of shape ``(B, n, k)`` with symbols in ``0..n_symbols-1`` or :data:`IGNORE`.
        """
        check_positive_int("batch_size", batch_size)
        gen = torch.Generator().manual_seed(seed)
        B, n, S = batch_size, self.seq_len, self.n_symbols
        tokens = torch.randint(S, (B, n), generator=gen)  # (B, n), unmarked symbols
        targets = torch.full((B, n, self.n_lookups), IGNORE, dtype=torch.long)  # (B, n, k)
        if self.family == "copy":
            start = max(self.offsets)
            for j, offset in enumerate(self.offsets):
                targets[:, start:, j] = tokens[:, start - offset : n - offset]
            return tokens, targets
        # recall: put the markers at distinct random places before the final query token.
        places = torch.rand(B, n - 1, generator=gen).argsort(dim=1)[:, : self.n_markers]  # (B, n_markers)
        symbols = tokens.gather(1, places)  # (B, n_markers)
        marked = symbols + S * (1 + torch.arange(self.n_markers))  # (B, n_markers), ids of "A5", "B2", ...
        tokens.scatter_(1, places, marked)
        tokens[:, -1] = self.query_token
        targets[:, -1, :] = symbols[:, list(self.lookups)]  # (B, k)
        return tokens, targets


TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        Task("copy-1", "copy", "the token 3 back (control: one lookup by position)", offsets=(3,)),
        Task(
            "copy-3",
            "copy",
            "the tokens 1, 3 and 6 back, in order (three lookups by position)",
            offsets=(1, 3, 6),
        ),
        Task(
            "recall-1",
            "recall",
            "the symbol marked A (control: one lookup by content; B, C distract)",
            n_markers=3,
            lookups=(0,),
        ),
        Task(
            "recall-3",
            "recall",
            "the symbols marked A, B and C, in order (three lookups by content)",
            n_markers=3,
            lookups=(0, 1, 2),
        ),
        Task(
            "recall-3-split",
            "recall",
            "as recall-3, but each token embedded as marker + symbol (two tables added)",
            n_markers=3,
            lookups=(0, 1, 2),
            split_embedding=True,
        ),
    )
}
"""The chapter's tasks. Each ``-1`` task is a control that needs one lookup; its ``-3`` twins need three."""
