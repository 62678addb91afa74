"""mha.scores: the scale and the soft-cap, and the sinks, each against its formula."""

import math

import pytest
import torch

import mha
from mha.scores import Sinks, SoftCap
from tests.unit.mha.parts import D_K, H, inputs, layer, recorded


@pytest.mark.parametrize(
    ("parts", "formula"),
    [
        ({"scale": 0.5}, lambda s: 0.5 * s),
        ({"scores": SoftCap(2.0)}, lambda s: 2.0 * torch.tanh(s / math.sqrt(D_K) / 2.0)),
        ({"scale": 0.5, "scores": SoftCap(2.0)}, lambda s: 2.0 * torch.tanh(0.5 * s / 2.0)),
    ],
)
def test_scale_and_softcap_shape_the_scores(parts, formula):
    steps = recorded(layer(**parts), inputs())
    torch.testing.assert_close(steps["scaled_scores"], formula(steps["scores"]), rtol=0, atol=1e-12)
    if "scores" in parts:
        assert steps["scaled_scores"].abs().max() < parts["scores"].cap  # every score inside (-c, c)


def test_sinks_take_a_share_of_each_softmax_and_are_dropped():
    attn = layer(softmax=Sinks(H))
    steps = recorded(attn, inputs(), mask=mha.causal_mask(9))
    logits = steps["scaled_scores"].masked_fill(~mha.causal_mask(9), -math.inf)  # (B, h, n, n)
    sinks = attn.softmax.sinks
    expected = torch.softmax(torch.cat([logits, sinks[:, None, None].expand(*logits.shape[:-1], 1)], -1), -1)
    torch.testing.assert_close(steps["weights"], expected[..., :-1], rtol=0, atol=1e-12)
    weights, sink = attn.softmax.weights(logits)  # (B, h, n, n), (B, h, n): the share each row gives the sink
    torch.testing.assert_close(sink, expected[..., -1], rtol=0, atol=1e-12)
    torch.testing.assert_close(weights.sum(-1) + sink, torch.ones(2, H, 9, dtype=torch.float64))
    assert sink.shape == (2, H, 9) and sink.min() > 0


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: SoftCap("50"), TypeError, "cap must be a positive number"),
    ],
)
def test_a_bad_cap_raises_an_error_that_names_it(make, error, words):
    with pytest.raises(error, match=words):
        make()
