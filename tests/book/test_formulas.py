"""The formula sheet (formulas.md, and zh/formulas.md) against the code that computes each formula.

Each ``{math}`` block of the page labelled ``formula-…`` is one equation, ``name = expression``. The test
reads the expression from the page, translates it to Python with a closed vocabulary (:func:`evaluate`: a
symbol it does not know fails the test, never silently means something else), evaluates it on several
shapes with exact fractions, and compares it with the function the page names in the formula's section
(``CHECKS``). A formula changed on the page, or a function changed in ``mha.costs``, fails here; so does a
formula without a check, or a check whose formula has gone.
"""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import pytest
import torch

import mha.costs
from book.compute.since_2017 import layer_masks, receptive_fields
from mha.costs.sparse import causal_pairs
from tests import ROOT

PAGES = [ROOT / "formulas.md", ROOT / "zh" / "formulas.md"]
_BLOCK = re.compile(r"^```\{math\}\n:label: (formula-[\w-]+)\n(.*?)\n```$", re.M | re.S)

# The page's symbols, as Python names; longest first where one is a prefix of another.
SYMBOLS = {
    r"d_\text{model}": "d_model",
    r"k_\text{top}": "top_k",
    "h_{kv}": "h_kv",
    **{name: name for name in ("d_k", "d_v", "d_c", "d_r", "h_k", "h_v", "n_q", "n_k")},
}
LETTERS = set("bhnwLBskim")  # one-letter symbols: b bias, k a convolution's taps, s bytes per number, ...
OPERATORS = {
    r"\left": "",
    r"\right": "",
    r"\,": " ",
    r"\cdot": "*",
    r"\times": "*",
    r"\min": "min",
    "^": "**",
}


def formulas(page) -> dict[str, str]:
    """The page's labelled formulas, label -> the expression right of its one ``=``."""
    found = {}
    for label, body in _BLOCK.findall(page.read_text(encoding="utf-8")):
        sides = body.split("=")
        assert len(sides) == 2, f"{page.name}: {label} must be one equation, name = expression"
        found[label] = sides[1].strip()
    return found


def python_of(latex: str) -> str:
    """``latex`` as a Python expression: symbols as names, juxtaposition as ``*``, ``\\frac{a}{b}`` as
    ``(a)/(b)``, braces as parentheses; anything else raises."""
    text = latex.replace(r"\frac{", "{").replace("}{", ")/(")
    tokens = re.findall(r"\\text\{[^}]*\}|\\[A-Za-z]+|\\,|[A-Za-z]_(?:\{[^}]*\}|\\text\{[^}]*\}|[A-Za-z])|"
                        r"[A-Za-z]|\d+|\S", text)  # fmt: skip
    out: list[str] = []
    for token in tokens:
        if token in SYMBOLS:
            word = SYMBOLS[token]
        elif token in LETTERS:
            word = token
        elif token in OPERATORS:
            word = OPERATORS[token]
        elif token.isdigit() or token in "+-/(),*":
            word = token
        elif token in "{}":
            word = "(" if token == "{" else ")"
        else:
            raise ValueError(f"the formula sheet's test does not know {token!r} in {latex!r}")
        if not word.strip():
            continue
        operand = word[0].isalnum() or word[0] == "("
        if out and operand and (out[-1][-1].isalnum() or out[-1] == ")") and out[-1] != "min":
            out.append("*")  # juxtaposition: 2 d_model h, (a)(b), b (h d_k + ...)
        out.append(word)
    return " ".join(out)


def evaluate(latex: str, shape: dict[str, int]) -> Fraction:
    """The formula's value for ``shape``, in exact fractions."""
    names = {name: Fraction(value) for name, value in shape.items()}
    return eval(
        python_of(latex), {"__builtins__": {}, "min": min}, names
    )  # the page's own formulas, in a closed vocabulary


def one_layer(**fields) -> mha.costs.Layer:
    """The layer of a one-layer decoder with these fields, as its cache sees it (``ModelConfig.layers``)."""
    config = mha.costs.ModelConfig(
        name="formula sheet", n_layers=1, trained_context=None, max_context=None, kind="decoder",
        source="tests/book/test_formulas.py", positions="rotary", **fields,
    )  # fmt: skip
    return config.layers[0]


DTYPES = {1: torch.float8_e4m3fn, 2: torch.bfloat16, 4: torch.float32}  # bytes per number -> a dtype


def _receptive(L, w, i):
    return int(receptive_fields(layer_masks(i, window=w, layers=L))[-1, -1].sum())


def _same(values):
    """The one value of ``values``, or None where they differ (a formula's value is never None)."""
    found = set(values)
    return found.pop() if len(found) == 1 else None


def _ratio(parts):
    return Fraction(parts[0], parts[1])


def _grid(**axes) -> list[dict[str, int]]:
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


HEADS = _grid(d_model=[64, 96], h=[4, 8], h_kv=[1, 2, 4], d_k=[8, 16])
# label -> (the function the page names, the shapes, the function's value for one shape)
CHECKS = {
    "formula-params": (
        "mha.costs.attention_params",
        _grid(d_model=[64, 96], h=[4, 8], h_kv=[1, 4], d_k=[8, 16], b=[0, 1]),
        lambda d_model, h, h_kv, d_k, b: mha.costs.attention_params(
            d_model, h, h_kv, bias=bool(b), head_dim=d_k
        ),
    ),
    "formula-params-mha": (
        "mha.costs.attention_params",
        _grid(d_model=[64, 96, 512], b=[0, 1]),
        lambda d_model, b: _same(mha.costs.attention_params(d_model, h, bias=bool(b)) for h in (1, 2, 4, 8)),
    ),
    "formula-macs-projections": (
        "mha.costs.attention_macs_parts",
        [{**s, "n_q": q, "n_k": k} for s in HEADS for q, k in ((1, 7), (5, 5), (9, 3))],
        lambda d_model, h, h_kv, d_k, n_q, n_k: mha.costs.attention_macs_parts(
            d_model, h, n_q, n_k, n_kv_heads=h_kv, head_dim=d_k
        )[0],
    ),
    "formula-macs-scores": (
        "mha.costs.attention_macs_parts",
        [{**s, "n_q": q, "n_k": k} for s in HEADS for q, k in ((1, 7), (5, 5), (9, 3))],
        lambda d_model, h, h_kv, d_k, n_q, n_k: mha.costs.attention_macs_parts(
            d_model, h, n_q, n_k, n_kv_heads=h_kv, head_dim=d_k
        )[1],
    ),
    "formula-macs-decode": (
        "mha.costs.attention_macs_per_token",
        [{**s, "n": n} for s in HEADS for n in (1, 100)],
        lambda d_model, h, h_kv, d_k, n: mha.costs.attention_macs_per_token(
            d_model, h, n, n_kv_heads=h_kv, head_dim=d_k
        ),
    ),
    "formula-crossover": (
        "mha.costs.attention_macs_parts",
        _grid(d_model=[64, 96, 4544], h=[4, 8, 32], h_kv=[1, 2, 4]),  # d_k = d_model / h, as the page says
        lambda d_model, h, h_kv: _ratio(mha.costs.attention_macs_parts(d_model, h, 1, n_kv_heads=h_kv)),
    ),
    "formula-cache-bytes": (
        "mha.costs.kv_cache_bytes",
        _grid(L=[1, 12], B=[1, 3], n=[1, 4096], h_kv=[1, 8], d_k=[64, 128], s=[1, 2, 4]),
        lambda L, B, n, h_kv, d_k, s: mha.costs.kv_cache_bytes(L, h_kv, d_k, n, batch=B, dtype=DTYPES[s]),
    ),
    "formula-cache-full": (
        "mha.costs.Layer.cache_elements",
        [{**s, "n": n} for s in _grid(h=[8], h_kv=[1, 2, 8], d_k=[8, 16]) for n in (1, 10, 1000)],
        lambda h, h_kv, d_k, n: one_layer(d_model=64, h=h, n_kv_heads=h_kv, head_dim=d_k).cache_elements(n),
    ),
    "formula-cache-sliding": (
        "mha.costs.Layer.cache_elements",
        [{**s, "n": n} for s in _grid(h_kv=[1, 2], d_k=[8, 16], w=[1, 5, 128]) for n in (1, 5, 1000)],
        lambda h_kv, d_k, w, n: one_layer(
            d_model=64, h=8, n_kv_heads=h_kv, head_dim=d_k, window=w
        ).cache_elements(n),
    ),
    "formula-cache-latent": (
        "mha.costs.Layer.cache_elements",
        [{**s, "n": n} for s in _grid(d_c=[16, 512], d_r=[4, 64]) for n in (1, 1000)],
        lambda d_c, d_r, n: one_layer(
            d_model=64, h=8, n_kv_heads=None, kv_latent=d_c, rope_dim=d_r
        ).cache_elements(n),
    ),
    "formula-cache-keys-as-values": (
        "mha.costs.Layer.cache_elements",
        [{**s, "n": n} for s in _grid(h_kv=[1, 2], d_k=[8, 16]) for n in (1, 1000)],
        lambda h_kv, d_k, n: one_layer(
            d_model=64, h=8, n_kv_heads=h_kv, head_dim=d_k, k_eq_v=True
        ).cache_elements(n),
    ),
    "formula-cache-linear": (
        "mha.costs.LinearAttention.state_elements",
        _grid(h_k=[1, 16], h_v=[16, 32], d_k=[8, 128], d_v=[16, 128], k=[1, 4], n=[1, 10**6]),
        lambda h_k, h_v, d_k, d_v, k, n: one_layer(
            d_model=64,
            h=8,
            n_kv_heads=2,
            layer_types=("linear",),
            linear=mha.costs.LinearAttention("gated delta", h_k, h_v, d_k, d_v, k),
        ).cache_elements(n),
    ),
    "formula-pairs-dense": (
        "mha.costs.sparse.causal_pairs",
        [{"n": n} for n in (1, 2, 7, 2048)],
        lambda n: causal_pairs(n),
    ),
    "formula-pairs-sparse": (
        "mha.costs.sparse.causal_pairs",
        [{"n": n, "top_k": k} for n in (1, 7, 2048) for k in (1, 7, 512) if n >= k],
        lambda n, top_k: causal_pairs(n, top_k),
    ),
    "formula-receptive-field": (
        "book.compute.since_2017.receptive_fields",
        _grid(L=[1, 2, 4], w=[1, 2, 5], i=[1, 6, 20]),
        _receptive,
    ),
}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_formula_of_the_sheet_has_a_check_and_every_check_a_formula(page):
    assert set(formulas(page)) == set(CHECKS)


@pytest.mark.parametrize("label", sorted(CHECKS))
def test_each_formula_equals_the_function_the_page_names(label):
    name, shapes, function = CHECKS[label]
    latex = formulas(PAGES[0])[label]
    sections = PAGES[0].read_text(encoding="utf-8").split("\n## ")
    (section,) = [s for s in sections if f":label: {label}\n" in s]
    assert f"`{name}`" in section, f"formulas.md: name {name} in the section of {label}"
    for shape in shapes:
        want, got = function(**shape), evaluate(latex, shape)
        assert got == want, f"{label} at {shape}: the page's formula gives {got}, {name} {want}"


def test_the_chinese_sheet_has_the_same_formulas():
    assert formulas(PAGES[1]) == formulas(PAGES[0])


def test_the_translator_knows_no_symbol_the_page_does_not_define():
    """An unknown symbol fails loudly rather than being read as something else."""
    with pytest.raises(ValueError, match=r"\\alpha"):
        python_of(r"2 \alpha n")
    assert evaluate(r"\frac{n \left(n + 1\right)}{2}", {"n": 3}) == 6
    assert evaluate(r"2 \min(n, w) h_{kv} d_k", {"n": 9, "w": 4, "h_kv": 2, "d_k": 8}) == 128
    assert math.floor(evaluate(r"d_\text{model} \left(1 + \frac{h_{kv}}{h}\right)", _SHAPE)) == 96


_SHAPE = {"d_model": 64, "h_kv": 4, "h": 8}
