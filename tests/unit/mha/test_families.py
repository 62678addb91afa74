"""mha.families: each family's parts stated once, read alike by its layers and its configurations."""

from dataclasses import replace

import pytest
import torch

import mha
from mha.costs import MODEL_CONFIGS, ModelConfig
from mha.families import FAMILIES, LLAMA4, QWEN3, Family
from mha.positional import Rotary
from mha.pretrained import CONVERTERS, family_layer


def parts_of(layer):
    """What a built layer has, in ModelConfig's words."""
    return {
        "qk_norm": "per head" if isinstance(layer.q_norm, torch.nn.RMSNorm) else None,
        "sinks": isinstance(layer.softmax, mha.scores.Sinks),
        "gate": isinstance(layer.gate, mha.gates.OutputGate),
        "rope_style": layer.positions.style,
        "k_eq_v": isinstance(layer, mha.multihead.KeysAsValues),
    }


@pytest.mark.parametrize("name", list(FAMILIES))
def test_a_family_builds_the_layer_its_configurations_describe(name):
    family = FAMILIES[name]
    rotary = Rotary(1e4, fraction=0.5, style=family.rope_style)  # the style of the family's full layers
    layer = family_layer(family, 32, 4, n_kv_heads=2, rotary=rotary, keys_as_values=family.keys_as_values)
    configs = [c for c in MODEL_CONFIGS.values() if c.family is not None and c.family.name == name]
    assert configs, f"no published configuration of {name}"
    for config in configs:  # each field its family states, as the family's layer has it
        described = {k: getattr(config, k) for k in parts_of(layer)}
        differs = {"Llama 4 Maverick": {"qk_norm"}, "Gemma 4 E2B": {"k_eq_v"}}.get(config.name, set())
        assert {k for k in described if described[k] != parts_of(layer)[k]} == differs, config.name
    x = torch.randn(1, 5, 32)
    full, _ = layer(x, mask=mha.causal_mask(5))
    _, _, cache = layer.decode(x[:, :4])
    torch.testing.assert_close(layer.decode(x[:, 4:], cache)[0], full[:, 4:], rtol=0, atol=1e-5)


def test_every_converter_of_multihead_attention_is_a_family():
    families = {target.name for target in CONVERTERS.values() if isinstance(target, Family)}
    assert families == set(FAMILIES)
    assert CONVERTERS["Qwen3_5Attention"] is CONVERTERS["Qwen3NextAttention"]  # the same layer


def test_a_config_takes_its_family_s_fields_unless_it_says_it_differs():
    config = MODEL_CONFIGS["Qwen3-8B"]
    assert (config.qk_norm, config.sinks, config.family) == ("per head", False, QWEN3)
    assert replace(config, sinks=True).sinks  # a model that differs from its family says so
    maverick, scout = MODEL_CONFIGS["Llama 4 Maverick"], MODEL_CONFIGS["Llama 4 Scout"]
    assert maverick.family == scout.family == LLAMA4  # Maverick states qk_norm=None: use_qk_norm false
    assert (maverick.qk_norm, scout.qk_norm) == (None, "per head")
    assert (maverick.rope_style, maverick.chunked) == ("interleaved", True)
    gemma = MODEL_CONFIGS["Gemma 4 31B"]
    assert gemma.k_eq_v and not replace(gemma, k_eq_v=False).k_eq_v  # what-if: values of their own
    toy = {"name": "toy", "d_model": 8, "h": 2, "n_kv_heads": 2, "n_layers": 1, "trained_context": 8,
           "max_context": 8, "kind": "decoder", "source": "a test", "positions": "rotary"}  # fmt: skip
    assert (ModelConfig(**toy).qk_norm, ModelConfig(**toy).sinks) == (None, False)  # no family: none
    with pytest.raises(TypeError, match=r"family must be an mha\.families\.Family"):
        ModelConfig(**toy, family="Qwen3")


@pytest.mark.parametrize(
    ("changes", "words"),
    [({"qk_norm": "x"}, "qk_norm must be one of"), ({"rope_style": "spiral"}, "rope_style must be one of")],
)
def test_bad_families_raise_naming_the_field(changes, words):
    with pytest.raises(ValueError, match=words):
        replace(QWEN3, **changes)


def test_a_family_builds_only_the_layers_it_has():
    with pytest.raises(ValueError, match="chunk=4: the family Qwen3 has no such layers"):
        family_layer(QWEN3, 32, 4, chunk=4)
    with pytest.raises(ValueError, match="keys_as_values=True: the family Qwen3"):
        family_layer(QWEN3, 32, 4, keys_as_values=True)
    with pytest.raises(TypeError, match=r"family must be an mha\.families\.Family"):
        family_layer("Qwen3", 32, 4)
