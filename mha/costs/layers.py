"""The kinds of layer in the decoders of 2025–2026, and what each keeps in memory per sequence.

A decoder of 2025 has one kind of attention layer, or local and global ones; the open models of late 2025
and 2026 mix kinds: Gated DeltaNet beside full attention (Qwen3-Next, Qwen3.5), Kimi Delta Attention beside
latent attention (Kimi Linear), latent attention with a lightning indexer (DeepSeek-V3.2, GLM-5), compressed
attention (DeepSeek-V4), layers that read another layer's cache (Gemma 4 E2B). :class:`Layer` is one layer
as its cache sees it; :attr:`mha.costs.ModelConfig.layers` lists them, and :meth:`Layer.cache_elements` is
the one rule that :func:`mha.costs.model_kv_cache_bytes` sums.

Shape legend:
    n        tokens of the sequence so far (the context)
    h_kv     key/value heads of an attention layer; d_k their width
    w        the tokens a sliding-window, chunked or compressed layer keeps uncompressed
    m        a compressed layer's ratio: one entry per m tokens
    d_c, d_r latent attention: widths of the cached latent and rotary key
    d_i      width of the lightning indexer's key
    h_k, h_v linear attention: key heads and value heads, of widths d_k and d_v
"""

from __future__ import annotations

from dataclasses import dataclass

from mha._checks import check_positive_int

# full: caches every token; sliding: the last w; chunked: the tokens of the current chunk of w (at most w);
# latent: one latent per token (DeepSeek's MLA); compressed: a window of w plus one entry per m tokens
# (DeepSeek-V4); linear: a state of fixed size (Gated DeltaNet, Kimi Delta Attention).
LAYER_KINDS = ("full", "sliding", "chunked", "latent", "compressed", "linear")
LINEAR_RULES = ("gated delta", "kimi delta")  # Gated DeltaNet (Qwen3-Next, Qwen3.5), KDA (Kimi Linear)


@dataclass(frozen=True)
class Indexer:
    """DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5, DeepSeek-V4): it scores every
    cached token with ``heads`` small heads and lets each query attend to its ``top_k`` best; it caches one
    key of width ``dim`` per token (per compressed entry in DeepSeek-V4), shared by its heads.

    The names are those of a Hugging Face ``config.json``: ``index_n_heads``, ``index_head_dim``,
    ``index_topk``; :class:`mha.MultiHeadLatentAttention` takes them as ``index_heads``, ``index_dim`` and
    ``top_k``.
    """

    heads: int  # index_n_heads: the indexer's query heads
    dim: int  # index_head_dim: the width d_i of its queries and of the one key it caches per token
    top_k: int  # index_topk: keys each query attends to
    ratio: int | None = None  # compressed layers: only those of this ratio have one (DeepSeek-V4: 4);
    # None: every latent layer has one (DeepSeek-V3.2, GLM-5)

    def __post_init__(self) -> None:
        for name in ("heads", "dim", "top_k"):
            check_positive_int(f"indexer {name}", getattr(self, name))
        if self.ratio is not None:
            check_positive_int("indexer ratio", self.ratio)


@dataclass(frozen=True)
class LinearAttention:
    """The linear-attention layers of a hybrid: a state of ``h_v`` matrices ``d_k x d_v`` and a short causal
    convolution over the projections ``[q | k | v]`` (``2 h_k d_k + h_v d_v`` channels), whose last
    ``kernel - 1`` inputs are kept (:class:`mha.linear.RecurrentState` holds the two).

    The names follow the configs: Qwen's ``linear_num_key_heads``, ``linear_num_value_heads``,
    ``linear_key_head_dim``, ``linear_value_head_dim``, ``linear_conv_kernel_dim``; Kimi Linear's
    ``linear_attn_config`` (``num_heads``, ``head_dim``, ``short_conv_kernel_size``).
    """

    rule: str  # one of LINEAR_RULES
    key_heads: int  # h_k: query and key heads
    value_heads: int  # h_v: value heads, each with its own state matrix
    key_dim: int  # d_k: width of a query and key head
    value_dim: int  # d_v: width of a value head
    kernel: int  # the causal convolution's length

    def __post_init__(self) -> None:
        if self.rule not in LINEAR_RULES:
            raise ValueError(f"linear rule must be one of {LINEAR_RULES}, got {self.rule!r}")
        for name in ("key_heads", "value_heads", "key_dim", "value_dim", "kernel"):
            check_positive_int(f"linear {name}", getattr(self, name))
        if self.value_heads % self.key_heads:
            raise ValueError(
                f"linear value_heads={self.value_heads} must be a multiple of key_heads={self.key_heads}"
            )

    @property
    def state_elements(self) -> int:
        """Elements of one sequence's state: ``h_v d_k d_v + (kernel - 1)(2 h_k d_k + h_v d_v)``."""
        channels = 2 * self.key_heads * self.key_dim + self.value_heads * self.value_dim  # C_conv
        return self.value_heads * self.key_dim * self.value_dim + (self.kernel - 1) * channels


@dataclass(frozen=True)
class Layer:
    """One layer of a decoder as its cache sees it, an item of :attr:`mha.costs.ModelConfig.layers`.

    Attention layers (full, sliding, chunked, compressed) cache ``width = 2 h_kv d_k`` values per token, or
    ``h_kv d_k`` where the keys are the values (``k_eq_v``: Gemma 4's full layers, DeepSeek-V4): the least
    such a layer must keep, its key projection, from which it can recompute its keys and values
    (:class:`mha.multihead.KeysAsValues` and transformers keep the normed keys and values apart, so that a
    decoding step works on the new token only: ``2 h_kv d_k``); a latent
    layer ``d_c + d_r``. An indexer adds ``d_i`` per cached token (per compressed entry). A linear layer keeps
    ``state`` values whatever the context. A layer that reads another layer's cache (``shares``) keeps
    nothing of its own.
    """

    kind: str  # one of LAYER_KINDS
    width: int  # values cached per token (per compressed entry, where keys are the values: h_kv d_k)
    kv_heads: int | None = None  # attention layers: h_kv
    head_dim: int | None = None  # attention layers: d_k
    k_eq_v: bool = False  # attention layers: the keys are the values, counted as one tensor per token
    window: int | None = None  # sliding: the window; chunked: the chunk; compressed: the uncompressed tail
    ratio: int | None = None  # compressed: one entry per ratio tokens
    index_dim: int | None = None  # with an indexer: d_i, the width of its cached key
    state: int = 0  # linear: elements of the state (LinearAttention.state_elements)
    shares: int | None = None  # the layer (0-based) whose cache this one reads; None: its own

    def __post_init__(self) -> None:
        if self.kind not in LAYER_KINDS:
            raise ValueError(f"layer kind must be one of {LAYER_KINDS}, got {self.kind!r}")
        if (self.window is not None) != (self.kind in ("sliding", "chunked", "compressed")):
            raise ValueError(f"a {self.kind} layer {'needs' if self.window is None else 'takes no'} window")
        if (self.ratio is not None) != (self.kind == "compressed"):
            raise ValueError(f"a {self.kind} layer {'needs' if self.ratio is None else 'takes no'} ratio")

    def cache_elements(self, context: int) -> int:
        """Values this layer keeps for one sequence of ``context`` tokens (multiply by the batch and the
        element size for bytes):

        - full: ``n width``; sliding and chunked: ``min(n, w) width`` (a chunk counted as a window of its
          length, its worst case: the last token of a chunk sees all of it);
        - latent: ``n (d_c + d_r + d_i)``, ``d_i = 0`` without an indexer;
        - compressed: ``min(n, w) width`` for the uncompressed window, plus ``floor(n / m) (width + d_i)``
          for the compressed entries. The tail not yet compressed (under ``m`` tokens) is not counted
          again: its tokens are the last ones, inside the window, as ``m <= w``;
        - linear: ``state``, whatever ``n``;
        - a layer that reads another's cache: 0.
        """
        n = check_positive_int("context", context)
        if self.shares is not None:
            return 0
        index = self.index_dim or 0
        if self.kind == "linear":
            return self.state
        if self.kind in ("full", "latent"):
            return n * (self.width + index)
        tail = min(n, self.window) * self.width
        return tail if self.kind != "compressed" else tail + n // self.ratio * (self.width + index)

    def global_elements(self, context: int) -> int:
        """What :meth:`cache_elements` would be if the layer cached every token at its full width: a
        sliding, chunked or compressed layer as a full layer of the same heads; the others unchanged."""
        n = check_positive_int("context", context)
        if self.shares is None and self.kind in ("sliding", "chunked", "compressed"):
            return n * self.width
        return self.cache_elements(n)

    @property
    def label(self) -> str:
        """The layer in a few words, the same for layers whose caches grow alike: ``"full, 2 x 8 x 128"``,
        ``"sliding 1024, 2 x 16 x 256"``, ``"latent 576"``, ``"linear, state 1,179,648"``."""
        if self.kind == "linear":
            text = f"linear, state {self.state:,}"
        elif self.kind == "latent":
            text = f"latent {self.width}" + (f" + indexer {self.index_dim}" if self.index_dim else "")
        else:
            kv = f"{'1' if self.k_eq_v else '2'} x {self.kv_heads} x {self.head_dim}"
            span = {"full": "full", "sliding": f"sliding {self.window}", "chunked": f"chunked {self.window}"}
            text = span.get(self.kind) or f"window {self.window} + 1 per {self.ratio}"
            text += f", {kv}" + (f" + indexer {self.index_dim}" if self.index_dim else "")
        return text if self.shares is None else f"{text}, reads an earlier layer's cache"
