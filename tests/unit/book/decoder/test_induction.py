"""The measurements of induction heads (book.decoder.induction) on constructed cases and the shipped decoder.

The constructed cases know their answer: a fake model whose heads attend exactly like an induction head or a
previous-token head scores 1 on its pattern; an oracle that copies scores 1 on the second copy. The shipped
decoder's own numbers (what the chapter prints and the issue asks of it) are tested in
tests/unit/book/decoder/test_model.py.
"""

import math
import string

import pandas as pd
import pytest
import torch
from torch import nn

import book.decoder.model as decoder
from book.decoder import induction
from book.decoder.model import DECODER, ORDINARY, VOCABULARY, Decoder


@pytest.fixture(scope="module")
def sequences():
    return induction.repeated_sequences(24, seed=3)


def test_repeated_sequences_are_distinct_ordinary_tokens_twice(sequences):
    tokens, lengths = sequences
    assert tokens.shape == (24, 2 * induction.LENGTHS[1]) and lengths.shape == (24,)
    ordinary = {VOCABULARY.index(c) for c in ORDINARY}
    for row, m in zip(tokens, lengths.tolist(), strict=True):
        assert induction.LENGTHS[0] <= m <= induction.LENGTHS[1]
        first, second = row[:m].tolist(), row[m : 2 * m].tolist()
        assert first == second and len(set(first)) == m and set(first) <= ordinary
    again, _ = induction.repeated_sequences(24, seed=3)
    assert torch.equal(again, tokens)
    assert not torch.equal(induction.repeated_sequences(24, seed=4)[0], tokens)


def test_repeated_sequences_draw_from_a_chosen_alphabet():
    tokens, lengths = induction.repeated_sequences(
        12, lengths=(5, 26), seed=1, alphabet=string.ascii_lowercase
    )
    assert tokens.shape == (12, 52)
    letters = {VOCABULARY.index(c) for c in string.ascii_lowercase}
    for row, m in zip(tokens, lengths.tolist(), strict=True):
        first, second = row[:m].tolist(), row[m : 2 * m].tolist()
        assert first == second and len(set(first)) == m and set(first) <= letters
    default, _ = induction.repeated_sequences(5, seed=3)
    assert torch.equal(induction.repeated_sequences(5, seed=3, alphabet=ORDINARY)[0], default)


@pytest.mark.parametrize(
    ("alphabet", "lengths", "match"),
    [("abca", (2, 3), "distinct tokens"), ("ab\u00e9", (2, 3), "distinct tokens"), ("abc", (2, 4), "<= 3")],
)
def test_repeated_sequences_refuse_a_bad_alphabet(alphabet, lengths, match):
    with pytest.raises(ValueError, match=match):
        induction.repeated_sequences(2, lengths=lengths, alphabet=alphabet)


@pytest.mark.parametrize("lengths", [(1, 5), (10, 5), (20, 95)])
def test_repeated_sequences_refuse_impossible_lengths(lengths):
    with pytest.raises(ValueError, match="lengths must satisfy"):
        induction.repeated_sequences(2, lengths=lengths)


def test_each_copy_scores_m_minus_1_predictions(sequences):
    tokens, lengths = sequences
    first, second = induction._copy_masks(lengths, tokens.size(1))
    assert torch.equal(first.sum(1), lengths - 1) and torch.equal(second.sum(1), lengths - 1)
    assert not (first & second).any()


class Scripted(nn.Module):
    """A stand-in for the decoder: given logits and attention patterns, whatever the tokens."""

    def __init__(self, lengths, n, *, copy=False):
        super().__init__()
        self.lengths, self.n, self.copy = lengths, n, copy

    def forward(self, tokens, off=()):
        S, n = tokens.shape
        attention = torch.zeros(S, 2, 2, n, n)
        i = torch.arange(n)
        attention[:, 0, 1, i[1:], i[1:] - 1] = 1.0  # layer 0, head 1: previous token
        attention[:, 0, 1, 0, 0] = 1.0
        for s, m in enumerate(self.lengths.tolist()):
            attention[s, 1, 0] = torch.tril(torch.ones(n, n)) / torch.arange(1, n + 1)[:, None]
            q = torch.arange(m, 2 * m)
            attention[s, 1, 0, q] = 0.0
            attention[s, 1, 0, q, q - m + 1] = 1.0  # layer 1, head 0: induction
        for layer, j in ((0, 0), (1, 1)):
            attention[:, layer, j] = torch.tril(torch.ones(n, n)) / torch.arange(1, n + 1)[:, None]
        logits = torch.zeros(S, n, len(VOCABULARY))
        if self.copy:  # the oracle: on the second copy, the token after the earlier occurrence
            for s, m in enumerate(self.lengths.tolist()):
                for i in range(m, 2 * m - 1):
                    logits[s, i, tokens[s, i - m + 1]] = 10.0
        return logits, attention


def test_head_scores_find_the_scripted_heads(sequences):
    tokens, lengths = sequences
    scores = induction.head_scores(Scripted(lengths, tokens.size(1)), tokens, lengths)
    assert scores["induction"].shape == scores["previous"].shape == (2, 2)
    assert scores["induction"][1, 0] == pytest.approx(1.0) and scores["previous"][0, 1] == pytest.approx(1.0)
    assert scores["induction"][0, 1] == pytest.approx(0.0) and scores["previous"][1, 0] < 0.05
    assert induction.find_heads(scores["induction"], induction.INDUCTION_THRESHOLD) == [(1, 0)]
    assert induction.find_heads(scores["previous"], induction.PREVIOUS_THRESHOLD) == [(0, 1)]


def test_find_heads_sorts_by_score():
    scores = torch.tensor([[0.1, 0.9], [0.5, 0.7]])
    assert induction.find_heads(scores, 0.5) == [(0, 1), (1, 1), (1, 0)]
    assert induction.find_heads(scores, 0.95) == []


def test_copy_accuracy_of_an_oracle_is_one_on_the_second_copy(sequences):
    tokens, lengths = sequences
    result = induction.copy_accuracy(Scripted(lengths, tokens.size(1), copy=True), tokens, lengths)
    assert result["second"] == 1.0
    # logits all zero on the first copy: argmax is token 0 ("\n"), never an ordinary token
    assert result["first"] == 0.0 and result["first_loss"] == pytest.approx(math.log(len(VOCABULARY)))
    assert result["second_loss"] < result["first_loss"]


def test_head_name_is_one_based():
    assert induction.head_name(0, 2) == "L1H3"


@pytest.fixture(scope="module")
def model():
    return decoder.shipped_decoder()


def test_ablation_table_has_a_row_per_case(model, sequences):
    tokens, lengths = sequences
    table = induction.ablation_table(model, tokens, lengths, {"pair": [(0, 0), (1, 1)]})
    assert isinstance(table, pd.DataFrame)
    heads = [induction.head_name(layer, j) for layer in range(DECODER.layers) for j in range(DECODER.h)]
    assert list(table.index) == ["none", "pair", *heads]
    assert list(table.columns) == ["off", "first", "second", "second_loss", "change"]
    assert table.loc["none", "change"] == 0.0
    expected = induction.copy_accuracy(model, tokens, lengths, off=[(0, 0), (1, 1)])["second"]
    assert table.loc["pair", "second"] == expected


def test_path_patching_rows_agree_with_the_plain_runs(model, sequences):
    tokens, lengths = sequences
    heads, readers = [(0, 1)], [(1, 0), (1, 2)]
    table = induction.path_patching(model, tokens, lengths, heads, readers=readers)
    assert list(table.index) == ["none", "q", "k", "v", "all"]
    assert table.loc["none", "second"] == induction.copy_accuracy(model, tokens, lengths)["second"]
    assert table.loc["all", "second"] == induction.copy_accuracy(model, tokens, lengths, off=heads)["second"]
    plain = induction.head_scores(model, tokens, lengths)["induction"]
    assert table.loc["none", "induction"] == pytest.approx(
        torch.stack([plain[p] for p in readers]).mean().item()
    )
    assert table["induction"].notna().all()
    assert induction.path_patching(model, tokens, lengths, heads)["induction"].isna().all()


def test_off_in_removes_a_head_from_one_path_only(model, sequences):
    tokens, _ = sequences
    plain_logits, plain = model(tokens)
    # removing from the queries and keys of layer 1 is what switching the head off does to layer 1's weights
    _, cut = model(tokens, off_in={"q": [(0, 2)], "k": [(0, 2)]})
    _, off = model(tokens, off=[(0, 2)])
    torch.testing.assert_close(cut[:, 1], off[:, 1], rtol=0, atol=1e-5)  # x - head vs. x without it
    torch.testing.assert_close(cut[:, 0], plain[:, 0], rtol=0, atol=0)  # layer 0 reads nothing of itself
    # a head of the last layer has no later reader: nothing changes
    logits, _ = model(tokens, off_in={"k": [(1, 0)], "v": [(1, 0)]})
    torch.testing.assert_close(logits, plain_logits, rtol=0, atol=0)
    with pytest.raises(ValueError, match="off_in's keys"):
        model(tokens, off_in={"x": [(0, 0)]})
    with pytest.raises(ValueError, match=r"off_in\['k'\] must hold"):
        model(tokens, off_in={"k": [(0, 9)]})


def test_head_outputs_sum_to_the_layer_output(model, sequences):
    tokens, _ = sequences
    block = model.layers[0]
    x = block.norm(model.embed(tokens))
    steps = {}  # the layer's intermediates, from its forward
    block.attn(x, mask=torch.ones(tokens.size(1), tokens.size(1), dtype=torch.bool).tril(), record=steps)
    total = sum(model.head_output(0, steps["heads"], j) for j in range(DECODER.h))
    torch.testing.assert_close(total, steps["out"], rtol=0, atol=1e-5)


def test_composition_scores_are_normalised_and_scale_free(model):
    scores = induction.composition_scores(model)
    for kind in ("k", "q", "v"):
        assert scores[kind].shape == (DECODER.h, DECODER.h)
        assert ((scores[kind] > 0) & (scores[kind] <= 1)).all()
    assert 0 < scores["baseline"] < 1
    scaled = Decoder(DECODER)
    scaled.load_state_dict(model.state_dict())
    with torch.no_grad():
        scaled.layers[0].attn.W_v.weight.mul_(3.0)  # a head that writes 3 times louder composes as much
        scaled.layers[1].attn.W_q.weight.mul_(0.5)
    again = induction.composition_scores(scaled)
    for kind in ("k", "q", "v"):
        torch.testing.assert_close(again[kind], scores[kind], rtol=1e-4, atol=1e-6)


def test_composition_scores_see_a_constructed_k_composition():
    """Head 2 of layer 1 writes into a subspace that only head 2 of layer 2's keys read.

    Then W_QK W_OV keeps all of W_OV's norm and the score is 1 / sqrt(d_k) (W_QK is a projection of rank d_k);
    a head writing in random directions keeps only the share d_k / d_model of it, half as much here. The
    score's scale is why the chapter compares it with random matrices (``baseline``).
    """
    torch.manual_seed(0)
    model = Decoder(DECODER)
    d, d_k = DECODER.d_model, DECODER.d_model // DECODER.h
    with torch.no_grad():
        for layer in model.layers:
            layer.norm.weight.fill_(1.0)
        W_o, W_k = model.layers[0].attn.W_o.weight, model.layers[1].attn.W_k.weight
        W_o[:, d_k : 2 * d_k] = 0.0
        W_o[:d_k, d_k : 2 * d_k] = torch.eye(d_k)  # head 2 writes into coordinates 0..d_k-1
        W_k[d_k : 2 * d_k] = torch.eye(d)[:d_k]  # head 2 of layer 2 keys on exactly those coordinates
        model.layers[1].attn.W_q.weight[d_k : 2 * d_k] = torch.eye(d)[:d_k]
    scores = induction.composition_scores(model)
    assert scores["k"][1, 1] == pytest.approx(d_k**-0.5, rel=1e-5)
    others = scores["k"][[0, 2, 3], 1]
    assert (others < 0.75 * scores["k"][1, 1]).all()


def test_training_curves_read_the_shipped_log():
    table = induction.training_curves()
    log = induction.load_log()
    assert list(table.index) == log["curves"]["step"]
    assert {"loss", "icl", "first", "second", "first_loss", "second_loss"} <= set(table.columns)
    assert "induction L2H1" in table.columns and "previous L1H1" in table.columns
    assert table.index[0] == 0 and table.index[-1] == log["train"]["steps"]


def test_shown_makes_spaces_and_newlines_visible():
    assert [induction.shown(t) for t in (" ", "\n", "a", decoder.UNKNOWN)] == [
        "\u2423",
        "\u23ce",
        "a",
        "\ufffd",
    ]


def test_top_predictions_tabulate_predict_at_the_chosen_positions():
    text = "The cat sat on the mat. The cat"
    result = decoder.predict(text)
    table = induction.top_predictions(result, [0, 4, len(text) - 1], context=6)
    assert list(table.index) == [0, 4, len(text) - 1] and table.index.name == "position"
    assert list(table.columns) == ["text", "next", "rank", "top 1", "top 2", "top 3", "top 4", "top 5"]
    assert table.loc[0, "text"] == "T" and table.loc[0, "next"] == "h"
    assert table.loc[4, "text"] == "The\u2423c" and table.loc[4, "next"] == "a"
    assert table.loc[len(text) - 1, "next"] == "" and table.loc[len(text) - 1, "rank"] == 0
    for i in (0, 4):
        candidates = [t for t, _ in result["top"][i]]
        following = text[i + 1]
        assert table.loc[i, "rank"] == (candidates.index(following) + 1 if following in candidates else 0)
        assert [table.loc[i, f"top {r}"] for r in range(1, 6)] == [
            f"{induction.shown(t)}\u00a0{p:.2f}" for t, p in result["top"][i]
        ]
    assert len(induction.top_predictions(result)) == len(text)


@pytest.mark.parametrize("positions", [[-1], [31], [1.0], [True]])
def test_top_predictions_refuse_positions_outside_the_text(positions):
    with pytest.raises(ValueError, match=r"positions must be ints in 0\.\.30"):
        induction.top_predictions(decoder.predict("The cat sat on the mat. The cat"), positions)


def test_next_token_probabilities_are_the_softmax_at_the_true_next_token(model, sequences):
    tokens, _ = sequences
    tokens = tokens[:3]
    p = induction.next_token_probabilities(model, tokens)
    assert p.shape == (3, tokens.size(1) - 1)
    logits, _ = model(tokens)
    expected = torch.softmax(logits.double(), -1)[0, 5, tokens[0, 6]]
    assert p[0, 5].item() == pytest.approx(expected.item(), abs=1e-6)
    off = induction.next_token_probabilities(model, tokens, off=[(1, 0), (1, 1), (1, 2), (1, 3)])
    logits_off, _ = model(tokens, off=[(1, 0), (1, 1), (1, 2), (1, 3)])
    expected_off = torch.softmax(logits_off, -1)[:, :-1].gather(-1, tokens[:, 1:, None])[..., 0]
    torch.testing.assert_close(off, expected_off, rtol=0, atol=1e-6)
    assert not torch.allclose(off, p, atol=1e-3)
