"""mha.pretrained.heads: the head census and its classification, ablating heads, and the pruning search, on
toy encoders whose answer is known and on all-MiniLM-L6-v2 (the ``minilm`` fixture)."""

from __future__ import annotations

import math

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors

from book.minilm.census import load_corpus
from mha.pretrained.heads import (
    ablate_encoder_heads,
    ablated_embeddings,
    classify_heads,
    greedy_pruning,
    head_census,
    mean_cosine,
    paraphrase_accuracy,
    single_head_ablation,
)
from mha.pretrained.minilm import MiniLMConfig, MiniLMEncoder, sentence_embeddings

TEXTS = [
    "Hi.",
    "The cat sat on the mat, and the cat slept.",
    "Three, two, one: lift-off at 9:41 on 12 March 2024!",
    "She said that she would call her sister after dinner, unless her sister called first.",
]


# --- census --------------------------------------------------------------------------------------------


def _uniform_encoder() -> MiniLMEncoder:
    """A one-layer toy encoder whose two heads attend uniformly to the real tokens (W_q = W_k = 0)."""
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "a": 4, "b": 5}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    config = MiniLMConfig(vocab_size=6, max_positions=16, d_model=8, h=2, d_ff=16, n_layers=1)
    encoder = MiniLMEncoder(config, tokenizer).eval()
    with torch.no_grad():
        for linear in (encoder.layers[0].attn.W_q, encoder.layers[0].attn.W_k):
            linear.weight.zero_()
            linear.bias.zero_()
    return encoder


def test_census_of_uniform_heads_on_a_crafted_batch():
    # "[CLS] a b a [SEP]" (5 real tokens) and "[CLS] b [SEP]" (3, plus 2 padding): every real row puts 1/5
    # or 1/3 on each real key.
    census = head_census(_uniform_encoder(), ["a b a", "b"])
    assert census["cls"].shape == (1, 2)
    rows = 5 * [1 / 5] + 3 * [1 / 3]  # one value per real row
    expected = {
        "cls": sum(rows) / 8,
        "sep": sum(rows) / 8,
        "self": sum(rows) / 8,
        "previous": (4 / 5 + 2 / 3) / 6,  # rows after [CLS]
        "next": (4 / 5 + 2 / 3) / 6,  # rows before [SEP]
        "same_token": 1 / 5,  # only the two "a"s, each with one other "a"
        "entropy": (5 * math.log(5) + 3 * math.log(3)) / 8,
        "entropy_normalised": 1.0,
    }
    for name, value in expected.items():
        torch.testing.assert_close(census[name], torch.full((1, 2), value), msg=name)


def test_layer_1_head_3_attends_to_the_previous_token(minilm):
    census = head_census(minilm, load_corpus()["sentences"][:10])
    assert census["previous"][0, 2] > 0.95  # "layer 1, head 3" counted from 1
    assert classify_heads(census)[0][2] == "previous"
    assert all(census[name].min() >= 0.0 and census[name].max() <= 1.0 for name in ("cls", "self"))


def test_classify_heads_follows_its_rule():
    census = {name: torch.zeros(1, 3) for name in ("cls", "sep", "previous", "next", "self", "same_token")}
    census["cls"][0, 0] = 0.9  # dominated
    census["entropy_normalised"] = torch.tensor([[0.1, 0.9, 0.1]])  # broad, then mixed
    assert classify_heads(census) == [["cls", "broad", "mixed"]]
    with pytest.raises(ValueError, match="min_share"):
        classify_heads(census, min_share=0.0)
    with pytest.raises(ValueError, match="census"):
        classify_heads({"cls": census["cls"]})


# --- ablation ------------------------------------------------------------------------------------------


def test_ablating_no_heads_changes_nothing(minilm):
    assert torch.equal(ablated_embeddings(minilm, TEXTS, []), sentence_embeddings(minilm, TEXTS))


def test_ablating_a_whole_layer_changes_the_embeddings_and_is_undone(minilm):
    intact = sentence_embeddings(minilm, TEXTS)
    ablated = ablated_embeddings(minilm, TEXTS, [(3, i) for i in range(12)])
    assert mean_cosine(ablated, intact) < 0.99
    with ablate_encoder_heads(minilm, [(0, 2), (5, 11)]):
        assert not torch.allclose(sentence_embeddings(minilm, TEXTS), intact)
    assert torch.equal(sentence_embeddings(minilm, TEXTS), intact)  # hooks removed on exit
    with pytest.raises(ValueError, match="layer, head"):
        ablated_embeddings(minilm, TEXTS, [(6, 0)])


def test_paraphrase_accuracy_on_crafted_embeddings():
    a = torch.eye(4)  # four orthogonal "sentences"
    assert paraphrase_accuracy(torch.cat([a, a + 0.1])) == 1.0  # each one's partner is its twin
    assert paraphrase_accuracy(torch.cat([a, a.roll(1, dims=0)])) == 0.0  # partners point elsewhere
    with pytest.raises(ValueError, match="2N"):
        paraphrase_accuracy(torch.zeros(3, 4))


def _random_encoder() -> MiniLMEncoder:
    """A two-layer toy encoder of three heads a layer, its weights drawn at random (seed 0), on the toy
    vocabulary of :func:`_uniform_encoder`: the search's rules hold for any encoder, and this one is fast."""
    tokenizer = _uniform_encoder().tokenizer
    config = MiniLMConfig(vocab_size=6, max_positions=16, d_model=12, h=3, d_ff=16, n_layers=2)
    torch.manual_seed(0)
    return MiniLMEncoder(config, tokenizer).eval()


def test_greedy_pruning_first_removes_the_head_whose_single_ablation_hurts_least():
    encoder = _random_encoder()  # 6 heads
    pairs = [("a b a", "b a b"), ("a a b", "b b a")]  # 4 sentences
    curve = greedy_pruning(encoder, pairs, steps=1)
    single = single_head_ablation(encoder, pairs)
    assert curve["removed"] == [divmod(int(single["cosine"].argmax()), 3)]
    assert curve["passes"] == 6  # step 1 scores every head
    assert curve["cosine"] == [pytest.approx(1.0), pytest.approx(single["cosine"].max().item(), abs=1e-6)]
    assert len(curve["paraphrase_accuracy"]) == 2
    whole = greedy_pruning(encoder, pairs)  # every step: removing the head whose loss hurts least
    assert whole["passes"] == 6 + 5 + 4 + 3 + 2 + 1 and sorted(whole["removed"]) == sorted(
        (i, j) for i in range(2) for j in range(3)
    )
    with pytest.raises(ValueError, match="steps"):
        greedy_pruning(encoder, pairs, steps=7)
