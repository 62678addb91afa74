"""Today's decoder families, as data: what each adds to Llama's attention layer, stated once.

Each family is Llama's layer (rotary positions, grouped-query heads) plus a few parts, which is how
transformers' modular files state them too (``modular_qwen3.py``: Qwen3 is Llama plus a norm). The same
:class:`Family` is read twice: ``mha.pretrained.from_transformers`` builds a family's layer from it (and reads
the numbers, sizes and bases, from the transformers module and config), and :class:`mha.costs.ModelConfig`
fills its columns from it (``family=``), so a published configuration and a converted layer cannot disagree
on what a family does. A model that differs from its family says so with :func:`dataclasses.replace`
(Llama 4 Maverick is Llama 4 without QK-norm).

The names of the parts are :class:`mha.MultiHeadAttention`'s: ``q_norm``/``k_norm`` (``qk_norm``), ``v_norm``,
``positions`` (``rope_style``, ``temperature``), ``softmax`` (``sinks``), ``band`` (``chunked``), ``gate``,
and the subclass :class:`mha.multihead.KeysAsValues` (``keys_as_values``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

QK_NORMS = ("x w", "x (1 + w)", "weightless")  # an RMSNorm per head, its weight stored as w or as w - 1, none
ROPE_STYLES = ("half-split", "interleaved", "proportional")  # as mha.positional.Rotary's style


@dataclass(frozen=True)
class Family:
    """The parts a family adds to Llama's attention layer (each ``None`` or ``False``: Llama's own).

    Raises:
        ValueError: a ``qk_norm`` or ``rope_style`` outside :data:`QK_NORMS`, :data:`ROPE_STYLES`.
    """

    name: str  # the family, e.g. "Qwen3"
    source: str  # transformers' modeling file, where each part was read (transformers 5.23.0)
    qk_norm: str | None = None  # an RMSNorm over each head's query and key, one of QK_NORMS; None: none
    v_norm: bool = False  # a weightless RMSNorm over each head's value (Gemma 4)
    gate: bool = False  # an output gate sigmoid(x W_g), its rows in q_proj after each head's query
    sinks: bool = False  # a learned sink logit per head (gpt-oss)
    rope_style: str = "half-split"  # the rotary layout of its full layers (Gemma 4: its sliding layers' is
    # half-split, as the config's rope_type says per layer type)
    partial_rotary: bool = False  # a default rotary turns partial_rotary_factor of each head (Qwen3-Next)
    keys_as_values: bool = False  # its full layers' keys double as values (Gemma 4's attention_k_eq_v)
    temperature: bool = False  # its layers without positions tune their temperature (Llama 4's NoPE layers)
    chunked: bool = False  # its local layers see their own chunk, not a sliding window (Llama 4)

    def __post_init__(self) -> None:
        if self.qk_norm is not None and self.qk_norm not in QK_NORMS:
            raise ValueError(f"{self.name}: qk_norm must be one of {QK_NORMS} or None, got {self.qk_norm!r}")
        if self.rope_style not in ROPE_STYLES:
            raise ValueError(f"{self.name}: rope_style must be one of {ROPE_STYLES}, got {self.rope_style!r}")


_HF = "transformers/models/{}"
LLAMA = Family("Llama", _HF.format("llama/modeling_llama.py"))
QWEN3 = replace(LLAMA, name="Qwen3", source=_HF.format("qwen3/modular_qwen3.py"), qk_norm="x w")
QWEN3_NEXT = replace(  # Qwen3.5's attention is the same layer (qwen3_5/modular_qwen3_5.py)
    QWEN3,
    name="Qwen3-Next",
    source=_HF.format("qwen3_next/modular_qwen3_next.py"),
    qk_norm="x (1 + w)",
    gate=True,
    partial_rotary=True,
)
GEMMA3 = replace(LLAMA, name="Gemma 3", source=_HF.format("gemma3/modular_gemma3.py"), qk_norm="x (1 + w)")
GEMMA4 = replace(
    LLAMA,
    name="Gemma 4",
    source=_HF.format("gemma4/modular_gemma4.py"),
    qk_norm="x w",
    v_norm=True,
    rope_style="proportional",
    keys_as_values=True,
)
GPT_OSS = replace(LLAMA, name="gpt-oss", source=_HF.format("gpt_oss/modular_gpt_oss.py"), sinks=True)
LLAMA4 = replace(
    LLAMA,
    name="Llama 4",
    source=_HF.format("llama4/modeling_llama4.py"),
    qk_norm="weightless",
    rope_style="interleaved",
    temperature=True,
    chunked=True,
)
FAMILIES = {f.name: f for f in (LLAMA, QWEN3, QWEN3_NEXT, GEMMA3, GEMMA4, GPT_OSS, LLAMA4)}
