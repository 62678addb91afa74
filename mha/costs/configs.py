"""Attention shapes of well-known Transformers, each with the primary source it was checked against.

One source of truth for the chapter "Typical configurations": the numbers in its table, its plots and its
calculator are all read from :data:`MODEL_CONFIGS`. Only the attention-relevant hyperparameters are kept,
with what the key/value cache needs: the head width where a model sets it apart from ``d_model / h`` (most
models of 2025 do), the sliding window of local layers and the pattern of local and global layers, and the
widths that latent attention caches instead of keys and values. The models of late 2025 and 2026 mix kinds
of layer (linear, latent with an indexer, compressed, layers sharing a cache): ``layer_types`` and the
fields each kind needs describe them, and :attr:`ModelConfig.layers` lists every layer as its cache sees it
(:mod:`mha.costs.layers`).

Shape legend:
    d_model  model width
    h        number of query heads
    h_kv     number of key/value heads (``n_kv_heads``)
    d_k      width of each head: d_model / h unless a model sets it apart (``head_dim``)
    w        the window of a local layer: it attends to (and caches) the last w tokens only
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field, replace
from functools import cached_property

from mha._checks import check_heads, check_positive_int, check_positive_number
from mha.costs.layers import LAYER_KINDS, Indexer, Layer, LinearAttention
from mha.costs.releases import RELEASE_CUT, RELEASES, Release
from mha.families import GEMMA3, GEMMA4, GPT_OSS, LLAMA, LLAMA4, QWEN3, QWEN3_NEXT, Family

KINDS = ("encoder-decoder", "encoder", "decoder")
# how positions enter, see ModelConfig.positions; "none": no positions in any layer (Kimi Linear: NoPE)
POSITIONS = ("sinusoidal", "learned", "relative", "rotary", "none")
ROPE_STYLES = ("half-split", "interleaved", "proportional")  # as mha.MultiHeadAttention's rope_style
QK_NORMS = ("per head", "whole projection")  # where QK-norm normalises, see ModelConfig.qk_norm
ROPE_SCALINGS = ("linear", "llama3", "yarn")  # transformers' rope_type of the scalings the models ship


class _FromFamily:
    """The default of the fields a family states (``ModelConfig.family``)."""

    def __repr__(self) -> str:
        return "FAMILY"


FAMILY = _FromFamily()  # a field left to the model's family (none without one)


@dataclass(frozen=True)
class RopeScaling:
    """How a rotary model stretches its angles to reach beyond the length it was first trained at.

    The names are those of a Hugging Face ``config.json``'s ``rope_scaling`` (``rope_parameters`` in
    transformers 5): ``kind`` is its ``rope_type``, ``original_context`` its
    ``original_max_position_embeddings``.

    - ``"linear"``: Position Interpolation (Chen et al. 2023): every angle divided by ``factor``.
    - ``"llama3"``: pairs whose wavelength is below ``original_context / high_freq_factor`` keep their angle,
      those above ``original_context / low_freq_factor`` are divided by ``factor``, a blend in between.
    - ``"yarn"``: YaRN (Peng et al. 2023): the same split by how many turns a pair makes in
      ``original_context`` tokens (more than ``beta_fast``: kept; fewer than ``beta_slow``: divided by
      ``factor``), plus a temperature on the scores.

    Raises:
        TypeError, ValueError: a field of the wrong type or value; the message names the field.
    """

    kind: str  # transformers' rope_type: "linear", "llama3" or "yarn"
    factor: float  # s: how many times the angles of the slowest pairs are divided
    original_context: int | None  # length trained at before scaling; None: the config gives none
    low_freq_factor: float | None = None  # llama3: pairs slower than original_context / this are divided
    high_freq_factor: float | None = None  # llama3: pairs faster than original_context / this are kept
    beta_fast: float | None = None  # yarn: pairs with more turns than this in original_context are kept
    beta_slow: float | None = None  # yarn: pairs with fewer turns are divided (None: the paper's 32 and 1)
    truncate: bool | None = None  # yarn: round the blend's ends to whole pairs (transformers' default True)
    in_config: bool = True  # shipped in config.json; False: recommended by the model card only
    layers: str | None = None  # the one kind of layer it stretches ("full": Gemma 3, OLMo 3), the others
    # turning unscaled; None: every rotary layer

    def __post_init__(self) -> None:
        if self.kind not in ROPE_SCALINGS:
            raise ValueError(f"rope_scaling kind must be one of {ROPE_SCALINGS}, got {self.kind!r}")
        check_positive_number("rope_scaling factor", self.factor)
        if self.original_context is not None:
            check_positive_int("rope_scaling original_context", self.original_context)
        llama3 = (self.low_freq_factor, self.high_freq_factor)
        yarn = (self.beta_fast, self.beta_slow, self.truncate)
        if self.kind != "llama3" and any(v is not None for v in llama3):
            raise ValueError(
                f"low_freq_factor and high_freq_factor belong to llama3 scaling, not {self.kind}"
            )
        if self.kind != "yarn" and any(v is not None for v in yarn):
            raise ValueError(f"beta_fast, beta_slow and truncate belong to yarn scaling, not {self.kind}")
        if self.kind == "llama3":
            if self.original_context is None or None in llama3:
                raise ValueError(
                    "llama3 scaling needs original_context, low_freq_factor and high_freq_factor"
                )
            low = check_positive_number("low_freq_factor", self.low_freq_factor)
            if not check_positive_number("high_freq_factor", self.high_freq_factor) >= low:
                raise ValueError(f"high_freq_factor must be at least low_freq_factor={low}")
        if self.kind == "yarn":
            if self.original_context is None:
                raise ValueError("yarn scaling needs original_context")
            for name in ("beta_fast", "beta_slow"):
                if getattr(self, name) is not None:
                    check_positive_number(name, getattr(self, name))
        if not isinstance(self.in_config, bool):
            raise TypeError(f"in_config must be a bool, got {type(self.in_config).__name__}")
        if self.layers is not None and self.layers not in LAYER_KINDS:
            raise ValueError(f"rope_scaling layers must be one of {LAYER_KINDS} or None, got {self.layers!r}")

    @property
    def options(self) -> dict[str, object]:
        """The scaling's fields that are set, by name: ``kind``, ``factor`` and those of its kind."""
        names = ("kind", "factor", "original_context", "low_freq_factor", "high_freq_factor", "beta_fast",
                 "beta_slow", "truncate")  # fmt: skip
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}

    def __str__(self) -> str:
        """Short, for a table: ``"llama3 x8 from 8192"``, ``"yarn x4 from 32768 (card)"``, ``"yarn x8 from
        8192, global layers"`` (the full layers only; the table's word for them, as in ``layer kinds``)."""
        factor = f"{self.factor:g}"
        text = (
            self.kind
            + f" x{factor}"
            + ("" if self.original_context is None else f" from {self.original_context}")
        )
        if self.layers is not None:
            text += f", {'global' if self.layers == 'full' else self.layers} layers"
        return text if self.in_config else f"{text} (card)"


@dataclass(frozen=True)
class ModelConfig:
    """The attention hyperparameters of one published model, and the shape of its key/value cache.

    A layer is *global* (it attends to, and caches, every earlier token) or *local* (only the last
    ``window`` tokens: a sliding window, or Llama 4's chunks, counted the same way for the cache). Without
    ``window`` every layer is global; with ``window`` and no ``global_period`` every layer is local
    (Mistral 7B); with both, layer ``i`` (0-based) is global iff ``(i + 1) % global_period == 0``, as the
    ``layer_types`` of Gemma 2 and 3, gpt-oss and Llama 4 say. Latent attention (DeepSeek-V3) caches one
    latent of width ``kv_latent`` and one rotary key of width ``rope_dim`` per token and layer, shared by
    all heads, instead of keys and values per head: it has no ``n_kv_heads``.

    **Two context lengths.** ``trained_context`` is the longest sequence of any training phase, context
    extension included (Llama 3.1: 8K, then six stages up to 128K; DeepSeek-V3: 4K, 32K, then 128K): the
    cache table's default context, the dots of the cache figure and the calculator's note read it.
    ``max_context`` is the limit the published configuration sets (``max_position_embeddings``,
    ``n_positions``): learned positions cannot go past it, while for rotary models it is where the
    shipped scaling stops (DeepSeek-V3: 163,840 = 40 x 4,096) or a serving budget (Qwen3: 40,960). The
    model table shows both. Where a model has no such limit (sinusoidal or relative positions) or
    publishes no configuration, it is ``None`` and ``source`` says which.

    **Kinds of layer.** Where a model's layers differ beyond local and global (Qwen3-Next's Gated DeltaNet
    beside full attention, DeepSeek-V4's compressed layers, Gemma 4's two head widths and shared caches),
    ``layer_types`` names each layer's kind and the per-kind fields give the rest; ``n_kv_heads`` and
    ``head_dim`` then describe the full-attention layers (DeepSeek-V4: its one key/value head of 512).
    :attr:`layers` turns all of it into one :class:`mha.costs.layers.Layer` per layer. A field that the
    sources could not confirm is marked UNVERIFIED in ``source`` and left ``None``, never a library default.

    **Positions and norms** (each stated in ``source``): ``positions`` is how positions enter; rotary
    models give their base ``rope_theta`` (``local_rope_theta`` for local layers where it differs) and the
    :class:`RopeScaling` they ship; ``nope_period`` marks layers without positions; ``qk_norm``,
    ``softcap`` and ``sinks`` are the options of :class:`mha.MultiHeadAttention` of those names.

    Raises:
        TypeError, ValueError: a field of the wrong type or value; the message names the model and the field.
    """

    name: str  # the model's usual name, e.g. "GPT-2 XL"
    d_model: int  # width of the residual stream, the input and output of every attention layer
    h: int  # query heads per attention layer
    n_kv_heads: int | None  # key/value heads: h MHA, 1 < n_kv_heads < h GQA, 1 MQA; None: latent attention
    n_layers: int  # Transformer blocks per stack (encoder-decoder models have this many in each stack)
    trained_context: int | None  # longest sequences of any training phase, in tokens; None: not stated
    max_context: int | None  # the published config's limit (max_position_embeddings ...); None: none
    kind: str  # "decoder" (causal, uses a KV cache), "encoder", or "encoder-decoder"
    source: str  # where each number was checked: paper and table/section, or config-file URL
    head_dim: int | None = None  # width d_k of each head; None: d_model / h (then h must divide d_model)
    window: int | None = None  # tokens a local layer attends to and caches; None: every layer is global
    global_period: int | None = None  # with window: layer i is global iff (i + 1) % period == 0; None: none
    kv_latent: int | None = None  # latent attention: width of the cached key/value latent (kv_lora_rank)
    rope_dim: int | None = None  # latent attention: width of the cached rotary key (qk_rope_head_dim)
    q_latent: int | None = None  # latent attention: width of the query latent (q_lora_rank); None: none
    positions: str = field(default="", kw_only=True)  # one of POSITIONS: added sinusoids, learned
    # embeddings, relative biases (T5) or rotary embeddings turning each head's queries and keys
    rope_theta: float | None = field(default=None, kw_only=True)  # rotary base b; None: none or unpublished
    local_rope_theta: float | None = field(default=None, kw_only=True)  # base of local layers, if different
    rope_scaling: RopeScaling | None = field(default=None, kw_only=True)  # the shipped scaling; None: none
    nope_period: int | None = field(default=None, kw_only=True)  # layer i has no positions iff (i+1) % p == 0
    qk_norm: str | None = field(default=FAMILY, kw_only=True)  # one of QK_NORMS; None: no QK-norm
    softcap: float | None = field(default=None, kw_only=True)  # attention-logit soft-cap c; None: none
    sinks: bool = field(default=FAMILY, kw_only=True)  # a learned sink logit per head (gpt-oss)
    rope_fraction: float | None = field(default=None, kw_only=True)  # share of a head that turns; None: all
    rope_style: str | None = field(default=FAMILY, kw_only=True)  # one of ROPE_STYLES where the source says
    gate: bool = field(default=FAMILY, kw_only=True)  # an output gate sigmoid(x W_g) on the attention layers
    # The kinds of layer (mha.costs.layers), for models that mix them:
    layer_types: tuple[str, ...] | None = field(default=None, kw_only=True)  # per layer, one of LAYER_KINDS;
    # None: from window and global_period (sliding, or chunked, and full), or all latent with kv_latent
    chunked: bool = field(default=FAMILY, kw_only=True)  # the local layers are chunks of window (Llama 4)
    local_kv_heads: int | None = field(default=None, kw_only=True)  # sliding/chunked layers' h_kv if not
    # n_kv_heads (Gemma 4 31B: 16, its full layers 4)
    local_head_dim: int | None = field(default=None, kw_only=True)  # their d_k if not head_dim (Gemma 4)
    k_eq_v: bool = field(default=FAMILY, kw_only=True)  # keys are the values in the layers of n_kv_heads x
    # head_dim (Gemma 4's full layers, all of DeepSeek-V4's): counted as one tensor per token, the least such
    # a layer keeps (mha's KeysAsValues and transformers keep the normed keys and values apart, two)
    v_head_dim: int | None = field(default=None, kw_only=True)  # latent: a head's value width if not head_dim
    compress_ratios: tuple[int, ...] | None = field(default=None, kw_only=True)  # per layer, m of a
    # compressed layer, 0 for the others (DeepSeek-V4's compress_ratios without its MTP entry)
    indexer: Indexer | None = field(default=None, kw_only=True)  # DeepSeek Sparse Attention's indexer
    linear: LinearAttention | None = field(default=None, kw_only=True)  # the "linear" layers' shapes
    kv_shared_from: tuple[int | None, ...] | None = field(default=None, kw_only=True)  # per layer, the
    # layer whose cache it reads (Gemma 4 E2B's last 20), None: its own
    mtp_layers: int | None = field(default=None, kw_only=True)  # multi-token-prediction layers after the
    # n_layers (not counted in the cache); None: none stated
    family: Family | None = field(default=None, kw_only=True)  # the family of mha.families whose parts it
    # has: the fields above whose default is FAMILY (qk_norm, sinks, gate, rope_style, k_eq_v, chunked) are
    # then the family's, unless the model differs from its family and says so (Llama 4 Maverick: no QK-norm)

    def __post_init__(self) -> None:
        try:
            self._fill_family()
            self._check()
            self._check_positions()
            self._check_layers()
        except (TypeError, ValueError) as error:  # the same checks as everywhere, naming the model
            raise type(error)(f"{self.name}: {error}") from None
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {KINDS}, got {self.kind!r}")
        if not self.source.strip():
            raise ValueError(f"{self.name}: every config needs a source")

    def _fill_family(self) -> None:
        """The fields left at ``FAMILY``: the family's (one vocabulary with ``from_transformers``), or,
        without a family, none (``None``, ``False``)."""
        f = self.family
        if f is not None and not isinstance(f, Family):
            raise TypeError(f"family must be an mha.families.Family, got {type(f).__name__}")
        filled = {"qk_norm": None, "sinks": False, "gate": False, "rope_style": None, "k_eq_v": False}
        filled["chunked"] = False
        if f is not None:
            filled = {"qk_norm": None if f.qk_norm is None else "per head", "sinks": f.sinks, "gate": f.gate}
            filled.update(rope_style=f.rope_style, k_eq_v=f.keys_as_values, chunked=f.chunked)
        for name, value in filled.items():
            if getattr(self, name) is FAMILY:
                object.__setattr__(self, name, value)

    def _check(self) -> None:
        latent = self.kv_latent is not None
        if latent and self.n_kv_heads is not None:
            raise ValueError(
                f"n_kv_heads must be None with kv_latent={self.kv_latent}: latent attention caches one "
                f"latent shared by all heads, got n_kv_heads={self.n_kv_heads}"
            )
        if not latent and self.n_kv_heads is None:
            raise ValueError("n_kv_heads must be a positive int (None only with kv_latent, latent attention)")
        if not latent and (self.rope_dim is not None or self.q_latent is not None):
            raise ValueError("rope_dim and q_latent belong to latent attention: give kv_latent too")
        if latent:
            check_positive_int("kv_latent", self.kv_latent)
            if self.rope_dim is not None:
                check_positive_int("rope_dim", self.rope_dim)
            if self.q_latent is not None:
                check_positive_int("q_latent", self.q_latent)
        _, _, d_k = check_heads(self.d_model, self.h, self.n_kv_heads, head_dim=self.head_dim)
        object.__setattr__(self, "head_dim", d_k)  # the old derivation, d_model / h, where none is given
        check_positive_int("n_layers", self.n_layers)
        for name in ("trained_context", "max_context"):
            if getattr(self, name) is not None:
                check_positive_int(name, getattr(self, name))
        if None not in (self.trained_context, self.max_context) and self.trained_context > self.max_context:
            raise ValueError(
                f"trained_context={self.trained_context} must not exceed max_context={self.max_context}"
            )
        if self.window is not None:
            check_positive_int("window", self.window)
            if self.max_context is not None and self.window > self.max_context:
                raise ValueError(f"window={self.window} must not exceed the context limit {self.max_context}")
        if self.global_period is not None:
            if self.window is None:
                raise ValueError(f"global_period={self.global_period} needs a window for the local layers")
            check_positive_int("global_period", self.global_period)
            if not 2 <= self.global_period <= self.n_layers:
                raise ValueError(
                    f"global_period must be in 2..n_layers={self.n_layers} (one global layer in every "
                    f"global_period), got {self.global_period}"
                )

    def _check_positions(self) -> None:
        if self.positions not in POSITIONS:
            raise ValueError(f"positions must be one of {POSITIONS}, got {self.positions!r}")
        rotary = self.positions == "rotary"
        for name in ("rope_theta", "local_rope_theta", "rope_scaling", "nope_period"):
            if not rotary and getattr(self, name) is not None:
                raise ValueError(f"{name} needs rotary positions, got positions={self.positions!r}")
        for name in ("rope_theta", "local_rope_theta", "softcap"):
            if getattr(self, name) is not None:
                check_positive_number(name, getattr(self, name))
        if self.local_rope_theta is not None and self.window is None:
            raise ValueError("local_rope_theta needs local layers (a window)")
        if self.rope_scaling is not None and not isinstance(self.rope_scaling, RopeScaling):
            raise TypeError(f"rope_scaling must be a RopeScaling, got {type(self.rope_scaling).__name__}")
        only = None if self.rope_scaling is None else self.rope_scaling.layers
        if only is not None and (only not in self.layer_kinds or len(set(self.layer_kinds)) < 2):
            raise ValueError(f"rope_scaling layers={only!r} must be one of the model's kinds of layer")
        if self.nope_period is not None and check_positive_int("nope_period", self.nope_period) < 2:
            raise ValueError(f"nope_period must be at least 2, got {self.nope_period}")
        if self.qk_norm is not None and self.qk_norm not in QK_NORMS:
            raise ValueError(f"qk_norm must be one of {QK_NORMS} or None, got {self.qk_norm!r}")
        if not isinstance(self.sinks, bool):
            raise TypeError(f"sinks must be a bool, got {type(self.sinks).__name__}")
        if self.rope_fraction is not None:
            if not rotary:
                raise ValueError(f"rope_fraction needs rotary positions, got positions={self.positions!r}")
            if not 0 < check_positive_number("rope_fraction", self.rope_fraction) <= 1:
                raise ValueError(f"rope_fraction must lie in (0, 1], got {self.rope_fraction}")
        if self.rope_style is not None:
            if not rotary:
                raise ValueError(f"rope_style needs rotary positions, got positions={self.positions!r}")
            if self.rope_style not in ROPE_STYLES:
                raise ValueError(f"rope_style must be one of {ROPE_STYLES} or None, got {self.rope_style!r}")

    def _check_layers(self) -> None:
        for name in ("gate", "chunked", "k_eq_v"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {type(getattr(self, name)).__name__}")
        for name in ("local_kv_heads", "local_head_dim", "v_head_dim"):
            if getattr(self, name) is not None:
                check_positive_int(name, getattr(self, name))
        if self.mtp_layers is not None and (
            isinstance(self.mtp_layers, bool) or not isinstance(self.mtp_layers, int) or self.mtp_layers < 0
        ):
            raise ValueError(f"mtp_layers must be a non-negative int or None, got {self.mtp_layers!r}")
        for name, kind in (("indexer", Indexer), ("linear", LinearAttention)):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), kind):
                raise TypeError(f"{name} must be a {kind.__name__}, got {type(getattr(self, name)).__name__}")
        L, types = self.n_layers, self.layer_types
        if types is not None:
            if not isinstance(types, tuple) or len(types) != L:
                raise ValueError(f"layer_types must be a tuple of n_layers={L} kinds, got {types!r}")
            if unknown := sorted(set(types) - set(LAYER_KINDS)):
                raise ValueError(f"layer_types must hold kinds of {LAYER_KINDS}, got {unknown}")
            if self.global_period is not None or self.chunked:
                raise ValueError("layer_types says which layers are full: no global_period or chunked")
        kinds = set(self.layer_kinds)
        if self.chunked and self.window is None:
            raise ValueError("chunked needs a window, the chunk's length")
        if kinds & {"sliding", "chunked", "compressed"} and self.window is None:
            raise ValueError("sliding, chunked and compressed layers need a window")
        if kinds & {"full", "sliding", "chunked", "compressed"} and self.n_kv_heads is None:
            raise ValueError(f"attention layers {sorted(kinds - {'latent', 'linear'})} need n_kv_heads")
        if "latent" in kinds and self.kv_latent is None:
            raise ValueError("latent layers need kv_latent")
        if self.v_head_dim is not None and self.kv_latent is None:
            raise ValueError("v_head_dim belongs to latent attention: give kv_latent too")
        if (self.linear is None) == ("linear" in kinds):
            raise ValueError("linear layers and the linear field (their shapes) go together")
        if (self.compress_ratios is None) == ("compressed" in kinds):
            raise ValueError("compressed layers and compress_ratios go together")
        if self.k_eq_v and self.n_kv_heads is None:
            raise ValueError("k_eq_v needs attention layers with key/value heads (n_kv_heads)")
        if (self.local_kv_heads or self.local_head_dim) and not kinds & {"sliding", "chunked"}:
            raise ValueError("local_kv_heads and local_head_dim need sliding or chunked layers")
        if self.local_kv_heads is not None and self.h % self.local_kv_heads:
            raise ValueError(f"local_kv_heads={self.local_kv_heads} must divide h={self.h}")
        if self.compress_ratios is not None:
            ratios = self.compress_ratios
            if not isinstance(ratios, tuple) or len(ratios) != L:
                raise ValueError(f"compress_ratios must be a tuple of n_layers={L} ints, got {ratios!r}")
            for i, (kind, m) in enumerate(zip(self.layer_kinds, ratios, strict=True)):
                valid = not isinstance(m, bool) and isinstance(m, int) and m >= 0
                if not valid or (m > 0) != (kind == "compressed"):
                    raise ValueError(
                        f"compress_ratios[{i}] must be > 0 iff layer {i} is compressed, got {m!r}"
                    )
                if m > self.window:
                    raise ValueError(f"compress_ratios[{i}]={m} must not exceed the window {self.window}")
        if self.indexer is not None:
            ratio = self.indexer.ratio
            if ratio is None and "latent" not in kinds:
                raise ValueError("an indexer without a ratio belongs to latent layers")
            if ratio is not None and ratio not in (self.compress_ratios or ()):
                raise ValueError(f"indexer ratio={ratio} is no layer's compression ratio")
        if self.kv_shared_from is not None:
            self._check_sharing()

    def _check_sharing(self) -> None:
        shared = self.kv_shared_from
        if not isinstance(shared, tuple) or len(shared) != self.n_layers:
            raise ValueError(f"kv_shared_from must be a tuple of n_layers={self.n_layers} entries")
        own = self._layers(None)
        for i, j in enumerate(shared):
            if j is None:
                continue
            if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < i or shared[j] is not None:
                raise ValueError(
                    f"kv_shared_from[{i}] must be an earlier layer with a cache of its own, got {j!r}"
                )
            if (own[j].kind, own[j].width, own[j].window) != (own[i].kind, own[i].width, own[i].window):
                raise ValueError(
                    f"kv_shared_from[{i}]={j}: layer {j} is a {own[j].label}, layer {i} a {own[i].label}"
                )

    @property
    def released(self) -> Release | None:
        """When the model was first published, and the source (:data:`mha.costs.releases.RELEASES`);
        ``None`` for a config not among the published models."""
        return RELEASES.get(self.name)

    @property
    def d_k(self) -> int:
        """Width of one head, ``head_dim`` (``d_model // h`` unless the model sets it apart)."""
        return self.head_dim

    @property
    def rope_width(self) -> int | None:
        """Width of the part of a head that rotary positions turn: ``rope_fraction d_k`` (all of ``d_k`` by
        default), or latent attention's shared ``rope_dim``; ``None`` without rotary positions."""
        if self.positions != "rotary":
            return None
        if self.kv_latent is not None:
            return self.rope_dim
        return round(self.d_k * (self.rope_fraction or 1.0))

    @property
    def attention(self) -> str:
        """``"MHA"``, ``"GQA"``, ``"MQA"`` from the number of key/value heads, or ``"MLA"`` (latent)."""
        if self.kv_latent is not None:
            return "MLA"
        if self.n_kv_heads == self.h:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"

    @property
    def layer_kinds(self) -> tuple[str, ...]:
        """Per layer (0-based), its kind of :data:`mha.costs.layers.LAYER_KINDS`: ``layer_types`` where
        given; else all ``"latent"`` with ``kv_latent``, all ``"full"`` without a window, and with one
        ``"sliding"`` (``"chunked"``) layers, layer ``i`` ``"full"`` iff ``(i + 1) % global_period == 0``."""
        if self.layer_types is not None:
            return self.layer_types
        if self.kv_latent is not None:
            return ("latent",) * self.n_layers
        local, p = ("chunked" if self.chunked else "sliding"), self.global_period
        if self.window is None:
            return ("full",) * self.n_layers
        return tuple("full" if p is not None and (i + 1) % p == 0 else local for i in range(self.n_layers))

    @cached_property  # frozen: computed once per config
    def layers(self) -> tuple[Layer, ...]:
        """Every layer as its cache sees it (:class:`mha.costs.layers.Layer`), in order: its kind, the
        values it caches per token, its window or chunk, its compression ratio and indexer, its state, and
        the layer whose cache it reads."""
        return self._layers(self.kv_shared_from)

    def _layers(self, shared: tuple[int | None, ...] | None) -> tuple[Layer, ...]:
        out = []
        for i, kind in enumerate(self.layer_kinds):
            j = None if shared is None else shared[i]
            if kind == "linear":
                out.append(Layer("linear", 0, state=self.linear.state_elements, shares=j))
                continue
            index = self.indexer
            if kind == "latent":
                dim = index.dim if index is not None and index.ratio is None else None
                out.append(Layer("latent", self.kv_latent + (self.rope_dim or 0), index_dim=dim, shares=j))
                continue
            local = kind in ("sliding", "chunked") and (self.local_kv_heads or self.local_head_dim)
            h_kv = (self.local_kv_heads if local else None) or self.n_kv_heads
            d_k = (self.local_head_dim if local else None) or self.d_k
            eq = self.k_eq_v and not local
            m = self.compress_ratios[i] if kind == "compressed" else None
            out.append(
                Layer(
                    kind, (1 if eq else 2) * h_kv * d_k, kv_heads=h_kv, head_dim=d_k, k_eq_v=eq,
                    window=None if kind == "full" else self.window, ratio=m,
                    index_dim=index.dim if m is not None and index is not None and index.ratio == m else None,
                    shares=j,
                )
            )  # fmt: skip
        return tuple(out)

    @property
    def layer_windows(self) -> tuple[int | None, ...]:
        """Per layer (0-based), the tokens it caches at most: ``window`` for a sliding or chunked layer,
        ``None`` for one whose cache grows with the context (full, latent, compressed) and for a linear
        layer's fixed state. :attr:`layers` tells more."""
        return tuple(layer.window if layer.kind in ("sliding", "chunked") else None for layer in self.layers)

    @property
    def cache_width(self) -> int:
        """Values cached per token by a layer of the model's main kind: a key and a value per key/value
        head, ``2 h_kv d_k`` (``h_kv d_k`` where keys are the values), or for latent attention the latent
        and the rotary key, ``kv_latent + rope_dim``, plus the indexer's key where every latent layer has
        one. Layers of other kinds or shapes: :attr:`layers`."""
        if self.kv_latent is not None:
            index = self.indexer.dim if self.indexer is not None and self.indexer.ratio is None else 0
            return self.kv_latent + (self.rope_dim or 0) + index
        return (1 if self.k_eq_v else 2) * self.n_kv_heads * self.d_k

    @property
    def mha_cache_width(self) -> int:
        """Values cached per token and layer were every query head to keep its own key and value (plain
        MHA, the baseline of every cache comparison): ``2 h d_k``, or for latent attention
        ``h (d_k + d_r) + h d_v``, since each head's key carries the shared rotary part beside its own
        ``d_k`` (DeepSeek-V3: 128 x (128 + 64) + 128 x 128 = 40,960)."""
        if self.kv_latent is not None:
            return self.h * (self.d_k + (self.rope_dim or 0)) + self.h * (self.v_head_dim or self.d_k)
        return 2 * self.h * self.d_k

    @property
    def pattern(self) -> str:
        """The kinds of layer in words, in the order they first appear, e.g. ``"52 local (window 1024) +
        10 global"``, ``"36 linear (gated delta) + 12 global"``, ``"2 local (window 128) + 21 compressed
        (1 in 4) + 20 compressed (1 in 128)"``, and how many read another layer's cache."""
        words = {"full": "global", "latent": "latent"}
        names = []
        for layer in self.layers:
            if layer.kind == "sliding":
                names.append(f"local (window {layer.window})")
            elif layer.kind == "chunked":
                names.append(f"local (chunk {layer.window})")
            elif layer.kind == "compressed":
                names.append(f"compressed (1 in {layer.ratio})")
            elif layer.kind == "linear":
                names.append(f"linear ({self.linear.rule})")
            elif layer.kind == "latent" and layer.index_dim:
                names.append("latent with an indexer")
            else:
                names.append(words[layer.kind])
        counts = {name: names.count(name) for name in dict.fromkeys(names)}
        text = " + ".join(f"{count} {name}" for name, count in counts.items())
        shared = sum(layer.shares is not None for layer in self.layers)
        return text + (f"; {shared} read an earlier layer's cache" if shared else "")

    def every_layer_global(self) -> ModelConfig:
        """The same model with no local layers: what its cache would be if every layer saw every token.

        Raises:
            ValueError: a model whose layers are not all alike (kinds, shapes or sharing): count its layers
                as global one by one (:meth:`mha.costs.layers.Layer.global_elements`).
        """
        mixed = ("layer_types", "local_kv_heads", "local_head_dim", "compress_ratios", "kv_shared_from")
        if given := [name for name in mixed if getattr(self, name) is not None]:
            raise ValueError(f"{self.name}: layers of several kinds or shapes ({', '.join(given)}): "
                             "count them one by one, Layer.global_elements")  # fmt: skip
        scaling = self.rope_scaling and replace(self.rope_scaling, layers=None)  # every layer is now full
        return replace(
            self, window=None, global_period=None, local_rope_theta=None, chunked=False, rope_scaling=scaling
        )

    @property
    def n_attention_layers(self) -> int:
        """Attention layers in the whole model: an encoder-decoder has self-attention in both stacks and
        cross-attention in the decoder, so three per block."""
        return 3 * self.n_layers if self.kind == "encoder-decoder" else self.n_layers


_LLAMA3_SCALING = RopeScaling("llama3", 8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0)
_QWEN3_SCALING = RopeScaling("yarn", 4.0, 32768, in_config=False)  # the model card's, not in config.json
_GPT_OSS_SCALING = RopeScaling("yarn", 32.0, 4096, beta_fast=32.0, beta_slow=1.0, truncate=False)

_GPT2 = (
    "https://huggingface.co/openai-community/{}/blob/main/config.json (n_embd, n_head, n_layer; n_positions "
    "= "
    "n_ctx = 1024, the learned positions' limit); trained on 1024-token contexts: Radford et al. 2019, "
    "section 2.3"
)
_LLAMA1 = (
    "Touvron et al. 2023a, Table 2 ({}); rotary positions: section 2.2, base 10000: precompute_freqs_cis("
    "theta=10000.0) in Meta's reference code, https://github.com/meta-llama/llama (model.py); trained "
    "context 2048: Touvron et al. 2023b, Table 1; max_context: none, Meta's params.json sets no length"
)
_LLAMA2 = (
    "https://huggingface.co/meta-llama/{}/blob/main/config.json (hidden_size, num_attention_heads, "
    "num_key_value_heads, num_hidden_layers, max_position_embeddings 4096); context and GQA: Touvron et al. "
    "2023b, Table 1; rotary base 10000: precompute_freqs_cis(theta=10000.0) in Meta's reference code, "
    "https://github.com/meta-llama/llama (model.py)"
)
_LLAMA31 = (
    "Grattafiori et al. 2024, Table 3; https://huggingface.co/meta-llama/{}/blob/main/config.json "
    "(max_position_embeddings 131072, rotary positions with rope_theta 500000.0, rope_scaling: rope_type "
    "llama3, factor 8.0, "
    "low_freq_factor 1.0, high_freq_factor 4.0, original_max_position_embeddings 8192; the same values in "
    "apply_scaling of Meta's reference code, https://github.com/meta-llama/llama-models); trained context: "
    "pre-trained at 8K, then extended in six stages to 128K = 131,072 tokens, Grattafiori et al. 2024, "
    "section 3.4.2"
)
_GPT_OSS = (
    "https://huggingface.co/openai/gpt-oss-{}/blob/main/config.json (hidden_size 2880, num_attention_heads "
    "64, "
    "num_key_value_heads 8, head_dim 64, num_hidden_layers {}, sliding_window 128, layer_types "
    "sliding_attention, full_attention, ... (alternating from layer 0), max_position_embeddings 131072, "
    "rotary positions with rope_theta 150000, rope_scaling: rope_type yarn, factor 32.0, "
    "original_max_position_embeddings 4096, "
    "beta_fast 32.0, beta_slow 1.0, truncate false; two stored copies agree); OpenAI 2025, gpt-oss-120b & "
    "gpt-oss-20b model card, section 2: learned attention sinks per head, YaRN extending the dense layers' "
    "context to 131,072 tokens (trained_context)"
)
_QWEN3 = (
    "Yang et al. 2025 (Qwen3), section 3.1: the third pre-training stage trains on 32,768-token sequences "
    "(trained_context), rotary positions and QK-norm per head (section 2); rope_scaling: none in "
    "config.json; the model card "
    "(https://huggingface.co/Qwen/{0}, 'Processing Long Texts') recommends YaRN, factor 4.0 from "
    "original_max_position_embeddings 32768, for texts longer than 32,768 tokens; "
    "max_position_embeddings 40960 is the config's limit"
)

_DEEPSEEK_V4 = (
    "https://huggingface.co/deepseek-ai/DeepSeek-V4-{0}/blob/main/config.json ({1}; num_key_value_heads "
    "1, head_dim 512: one key, which is also the value, per token; qk_rope_head_dim 64: rotary positions "
    "on the last 64 of the 512; sliding_window 128 in every layer; compress_ratios {2}; index_n_heads 64, "
    "index_head_dim 128; num_nextn_predict_layers 1; rope_theta 10000 on the window-only layers, "
    "compress_rope_theta 160000 and rope_scaling: type yarn, factor 16, original_max_position_embeddings "
    "65536, beta_fast 32, beta_slow 1 on the compressed ones, as inference/model.py's Attention sets them "
    "(YaRN disabled on the window-only layers); max_position_embeddings 1048576), {3}. "
    "What a layer caches: DeepSeek's inference/model.py (in the Flash repository): a window of 128 "
    "tokens x 512, then max_seq_len // m compressed entries x 512; an indexer (index_head_dim 128 per "
    "entry) only where m = 4; learned sinks (attn_sink, one per head); the query normalised per head and "
    "the key by kv_norm (QK-norm); the not-yet-compressed tail of under m tokens is kept in fp32 "
    "buffers of the compressor, of fixed size, and is not counted here (its tokens are in the window){4}; "
    "the rotary pairs neighbours, interleaved (apply_rotary_emb: torch.view_as_complex over "
    "x.unflatten(-1, (-1, 2)); transformers' deepseek_v4 apply_rotary_pos_emb alike). "
    "trained_context: UNVERIFIED (the card: 'a context length of one million tokens'; the report not "
    "read)"
)

MODEL_CONFIGS: dict[str, ModelConfig] = {
    c.name: c
    for c in (
        # name, d_model, h, n_kv_heads, n_layers, trained_context, max_context, kind, source
        ModelConfig(
            "Transformer base", 512, 8, 8, 6, None, None, "encoder-decoder",
            "Vaswani et al. 2017, Table 3 (base: N=6, d_model=512, h=8, d_k=64); sinusoidal positions "
            "(section 3.5): no length limit; no training length stated (batches of about 25,000 source and "
            "25,000 target tokens, section 5.1)",
            positions="sinusoidal",
        ),
        ModelConfig(
            "Transformer big", 1024, 16, 16, 6, None, None, "encoder-decoder",
            "Vaswani et al. 2017, Table 3 (big: N=6, d_model=1024, h=16); sinusoidal positions (section "
            "3.5): "
            "no length limit; no training length stated (section 5.1)",
            positions="sinusoidal",
        ),
        ModelConfig(
            "BERT-base", 768, 12, 12, 12, 512, 512, "encoder",
            "Devlin et al. 2019, section 3 (L=12, H=768, A=12); learned positions, "
            "max_position_embeddings=512 "
            "in https://huggingface.co/google-bert/bert-base-uncased/blob/main/config.json; trained on "
            "sequences of 128 tokens for 90% of the steps and 512 for the rest, Appendix A.2",
            positions="learned",
        ),
        ModelConfig(
            "BERT-large", 1024, 16, 16, 24, 512, 512, "encoder",
            "Devlin et al. 2019, section 3 (L=24, H=1024, A=16); learned positions, "
            "max_position_embeddings=512 in "
            "https://huggingface.co/google-bert/bert-large-uncased/blob/main/config.json; trained on "
            "sequences of 128 and then 512 tokens, Appendix A.2",
            positions="learned",
        ),
        ModelConfig("GPT-2 small", 768, 12, 12, 12, 1024, 1024, "decoder", _GPT2.format("gpt2"),
                    positions="learned"),
        ModelConfig("GPT-2 medium", 1024, 16, 16, 24, 1024, 1024, "decoder", _GPT2.format("gpt2-medium"),
                    positions="learned"),
        ModelConfig("GPT-2 large", 1280, 20, 20, 36, 1024, 1024, "decoder", _GPT2.format("gpt2-large"),
                    positions="learned"),
        ModelConfig("GPT-2 XL", 1600, 25, 25, 48, 1024, 1024, "decoder", _GPT2.format("gpt2-xl"),
                    positions="learned"),
        ModelConfig(
            "GPT-3 175B", 12288, 96, 96, 96, 2048, 2048, "decoder",
            "Brown et al. 2020, Table 2.1 (n_layers=96, d_model=12288, n_heads=96, d_head=128); context: "
            "n_ctx=2048 tokens for all models, section 2.1; the model and architecture of GPT-2, learned "
            "positions included (section 2.1), so 2048 is also the limit",
            positions="learned",
        ),
        ModelConfig(
            "T5-base", 768, 12, 12, 12, 512, None, "encoder-decoder",
            "Raffel et al. 2020, section 3.1.1 (12 blocks per stack, d_model=768, 12 heads, d_kv=64); "
            "https://huggingface.co/google-t5/t5-base/blob/main/config.json; relative position biases "
            "(section 2.1): no length limit (the config's n_positions 512 is not read by the model); trained "
            "on 512-token inputs, section 3.1.2",
            positions="relative",
        ),
        ModelConfig(
            "T5-large", 1024, 16, 16, 24, 512, None, "encoder-decoder",
            "Raffel et al. 2020, section 3.7 (d_model=1024, 16 heads, d_kv=64, 24 layers per stack); "
            "https://huggingface.co/google-t5/t5-large/blob/main/config.json; relative position biases "
            "(section 2.1): no length limit; trained on 512-token inputs, section 3.1.2",
            positions="relative",
        ),
        ModelConfig(
            "ViT-B/16", 768, 12, 12, 12, 197, 197, "encoder",
            "Dosovitskiy et al. 2021, Table 1 (ViT-Base: 12 layers, hidden 768, 12 heads); learned positions "
            "for (224/16)^2 patches + [class] = 197 tokens at the 224x224 pre-training resolution "
            "(https://huggingface.co/google/vit-base-patch16-224/blob/main/config.json: image_size 224, "
            "patch_size 16); a higher resolution needs interpolated positions, section 3.2",
            positions="learned",
        ),
        ModelConfig(
            "ViT-H/14", 1280, 16, 16, 32, 257, 257, "encoder",
            "Dosovitskiy et al. 2021, Table 1 (ViT-Huge: 32 layers, hidden 1280, 16 heads); learned "
            "positions "
            "for (224/14)^2 patches + [class] = 257 tokens at 224x224; a higher resolution needs "
            "interpolated "
            "positions, section 3.2",
            positions="learned",
        ),
        ModelConfig("LLaMA 7B", 4096, 32, 32, 32, 2048, None, "decoder",
                    _LLAMA1.format("dimension 4096, 32 heads, 32 layers"), positions="rotary",
                    rope_theta=10000.0),
        ModelConfig("LLaMA 65B", 8192, 64, 64, 80, 2048, None, "decoder",
                    _LLAMA1.format("dimension 8192, 64 heads, 80 layers"), positions="rotary",
                    rope_theta=10000.0),
        ModelConfig("Llama 2 7B", 4096, 32, 32, 32, 4096, 4096, "decoder", _LLAMA2.format("Llama-2-7b-hf"),
                    positions="rotary", rope_theta=10000.0, family=LLAMA,
        ),
        ModelConfig("Llama 2 70B", 8192, 64, 8, 80, 4096, 4096, "decoder", _LLAMA2.format("Llama-2-70b-hf"),
                    positions="rotary", rope_theta=10000.0, family=LLAMA,
        ),
        *(
            ModelConfig(name, d, h, 8, layers, 131072, 131072, "decoder", _LLAMA31.format(repo),
                        positions="rotary", rope_theta=500000.0, rope_scaling=_LLAMA3_SCALING, family=LLAMA)
            for name, d, h, layers, repo in (
                ("Llama 3.1 8B", 4096, 32, 32, "Llama-3.1-8B"),
                ("Llama 3.1 70B", 8192, 64, 80, "Llama-3.1-70B"),
                ("Llama 3.1 405B", 16384, 128, 126, "Llama-3.1-405B"),
            )
        ),
        ModelConfig(
            "Mistral 7B", 4096, 32, 8, 32, 8192, 32768, "decoder",
            "Jiang et al. 2023, Table 1 (dim 4096, n_layers 32, head_dim 128, n_heads 32, n_kv_heads 8, "
            "context_len 8192, window_size 4096: a sliding window, so its rolling-buffer KV cache keeps at "
            "most 4096 tokens, section 2); rotary positions: "
            "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json (rope_theta 10000.0, "
            "sliding_window 4096, max_position_embeddings 32768, no rope_scaling)",
            window=4096, positions="rotary", rope_theta=10000.0,
        ),
        ModelConfig(
            "PaLM 62B", 8192, 32, 1, 64, 2048, None, "decoder",
            "Chowdhery et al. 2023, Table 1 (64 layers, 32 heads, d_model 8192; head size 256), section 2 "
            "(multi-query attention; RoPE embeddings) and section 5 (sequence length 2048); no configuration "
            "published: no rotary base, no length limit",
            positions="rotary",
        ),
        ModelConfig(
            "Falcon-7B", 4544, 71, 1, 32, 2048, None, "decoder",
            "https://huggingface.co/tiiuae/falcon-7b (model card, table 'Model Architecture and Objective': "
            "32 layers, d_model 4544, head_dim 64, sequence length 2048, rotary positions, multiquery); 71 "
            "heads: num_attention_heads in https://huggingface.co/tiiuae/falcon-7b/blob/main/config.json, "
            "which sets no rotary base and no length limit (two stored copies agree); rotary base 10000: "
            "RotaryEmbedding(head_dim, base=10000) of the checkpoint's own modelling_RW.py",
            positions="rotary", rope_theta=10000.0,
        ),
        # 2024-2025: head widths set apart from d_model / h, local and global layers, latent attention.
        ModelConfig(
            "Gemma 2 27B", 4608, 32, 16, 46, 8192, 8192, "decoder",
            "https://huggingface.co/google/gemma-2-27b/blob/main/config.json (hidden_size 4608, "
            "num_attention_heads 32, num_key_value_heads 16, head_dim 128, num_hidden_layers 46, "
            "sliding_window 4096, max_position_embeddings 8192, rotary positions with rope_theta 10000.0, "
            "attn_logit_softcapping "
            "50.0); Gemma Team 2024 (Gemma 2), Table 1 and section 2: local sliding window (4096) and global "
            "attention (8192) in every other layer, logit soft-capping 50.0 in attention, 8192-token "
            "context; "
            "layer_types of transformers' Gemma2Config: layer 0 sliding, layer 1 full, ...",
            head_dim=128, window=4096, global_period=2, positions="rotary", rope_theta=10000.0, softcap=50.0,
        ),
        ModelConfig(
            "Gemma 3 27B", 5376, 32, 16, 62, 131072, 131072, "decoder",
            "https://huggingface.co/google/gemma-3-27b-pt/blob/main/config.json, text_config (hidden_size "
            "5376, num_attention_heads 32, num_key_value_heads 16, head_dim 128, num_hidden_layers 62, "
            "sliding_window 1024, sliding_window_pattern 6, query_pre_attn_scalar 168, "
            "max_position_embeddings 131072, rope_scaling: rope_type linear, factor 8.0; two stored copies "
            "agree); Gemma Team 2025 (Gemma 3), section 2: 5 local layers (span 1024) for every global "
            "layer; QK-norm per head replaces Gemma 2's soft-capping; RoPE base 1M on global layers, 10k on "
            "local ones; pre-trained on 32K sequences, then on 128K = 131,072 at the end of pre-training "
            "with "
            "the global layers' angles rescaled by 8 (Chen et al. 2023; the config gives no original "
            "length); "
            "transformers' Gemma3TextConfig: layer i is full_attention iff (i + 1) % 6 == 0, and the scaling "
            "applies to the full_attention layers only",
            head_dim=128, window=1024, global_period=6, positions="rotary", rope_theta=1_000_000.0,
            local_rope_theta=10000.0, rope_scaling=RopeScaling("linear", 8.0, None, layers="full"),
            family=GEMMA3,
        ),
        ModelConfig(
            "Llama 4 Scout", 5120, 40, 8, 48, 262144, 262144, "decoder",
            "https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E/blob/main/config.json (the base "
            "checkpoint), text_config (hidden_size 5120, num_attention_heads 40, num_key_value_heads 8, "
            "head_dim 128, num_hidden_layers 48, attention_chunk_size 8192, use_qk_norm true, rope_theta "
            "500000.0, max_position_embeddings 262144: two stored copies agree; rope_scaling: rope_type "
            "llama3, "
            "factor 8.0, low_freq_factor 1.0, high_freq_factor 4.0, original_max_position_embeddings 8192: "
            "one stored copy, unverified by a second); the Instruct checkpoint ships max_position_embeddings "
            "10485760 and factor 16.0 (low and high 1.0) instead. Meta AI 2025 (The Llama 4 herd): pre- and "
            "post-trained at 256K = 262,144 tokens, 10M advertised by extrapolation. Layers without "
            "positions: "
            "the published no_rope_layers is empty, so transformers' Llama4TextConfig builds it from its "
            "default no_rope_layer_interval=4 (layer i has no RoPE iff (i + 1) % 4 == 0) and sets "
            "layer_types "
            "chunked_attention where the layer has RoPE, full_attention elsewhere; its QK-norm is a "
            "weightless "
            "L2 norm per head, on the RoPE layers only (modeling_llama4.py); its rotary pairs neighbours, "
            "interleaved (apply_rotary_emb of https://github.com/meta-llama/llama-models, "
            "models/llama4/model.py: torch.view_as_complex over pairs). A chunked layer is counted here "
            "as local with window 8192, the most it caches",
            head_dim=128, window=8192, global_period=4,             positions="rotary", rope_theta=500000.0,
            rope_scaling=RopeScaling("llama3", 8.0, 8192, low_freq_factor=1.0, high_freq_factor=4.0),
            nope_period=4, family=LLAMA4,
        ),
        ModelConfig(
            "Qwen3-8B", 4096, 32, 8, 36, 32768, 40960, "decoder",
            "https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json (hidden_size 4096, "
            "num_attention_heads 32, num_key_value_heads 8, head_dim 128, num_hidden_layers 36, "
            "max_position_embeddings 40960, rope_theta 1000000, rope_scaling null, use_sliding_window "
            "false); "
            "Yang et al. 2025 (Qwen3), Table 1; " + _QWEN3.format("Qwen3-8B"),
            head_dim=128, positions="rotary", rope_theta=1_000_000.0, rope_scaling=_QWEN3_SCALING,
            family=QWEN3,
        ),
        ModelConfig(
            "Qwen3-235B-A22B", 4096, 64, 4, 94, 32768, 40960, "decoder",
            "https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json (hidden_size 4096, "
            "num_attention_heads 64, num_key_value_heads 4, head_dim 128, num_hidden_layers 94, "
            "max_position_embeddings 40960, rope_theta 1000000.0, rope_scaling null); Yang et al. 2025 "
            "(Qwen3), Table 2; " + _QWEN3.format("Qwen3-235B-A22B"),
            head_dim=128, positions="rotary", rope_theta=1_000_000.0, rope_scaling=_QWEN3_SCALING,
            family=QWEN3,
        ),
        ModelConfig(
            "gpt-oss-20b", 2880, 64, 8, 24, 131072, 131072, "decoder", _GPT_OSS.format("20b", 24),
            head_dim=64, window=128, global_period=2, positions="rotary", rope_theta=150000.0,
            rope_scaling=_GPT_OSS_SCALING, family=GPT_OSS,
        ),
        ModelConfig(
            "gpt-oss-120b", 2880, 64, 8, 36, 131072, 131072, "decoder", _GPT_OSS.format("120b", 36),
            head_dim=64, window=128, global_period=2, positions="rotary", rope_theta=150000.0,
            rope_scaling=_GPT_OSS_SCALING, family=GPT_OSS,
        ),
        ModelConfig(
            "DeepSeek-V3", 7168, 128, None, 61, 131072, 163840, "decoder",
            "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json (hidden_size 7168, "
            "num_attention_heads 128, num_hidden_layers 61, kv_lora_rank 512, qk_rope_head_dim 64, "
            "qk_nope_head_dim 128, v_head_dim 128, q_lora_rank 1536, rope_theta 10000, "
            "max_position_embeddings 163840 = 40 x 4096, rope_scaling: type yarn, factor 40, "
            "original_max_position_embeddings 4096, beta_fast 32, beta_slow 1, mscale 1.0, mscale_all_dim "
            "1.0; two stored copies agree); DeepSeek-AI 2024 (DeepSeek-V3), section 4.2: d_c = 512, "
            "d_h^R = 64, d_h = 128, d_c' = 1536; section 4.3: pre-trained at 4K, then extended with YaRN to "
            "32K and to 128K = 131,072 tokens (trained_context); head_dim here is d_h, the width of a head's "
            "key and value apart from the rotary part; the rotary pairs are neighbours (2i, 2i + 1), "
            "interleaved: apply_rotary_emb of DeepSeek's inference/model.py "
            "(https://github.com/deepseek-ai/DeepSeek-V3, torch.view_as_complex over pairs), as "
            "transformers' rope_interleave (default true) reproduces",
            head_dim=128, kv_latent=512, rope_dim=64, q_latent=1536, positions="rotary", rope_theta=10000.0,
            rope_scaling=RopeScaling("yarn", 40.0, 4096, beta_fast=32.0, beta_slow=1.0),
            rope_style="interleaved",
        ),
        # 2025-2026: kinds of layer mixed in one model (mha.costs.layers), each field from the config.json
        # and a second copy, the reference code or the report; "UNVERIFIED" marks a field that is not.
        ModelConfig(
            "Qwen3-Next-80B-A3B", 2048, 16, 2, 48, None, 262144, "decoder",
            "https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/main/config.json (hidden_size "
            "2048, num_attention_heads 16, num_key_value_heads 2, head_dim 256, num_hidden_layers 48, "
            "full_attention_interval 4: layers 3, 7, ..., 47 full, the rest Gated DeltaNet; "
            "linear_num_key_heads 16, linear_num_value_heads 32, linear_key_head_dim 128, "
            "linear_value_head_dim 128, linear_conv_kernel_dim 4; rotary positions (RoPE) with rope_theta "
            "10000000, partial_rotary_factor 0.25, rope_scaling null, max_position_embeddings 262144), as "
            "copied in https://github.com/AI-Hypercomputer/maxtext (hf_model_configs.py, "
            "qwen3_next_80b_a3b_dict); the same shapes in THUDM/slime scripts/models/qwen3-next-80B-A3B.sh "
            "(Megatron arguments: --qk-layernorm, QK-norm per head; --attention-output-gate, the output "
            "gate) and the model card's overview ('12 * (3 * (Gated DeltaNet -> MoE) -> 1 * (Gated "
            "Attention -> MoE))'). trained_context: UNVERIFIED (the card: 'Context Length: 262,144 "
            "natively'); multi-token prediction: the card names it, its layer count is UNVERIFIED",
            head_dim=256, layer_types=("linear", "linear", "linear", "full") * 12,
            linear=LinearAttention("gated delta", 16, 32, 128, 128, 4), positions="rotary",
            rope_theta=10_000_000.0, rope_fraction=0.25, family=QWEN3_NEXT,
        ),
        ModelConfig(
            "Qwen3.5-397B-A17B", 4096, 32, 2, 60, None, 262144, "decoder",
            "https://huggingface.co/Qwen/Qwen3.5-397B-A17B/blob/main/config.json, text_config (hidden_size "
            "4096, num_attention_heads 32, num_key_value_heads 2, head_dim 256, num_hidden_layers 60, "
            "layer_types: 45 linear_attention and 15 full_attention at layers 3, 7, ..., 59; "
            "linear_num_key_heads 16, linear_num_value_heads 64, linear_key_head_dim 128, "
            "linear_value_head_dim 128, linear_conv_kernel_dim 4; attn_output_gate true; rope_parameters: "
            "rotary positions (M-RoPE, mrope_section [11, 11, 10]) with rope_theta 10000000, "
            "partial_rotary_factor 0.25, no scaling; max_position_embeddings 262144; mtp_num_hidden_layers "
            "1), agreeing with NVIDIA's derivative nvidia/Qwen3.5-397B-A17B-NVFP4 (both copied in "
            "https://github.com/ai-dynamo/aiconfigurator, model_configs/) and MaxText's "
            "qwen3.5-397b-a17b.yml; QK-norm per head: THUDM/slime's Qwen3.5 scripts (--qk-layernorm, other "
            "sizes of the family). trained_context: UNVERIFIED",
            head_dim=256, layer_types=("linear", "linear", "linear", "full") * 15,
            linear=LinearAttention("gated delta", 16, 64, 128, 128, 4), positions="rotary",
            rope_theta=10_000_000.0, rope_fraction=0.25, mtp_layers=1, family=QWEN3_NEXT,
        ),
        ModelConfig(
            "DeepSeek-V3.2", 7168, 128, None, 61, 131072, 163840, "decoder",
            "https://huggingface.co/deepseek-ai/DeepSeek-V3.2/blob/main/config.json (hidden_size 7168, "
            "num_attention_heads 128, num_hidden_layers 61, num_nextn_predict_layers 1, kv_lora_rank 512, "
            "qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128, q_lora_rank 1536, index_n_heads 64, "
            "index_head_dim 128, index_topk 2048, rotary positions with rope_theta 10000, "
            "max_position_embeddings 163840, rope_scaling: type yarn, factor 40, "
            "original_max_position_embeddings 4096, beta_fast 32, beta_slow 1), agreeing with NVIDIA's "
            "derivative (both in https://github.com/ai-dynamo/aiconfigurator) and MaxText's "
            "deepseek3.2-671b.yml; an indexer in every layer, caching one 128-wide key per token: "
            "inference/model.py of https://github.com/deepseek-ai/DeepSeek-V3.2-Exp. trained_context "
            "131,072: the V3.2-Exp report (DeepSeek_V3_2.pdf, section 2: both continued-training stages on "
            "sequences of 128K tokens); for the final V3.2 checkpoint UNVERIFIED (its own report not read). "
            "head_dim here is d_h, a head's key and value width apart from the rotary part. The "
            "attention's rotary pairs neighbours, interleaved: apply_rotary_emb of V3.2-Exp's "
            "inference/model.py (torch.view_as_complex over pairs; transformers' deepseek_v32 "
            "apply_rotary_pos_emb_interleave)",
            head_dim=128, kv_latent=512, rope_dim=64, q_latent=1536, indexer=Indexer(64, 128, 2048),
            positions="rotary", rope_theta=10000.0,
            rope_scaling=RopeScaling("yarn", 40.0, 4096, beta_fast=32.0, beta_slow=1.0), mtp_layers=1,
            rope_style="interleaved",
        ),
        ModelConfig(
            "DeepSeek-V4-Flash", 4096, 64, 1, 43, None, 1048576, "decoder",
            _DEEPSEEK_V4.format(
                "Flash", "hidden_size 4096, num_attention_heads 64, num_hidden_layers 43, q_lora_rank 1024, "
                "o_lora_rank 1024, o_groups 8, index_topk 512",
                "[0, 0, 4, 128, 4, 128, ..., 4, 0]: layers 0-1 the window only, then 4 on even and 128 on "
                "odd layers, the 44th entry the MTP layer's",
                "byte-for-byte the same in https://github.com/yafengge/DeepSeek-V4-Flash (a clone of the "
                "Hugging Face repository with DeepSeek's commits) and in "
                "https://github.com/ai-dynamo/aiconfigurator; DeepSeek's inference/config.json agrees",
                "",
            ),
            head_dim=512, k_eq_v=True, window=128, layer_types=("sliding",) * 2 + ("compressed",) * 41,
            compress_ratios=(0, 0) + (4, 128) * 20 + (4,), indexer=Indexer(64, 128, 512, ratio=4),
            positions="rotary", rope_theta=160000.0, local_rope_theta=10000.0, rope_fraction=0.125,
            rope_scaling=RopeScaling("yarn", 16.0, 65536, beta_fast=32.0, beta_slow=1.0, layers="compressed"),
            qk_norm="per head", sinks=True, mtp_layers=1, rope_style="interleaved",
        ),
        ModelConfig(
            "DeepSeek-V4-Pro", 7168, 128, 1, 61, None, 1048576, "decoder",
            _DEEPSEEK_V4.format(
                "Pro", "hidden_size 7168, num_attention_heads 128, num_hidden_layers 61, q_lora_rank 1536, "
                "o_lora_rank 1024, o_groups 16, index_topk 1024",
                "[128, 128, 4, 128, 4, 128, ..., 4, 0]: layers 0-1 ratio 128, then 4 on even and 128 on odd "
                "layers, the 62nd entry the MTP layer's",
                "the same in DeepSeek's file and NVIDIA's derivative nvidia/DeepSeek-V4-Pro-NVFP4, both "
                "copied in https://github.com/ai-dynamo/aiconfigurator",
                "; sinks, QK-norm and the cache layout from Flash's inference/model.py: UNVERIFIED for Pro "
                "(its own code not read)",
            ),
            head_dim=512, k_eq_v=True, window=128, layer_types=("compressed",) * 61,
            compress_ratios=(128, 128) + (4, 128) * 29 + (4,), indexer=Indexer(64, 128, 1024, ratio=4),
            positions="rotary", rope_theta=160000.0, rope_fraction=0.125,
            rope_scaling=RopeScaling("yarn", 16.0, 65536, beta_fast=32.0, beta_slow=1.0),
            qk_norm="per head", sinks=True, mtp_layers=1, rope_style="interleaved",
        ),
        ModelConfig(
            "GLM-4.5", 5120, 96, 8, 92, None, 131072, "decoder",
            "No stored copy of https://huggingface.co/zai-org/GLM-4.5/blob/main/config.json was found; the "
            "shapes from THUDM/slime scripts/models/glm4.5-355B-A32B.sh (Megatron arguments that load the "
            "checkpoint: --hidden-size 5120, --num-attention-heads 96, --num-query-groups 8, --kv-channels "
            "128 (head_dim), 3 dense + 89 MoE layers, --rotary-base 1000000, --rotary-percent 0.5, "
            "--qk-layernorm, --add-qkv-bias), agreeing with NVIDIA Megatron-Bridge's GLM-4.5 page "
            "(https://docs.nvidia.com/nemo/megatron-bridge/latest/models/llm/glm45.html: 5120 hidden size, "
            "96 attention heads, 8 query groups, rotary positions (RoPE) with 1M base, QK LayerNorm, MTP "
            "with 1 layer, context 131,072 tokens: max_context, as max_position_embeddings is not read) and "
            "the README of https://github.com/zai-org/GLM-4.5 ('128K context length'). rope_fraction 0.5 and "
            "head_dim 128: slime only, UNVERIFIED against the config; trained_context: UNVERIFIED",
            head_dim=128, positions="rotary", rope_theta=1_000_000.0, rope_fraction=0.5, qk_norm="per head",
            mtp_layers=1,
        ),
        ModelConfig(
            "GLM-5", 6144, 64, None, 78, None, 202752, "decoder",
            "https://huggingface.co/zai-org/GLM-5/blob/main/config.json (hidden_size 6144, "
            "num_attention_heads 64, num_hidden_layers 78, num_nextn_predict_layers 1, q_lora_rank 2048, "
            "kv_lora_rank 512, qk_nope_head_dim 192, qk_rope_head_dim 64, v_head_dim 256, index_n_heads 32, "
            "index_head_dim 128, index_topk 2048 with no indexer_types: an indexer in every layer; "
            "rope_parameters: rotary positions with rope_theta 1000000, rope_interleave true, no scaling; "
            "max_position_embeddings 202752), agreeing with zai-org/GLM-5-FP8 and NVIDIA's derivative (all "
            "copied in https://github.com/ai-dynamo/aiconfigurator) and with THUDM/slime "
            "glm5-744B-A40B.sh; head_dim here is qk_nope_head_dim (the config's head_dim 64 is the rotary "
            "width). trained_context: UNVERIFIED",
            head_dim=192, kv_latent=512, rope_dim=64, q_latent=2048, v_head_dim=256,
            indexer=Indexer(32, 128, 2048), positions="rotary", rope_theta=1_000_000.0,
            rope_style="interleaved", mtp_layers=1,
        ),
        ModelConfig(
            "Gemma 4 31B", 5376, 32, 4, 60, None, 262144, "decoder",
            "https://huggingface.co/google/gemma-4-31B-it/blob/main/config.json, text_config (hidden_size "
            "5376, num_attention_heads 32, num_hidden_layers 60; sliding layers: num_key_value_heads 16, "
            "head_dim 256, sliding_window 1024; full layers 5, 11, ..., 59 (layer_types, 5 sliding to 1 "
            "full): num_global_key_value_heads 4, global_head_dim 512, attention_k_eq_v true; "
            "rope_parameters: full_attention rotary positions, rope_type proportional, partial_rotary_factor "
            "0.25, rope_theta 1000000; sliding_attention rope_theta 10000; max_position_embeddings 262144; "
            "num_kv_shared_layers 0), as copied from NVIDIA's derivative nvidia/Gemma-4-31B-IT-NVFP4 in "
            "https://github.com/ai-dynamo/aiconfigurator; Google DeepMind's own definition agrees field by "
            "field (https://github.com/google-deepmind/gemma, gemma/gm/nn/gemma4/_gemma4.py, Gemma4_31B: "
            "num_global_kv_heads 4, global_key_size 512, k_eq_v_global, QK-norm per head with a scale and a "
            "weightless value norm). Keys as values are counted once here, the least such a layer must keep "
            "(the key projection before its norm and rotation); Google's JAX code, transformers and mha's "
            "KeysAsValues cache the normalised keys and values apart, twice as much. trained_context: "
            "UNVERIFIED",
            head_dim=512, window=1024, global_period=6, local_kv_heads=16, local_head_dim=256,
            positions="rotary", rope_theta=1_000_000.0, local_rope_theta=10000.0, rope_fraction=0.25,
            family=GEMMA4,
        ),
        ModelConfig(
            "Gemma 4 E2B", 1536, 8, 1, 35, None, 131072, "decoder",
            "https://huggingface.co/google/gemma-4-E2B-it/blob/main/config.json, text_config (hidden_size "
            "1536, num_attention_heads 8, num_key_value_heads 1, num_hidden_layers 35; sliding layers "
            "head_dim 256, sliding_window 512; full layers 4, 9, ..., 34 (layer_types, 4 sliding to 1 full) "
            "global_head_dim 512; attention_k_eq_v false; num_kv_shared_layers 20: layers 15-34 compute no "
            "keys or values and read the cache of the last earlier layer of their kind, 13 (sliding) or 14 "
            "(full); rope_parameters: full_attention rotary positions, rope_type proportional, "
            "partial_rotary_factor 0.25, rope_theta 1000000; sliding_attention rope_theta 10000; "
            "max_position_embeddings 131072), as copied in https://github.com/AI-Hypercomputer/maxtext "
            "(hf_model_configs.py, gemma4_e2b_dict) and agreeing with Google DeepMind's Gemma4_E2B "
            "(https://github.com/google-deepmind/gemma, _gemma4.py: frac_shared_layers 20/35, "
            "create_kv_cache_sharing_patterns); transformers stores only the 15 producing layers' caches, "
            "Google's JAX code allocates one per layer. trained_context: UNVERIFIED",
            head_dim=512, window=512, global_period=5, local_head_dim=256,
            kv_shared_from=(None,) * 15 + tuple(14 if (i + 1) % 5 == 0 else 13 for i in range(15, 35)),
            positions="rotary", rope_theta=1_000_000.0, local_rope_theta=10000.0, rope_fraction=0.25,
            family=GEMMA4,
            k_eq_v=False,  # attention_k_eq_v false: Gemma 4 with values of their own
        ),
        ModelConfig(
            "Kimi K2", 7168, 64, None, 61, None, 131072, "decoder",
            "https://huggingface.co/moonshotai/Kimi-K2-Instruct/blob/main/config.json (hidden_size 7168, "
            "num_attention_heads 64, num_hidden_layers 61, num_nextn_predict_layers 0, q_lora_rank 1536, "
            "kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, rotary positions "
            "with rope_theta 50000, max_position_embeddings 131072, rope_scaling: type yarn, factor 32, "
            "original_max_position_embeddings 4096, beta_fast 1, beta_slow 1, mscale 1, mscale_all_dim 1), "
            "as copied in https://github.com/ai-dynamo/aiconfigurator; the same in THUDM/slime kimi-k2.sh "
            "and MaxText's kimi-k2-1t.yml. head_dim here is d_h, as for DeepSeek-V3. Rotary pairs "
            "interleaved: Kimi K2 'reuses the DeepSeekV3CausalLM architecture' "
            "(https://github.com/MoonshotAI/Kimi-K2, docs/deploy_guidance.md), whose rotary pairs "
            "neighbours (as DeepSeek-V3). trained_context: "
            "UNVERIFIED (the K2 report not read)",
            head_dim=128, kv_latent=512, rope_dim=64, q_latent=1536, positions="rotary", rope_theta=50000.0,
            rope_scaling=RopeScaling("yarn", 32.0, 4096, beta_fast=1.0, beta_slow=1.0), mtp_layers=0,
            rope_style="interleaved",
        ),
        ModelConfig(
            "Kimi-Linear-48B-A3B", 2304, 32, None, 27, None, 1048576, "decoder",
            "https://huggingface.co/moonshotai/Kimi-Linear-48B-A3B-Instruct/blob/main/config.json, as in two "
            "copies (the config.json of the re-quantisation Firworks/Kimi-Linear-48B-A3B-Instruct-nvfp4, and "
            "a third-party test's copy of 'the official Kimi-Linear-48B-A3B architecture'): hidden_size "
            "2304, num_attention_heads 32, num_hidden_layers 27, num_nextn_predict_layers 0; "
            "linear_attn_config: full_attn_layers 4, 8, 12, 16, 20, 24, 27 (1-based: MLA layers 3, 7, ..., "
            "23, 26 here), kda_layers the other 20, num_heads 32, head_dim 128, short_conv_kernel_size 4; "
            "MLA: kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128, q_lora_rank "
            "null; mla_use_nope true: positions none (NoPE) in every layer, Kimi Team 2025 (Kimi Linear "
            "technical report, https://github.com/MoonshotAI/Kimi-Linear, section 3), which also gives "
            "d_k = d_v = 128 and the KDA output gate; model_max_length 1048576 (transformers' "
            "max_position_embeddings). The MLA layers still cache the 64-wide slot of kv_a_proj_with_mqa: "
            "576 per token (transformers' KimiLinearMLAAttention). trained_context: UNVERIFIED (the report: "
            "pre-trained at 4,096 tokens, then a long-context phase of unstated length)",
            head_dim=128, kv_latent=512, rope_dim=64,
            layer_types=tuple("latent" if i in (3, 7, 11, 15, 19, 23, 26) else "linear" for i in range(27)),
            linear=LinearAttention("kimi delta", 32, 32, 128, 128, 4), positions="none", mtp_layers=0,
        ),
        ModelConfig(
            "MiniMax-M2", 3072, 48, 8, 62, None, None, "decoder",
            "No named copy of https://huggingface.co/MiniMaxAI/MiniMax-M2/blob/main/config.json; THUDM/slime "
            "scripts/models/minimax-m2.sh (Megatron arguments that load the checkpoint: --hidden-size 3072, "
            "--num-attention-heads 48, --num-query-groups 8, --kv-channels 128 (head_dim), --num-layers 62, "
            "--rotary-base 5000000, --rotary-percent 0.5), agreeing with the successor's file "
            "(MiniMaxAI/MiniMax-M2.5 config.json in https://github.com/ai-dynamo/aiconfigurator: the same "
            "shapes, rotary positions with rotary_dim 64 of head_dim 128, full attention in all 62 layers, "
            "qk_norm_type per_layer: QK-norm over the whole projection, num_mtp_modules 3) and with two "
            "third-party copies of M2's file; max_position_embeddings UNVERIFIED (204,800 in the two copies, "
            "196,608 in M2.5's), so no max_context; trained_context: UNVERIFIED",
            head_dim=128, positions="rotary", rope_theta=5_000_000.0, rope_fraction=0.5,
            qk_norm="whole projection", mtp_layers=3,
        ),
        ModelConfig(
            "Llama 4 Maverick", 5120, 40, 8, 48, None, 1048576, "decoder",
            "https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E-Instruct/blob/main/config.json "
            "(the Instruct checkpoint; the base checkpoint's file not found), text_config (hidden_size 5120, "
            "num_attention_heads 40, num_key_value_heads 8, head_dim 128, num_hidden_layers 48, "
            "attention_chunk_size 8192, use_qk_norm false, rotary positions with rope_theta 500000.0, "
            "rope_scaling null, max_position_embeddings 1048576), as copied in "
            "https://github.com/ai-dynamo/aiconfigurator, agreeing with MaxText's llama4-17b-128e.yml "
            "(chunk_attn_window_size 8192, nope_layer_interval 4, use_qk_norm false, no rope scaling). "
            "Layers without positions: the file has no no_rope_layers, so transformers' Llama4TextConfig "
            "builds them from its default no_rope_layer_interval=4 (layer i has no RoPE iff (i + 1) % 4 == "
            "0), as Meta's reference code (https://github.com/meta-llama/llama-models, models/llama4/"
            "model.py, nope_layer_interval) does: chunked attention on the RoPE layers, global on the "
            "others; the rotary pairs neighbours, interleaved (apply_rotary_emb there). trained_context: "
            "UNVERIFIED (the model card advertises 1M)",
            head_dim=128, window=8192, global_period=4, positions="rotary",
            rope_theta=500000.0, nope_period=4, family=LLAMA4,
            qk_norm=None,  # use_qk_norm false: Llama 4 without its QK-norm
        ),
        ModelConfig(
            "OLMo 3 7B", 4096, 32, 32, 32, None, 65536, "decoder",
            "No named copy of https://huggingface.co/allenai/Olmo-3-1025-7B/blob/main/config.json; AllenAI's "
            "training code (https://github.com/allenai/OLMo-core, src/olmo_core/nn/transformer/config.py: "
            "olmo3_7B = olmo2_7B with sliding windows [4096, 4096, 4096, -1], the last layer full; "
            "olmo2_7B: d_model 4096, 32 heads, 32 layers, qk_norm over the whole projection, rotary "
            "positions with rope_theta 500000), agreeing with MaxText's olmo3-7b.yml "
            "(sliding_window_size 4096, inhomogeneous_layer_cycle_interval 4, max_position_embeddings 65536, "
            "rope_scaling: yarn, rope_factor 8.0 from original_max_position_embeddings 8192) and a "
            "third-party copy of the config (num_key_value_heads 32, layer_types 3 sliding + 1 full, "
            "window 4096). The scaling stretches the full layers only: OLMo-core's with_rope_scaling("
            "full_attn_layers_only=True) and its HF export ('RoPE scaling is not applied to sliding window "
            "attention layers', src/olmo_core/nn/hf/config.py), transformers' Olmo3Config (rope_scaling "
            "goes to rope_parameters['full_attention']). Which checkpoint ships the YaRN scaling (MaxText: "
            "the post-trained ones; its olmo3-7b-pt.yml has none and a limit of 8192) and trained_context: "
            "UNVERIFIED",
            head_dim=128, window=4096, global_period=4, positions="rotary", rope_theta=500000.0,
            rope_scaling=RopeScaling("yarn", 8.0, 8192, beta_fast=32.0, beta_slow=1.0, layers="full"),
            qk_norm="whole projection",
        ),
        ModelConfig(
            "SmolLM3-3B", 2048, 16, 4, 36, 65536, 65536, "decoder",
            "https://huggingface.co/HuggingFaceTB/SmolLM3-3B/blob/main/config.json (hidden_size 2048, "
            "num_attention_heads 16, num_key_value_heads 4, num_hidden_layers 36, rotary positions with "
            "rope_theta 5000000.0, no_rope_layer_interval 4: layer i has no RoPE iff (i + 1) % 4 == 0, "
            "rope_scaling null, use_sliding_window false, max_position_embeddings 65536), as a third-party "
            "copy of the base checkpoint's file gives it, agreeing with Hugging Face's own training configs "
            "(https://github.com/huggingface/smollm, text/pretraining/smollm3/: stage1_8T.yaml sequences of "
            "4096 tokens, long_context_4k_to_32k.yaml 32,768, long_context_32k_to_64.yaml sequence_length "
            "65536 with rope_theta 5000000.0 and no_rope_layer 4: trained_context 65,536 tokens)",
            head_dim=128, positions="rotary", rope_theta=5_000_000.0, nope_period=4,
        ),
    )
}  # fmt: skip


# The models that "Attention in 2025-2026" takes apart, in the order that chapter added them (issue 35): an
# edition list, not dates (it holds Llama 4 Maverick of April 2025 but not Scout, released the same day, nor
# gpt-oss of August 2025). To group models by when they came out, use models_released and RELEASE_CUT.
MODELS_2025_2026: tuple[str, ...] = (
    "Qwen3-Next-80B-A3B", "Qwen3.5-397B-A17B", "DeepSeek-V3.2", "DeepSeek-V4-Flash", "DeepSeek-V4-Pro",
    "GLM-4.5", "GLM-5", "Gemma 4 31B", "Gemma 4 E2B", "Kimi K2", "Kimi-Linear-48B-A3B", "MiniMax-M2",
    "Llama 4 Maverick", "OLMo 3 7B", "SmolLM3-3B",
)  # fmt: skip


def models_released(*, before: str | None = None, since: str | None = None) -> tuple[str, ...]:
    """The names of :data:`MODEL_CONFIGS` released before ``before`` and on or after ``since`` (ISO dates,
    ``YYYY-MM-DD``), in the table's order; a model whose date is not confirmed is in no such group.

    Raises:
        ValueError: neither bound given.
    """
    if before is None and since is None:
        raise ValueError("give before, since or both (ISO dates such as RELEASE_CUT)")
    names = []
    for name, c in MODEL_CONFIGS.items():
        date = c.released.date if c.released is not None else None
        if date is None:
            continue
        if (before is None or date < before) and (since is None or date >= since):
            names.append(name)
    return tuple(names)


# The two groups the chapters compare: released up to June 2025, and from July 2025 on (RELEASE_CUT).
EARLIER_MODELS: tuple[str, ...] = models_released(before=RELEASE_CUT)
LATER_MODELS: tuple[str, ...] = models_released(since=RELEASE_CUT)


def get_config(model: str | ModelConfig, *, decoder_only: bool = False) -> ModelConfig:
    """Look a model up by name in :data:`MODEL_CONFIGS` (a ``ModelConfig`` is returned as it is).

    Args:
        model: a name in :data:`MODEL_CONFIGS` or a ``ModelConfig``.
        decoder_only: require a decoder-only model (one that keeps a key/value cache).

    Raises:
        KeyError: an unknown name. ValueError: not decoder-only when ``decoder_only`` is set.
    """
    config = MODEL_CONFIGS.get(model) if isinstance(model, str) else model
    if not isinstance(config, ModelConfig):
        known = [n for n, c in MODEL_CONFIGS.items() if c.kind == "decoder" or not decoder_only]
        raise KeyError(f"unknown model {model!r}; known models: {', '.join(known)}")
    if decoder_only and config.kind != "decoder":
        raise ValueError(f"{config.name} is an {config.kind} model; only decoder-only models keep a KV cache")
    return config


# The columns of the configurations' table by topic, so that a page shows three narrow tables instead of one
# wide one; each starts with the model's name.
TOPICS: dict[str, tuple[str, ...]] = {
    "shapes": ("model", "kind", "d_model", "h", "n_kv_heads", "d_k", "attention", "layers"),
    "positions": ("model", "positions", "rope base", "rope scaling", "QK-norm", "soft-cap", "sinks", "gate"),
    "memory": ("model", "layer kinds", "window", "latent", "trained context", "max context"),
}
COLUMNS = tuple(dict.fromkeys(name for topic in TOPICS.values() for name in topic))  # every column, once


def _latent(c: ModelConfig) -> str:
    """Latent attention's cached widths, ``"512 + 64"``, with an indexer's key ``"512 + 64 + 128 index"``."""
    if c.kv_latent is None:
        return "—"
    index = f" + {c.indexer.dim} index" if c.indexer is not None and c.indexer.ratio is None else ""
    return f"{c.kv_latent} + {c.rope_dim or 0}{index}"


def _compact(x: float) -> str:
    """A rotary base in few characters: ``10000.0 -> "10k"``, ``1e6 -> "1M"``, ``150000.0 -> "150k"``."""
    for size, suffix in ((1_000_000, "M"), (1000, "k")):
        if x >= size and x % size == 0:
            return f"{int(x // size)}{suffix}"
    return f"{x:g}"


def _rope_base(c: ModelConfig) -> str:
    if c.rope_theta is None:
        return "—"
    local = "" if c.local_rope_theta is None else f" ({_compact(c.local_rope_theta)} local)"
    return _compact(c.rope_theta) + local


def _positions(c: ModelConfig) -> str:
    """``"rotary"``, with the share of a head that turns and its form where the model sets them
    (``"rotary 0.25, proportional"``) and the layers without positions (``"rotary, none 1 in 4"``)."""
    text = c.positions + ("" if c.rope_fraction is None else f" {c.rope_fraction:g}")
    text += "" if c.rope_style in (None, "half-split") else f", {c.rope_style}"
    return text if c.nope_period is None else f"{text}, none 1 in {c.nope_period}"


def config_rows(configs: dict[str, ModelConfig] | None = None) -> list[dict[str, str | int]]:
    """Configurations as table rows, one dict per model with the keys :data:`COLUMNS`, ready for
    ``pandas.DataFrame(config_rows()).set_index("model")``; :data:`TOPICS` groups the columns.

    Args:
        configs: the models to show; defaults to :data:`MODEL_CONFIGS`.

    Returns:
        Rows with the name and kind, the integer shapes (``d_k`` is the head width, ``d_model / h`` unless
        the model sets it apart), the attention kind (``"MHA"``, ``"GQA"``, ``"MQA"`` or ``"MLA"``),
        ``layers`` (per stack), ``window`` (tokens a local layer sees), ``layer kinds``
        (:attr:`ModelConfig.pattern`), ``latent`` (latent attention's cached widths, e.g. ``"512 + 64"``, and
        an indexer's key, ``"512 + 64 + 128 index"``),
        ``trained context`` (:attr:`ModelConfig.trained_context`) and ``max context``
        (:attr:`ModelConfig.max_context`), ``positions`` (with the layers that have none), ``rope base``
        (``"500k"``; Gemma 3's local layers in brackets), ``rope scaling`` (:class:`RopeScaling` in short,
        ``"(card)"`` where the model card recommends it and config.json does not ship it), ``QK-norm``,
        ``soft-cap``, ``sinks`` and ``gate``; ``positions`` adds the share of a head that turns and its form
        (``"rotary 0.25, proportional"``) where a model sets them. A missing value is ``"—"`` (no key/value
        heads of its own, no window, no latent, no context stated or no limit, no rotary positions, no
        option), so that a table column stays readable, not floats with a NaN.
    """
    configs = MODEL_CONFIGS if configs is None else configs

    def dash(value: object) -> object:
        return "—" if value is None else value

    rows = [
        {
            "model": c.name,
            "kind": c.kind,
            "d_model": c.d_model,
            "h": c.h,
            "n_kv_heads": dash(c.n_kv_heads),
            "d_k": c.d_k,
            "attention": c.attention,
            "layers": c.n_layers,
            "window": dash(c.window),
            "layer kinds": c.pattern,
            "latent": _latent(c),
            "trained context": dash(c.trained_context),
            "max context": dash(c.max_context),
            "positions": _positions(c),
            "rope base": _rope_base(c),
            "rope scaling": dash(None if c.rope_scaling is None else str(c.rope_scaling)),
            "QK-norm": dash(c.qk_norm),
            "soft-cap": dash(None if c.softcap is None else f"{c.softcap:g}"),
            "sinks": "yes" if c.sinks else "—",
            "gate": "yes" if c.gate else "—",
        }
        for c in configs.values()
    ]
    return [{name: row[name] for name in COLUMNS} for row in rows]  # in the order of the topics


def configs_table(
    configs: dict[str, ModelConfig] | None = None,
    *,
    fmt: str = "markdown",
    columns: tuple[str, ...] = COLUMNS,
) -> str:
    """Render configurations as a table, one row per model, columns computed from the data.

    Args:
        configs: the models to show; defaults to :data:`MODEL_CONFIGS`.
        fmt: ``"markdown"`` (plain text that reads well in a terminal too) or ``"html"``.
        columns: which columns of :data:`COLUMNS`, in order (e.g. ``TOPICS["positions"]``).

    Returns:
        The table of :func:`config_rows` as a string.
    """
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown or not columns:
        raise ValueError(f"columns must be a non-empty tuple of names in COLUMNS, got unknown {unknown}")
    header = list(columns)
    rows = [[str(row[c]) for c in columns] for row in config_rows(configs)]
    if fmt == "html":
        head = "".join(f"<th>{html.escape(x)}</th>" for x in header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in row) + "</tr>" for row in rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if fmt != "markdown":
        raise ValueError(f"fmt must be 'markdown' or 'html', got {fmt!r}")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    numeric = {"d_model", "h", "n_kv_heads", "d_k", "layers", "window", "trained context", "max context"}

    def line(cells: list[str]) -> str:
        # text columns to the left, numbers to the right
        padded = [
            c.rjust(w) if name in numeric else c.ljust(w)
            for name, c, w in zip(header, cells, widths, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])
