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
    for config in configs:  # a model that differs from its family says so: replace(family, ...)
        described = {k: getattr(config, k) for k in parts_of(layer)}
        built = parts_of(family_layer(config.family, 32, 4, n_kv_heads=2, rotary=rotary,
                                      keys_as_values=config.family.keys_as_values))  # fmt: skip
        assert described == built, config.name
    x = torch.randn(1, 5, 32)
    full, _ = layer(x, mask=mha.causal_mask(5))
    _, _, cache = layer.decode(x[:, :4])
    torch.testing.assert_close(layer.decode(x[:, 4:], cache)[0], full[:, 4:], rtol=0, atol=1e-5)


def test_every_converter_of_multihead_attention_is_a_family():
    families = {target.name for target in CONVERTERS.values() if isinstance(target, Family)}
    assert families == set(FAMILIES)
    assert CONVERTERS["Qwen3_5Attention"] is CONVERTERS["Qwen3NextAttention"]  # the same layer


def test_a_field_a_family_states_is_stated_once():
    config = MODEL_CONFIGS["Qwen3-8B"]
    assert (config.qk_norm, config.family) == ("per head", QWEN3)
    with pytest.raises(ValueError, match="sinks: the family Qwen3 states them"):
        replace(config, sinks=True)
    assert replace(config, qk_norm="per head") == config  # the family's own value is no conflict
    maverick = MODEL_CONFIGS["Llama 4 Maverick"]
    assert maverick.family == replace(LLAMA4, qk_norm=None) and maverick.qk_norm is None
    with pytest.raises(TypeError, match=r"family must be an mha\.families\.Family"):
        ModelConfig("toy", 8, 2, 2, 1, 8, 8, "decoder", "a test", positions="rotary", family="Qwen3")


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
