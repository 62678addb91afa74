"""The built site's interactive figures in headless Chromium, as a reader meets them (the pages themselves:
tests/browser/test_site_pages.py; the site's files: tests/book/test_site.py).

Each interactive figure's numbers are checked once, end to end, from disk (file://, the stricter scheme:
Chromium runs no ES modules and allows no fetch there), with every request to another host blocked: the ports
on many more cases run in their twins' unit test files (tests/ports.py). And the vendored MathJax loads what
it loads on demand.
"""

from __future__ import annotations

import pytest
import torch

from tests.built_site import CHAPTER_PAGES, SITE, open_page
from tests.port_cases import SHIPPED_SENTENCES, site_explorer_sweep

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]


def test_mathjax_loads_its_extensions_and_fonts_from_disk(browser):
    """The vendored copy is complete: a package that MathJax's autoload fetches on first use (`\\boldsymbol`,
    `\\cancel`) loads from disk, and the fonts of the CommonHTML output load there too."""
    tab = browser.new_page()
    requested = []
    tab.on("request", lambda r: requested.append(r.url))
    tab.route(lambda url: not url.startswith("file://"), lambda route: route.abort())
    tab.goto((SITE / f"{CHAPTER_PAGES[0]}.html").as_uri(), wait_until="load")
    html = tab.evaluate(
        "tex => MathJax.startup.promise.then(() => MathJax.tex2chtmlPromise(tex)).then(n => n.outerHTML)",
        r"\boldsymbol{W}_i \cancel{x}",
    )
    fonts = tab.evaluate(
        "document.fonts.ready.then(fs => [...fs].filter(f => f.status === 'loaded').map(f => f.family))"
    )
    tab.close()
    assert "merror" not in html and "mathcolor" not in html, html
    loaded = {url.rsplit("/", 1)[-1] for url in requested}
    assert {"boldsymbol.js", "cancel.js"} <= loaded, sorted(loaded)
    assert "MJXTEX" in fonts and "MJXTEX-I" in fonts, fonts


# ---------------------------------------------------------------------------------------------------------
# The interactive figures on the static site (book/widgets/static/, data inline in the page)
# ---------------------------------------------------------------------------------------------------------

EXPLORER_PAGE = "chapters/the_math"
TRAINED_PAGE = "chapters/appendix_toy_heads"  # the toy experiment moved there from chapter 1


def test_the_static_explorers_compute_what_python_computes(browser):
    """The book's one browser check of the explorer's numbers, from disk (file://) and offline: on the maths
    chapter a fresh layer's weights equal book.compute.explorer_weights (1e-5), on the appendix's page the
    shipped trained model's equal Python's. (The port on many more cases:
    tests/unit/book/compute/test_explorer.py.)"""
    from book.chapters.training import load_models
    from book.compute.explorer import build_mask, explorer_weights, head_weights

    tab, errors = open_page(browser, EXPLORER_PAGE)
    assert tab.locator(".mha-explorer").count() == 1
    names = tab.evaluate(
        "() => [...document.querySelector('.mha-explorer').querySelectorAll('[name]')].map(e => e.name)"
    )
    assert {"d_model", "h", "mask", "valid_length", "sentence", "seed"} <= set(names)
    sweep = site_explorer_sweep()
    drawn = tab.evaluate("all => all.map(s => document.querySelector('.mha-explorer').mha.update(s))", sweep)
    for settings, weights in zip(sweep, drawn, strict=True):
        expected = explorer_weights(**settings)
        got = torch.tensor(weights, dtype=torch.float64)
        assert got.shape == expected.shape, settings
        torch.testing.assert_close(got, expected.double(), atol=1e-5, rtol=0, msg=str(settings))
    # h from 4 to 8 redraws eight panels at once, and the controls agree with the picture
    tab.evaluate(
        "() => document.querySelector('.mha-explorer').mha.update({d_model: 32, h: 4, mask: 'causal'})"
    )
    tab.locator('.mha-explorer select[name="h"]').select_option("8")
    state = tab.evaluate(
        "() => { const m = document.querySelector('.mha-explorer').mha; "
        "return {h: m.settings.h, heads: m.weights.length}; }"
    )
    assert state == {"h": 8, "heads": 8}
    tab.close()
    assert not errors, errors

    tab, errors = open_page(browser, TRAINED_PAGE)  # the appendix: the trained copy-3 model
    settings = tab.evaluate("() => document.querySelector('.mha-explorer').mha.settings")
    assert settings["source"] == "trained"
    model = load_models()["copy-3/h4/seed0"]
    for sentence in (settings["sentence"], *SHIPPED_SENTENCES[:2]):
        for mask in ("causal", "none"):
            drawn = tab.evaluate(
                "s => document.querySelector('.mha-explorer').mha.update(s)",
                {"sentence": sentence, "mask": mask},
            )
            tokens = sentence.split()
            expected = head_weights(model.attn, model.embed_names(tokens), build_mask(mask, len(tokens)))
            torch.testing.assert_close(torch.tensor(drawn, dtype=torch.float32), expected, atol=1e-5, rtol=0)
    tab.close()
    assert not errors, errors


CALCULATOR_PAGE = "chapters/typical_configs"
STEPPER_PAGE = "chapters/step_by_step"


def test_the_static_calculator_equals_mha_costs_for_every_model(browser):
    """On the built page, from disk and offline: every decoder-only configuration's numbers equal mha.costs'.
    (The port on more cases: tests/unit/mha/costs/test_report.py.)"""
    from mha.costs import DTYPES, MODEL_CONFIGS, cost_report, model_costs

    tab, errors = open_page(browser, CALCULATOR_PAGE)
    assert tab.locator(".mha-calculator").count() == 1
    settings = [
        {"model": c.name, "context": c.trained_context or 4096, "batch": 2, "dtype": "bfloat16"}
        for c in MODEL_CONFIGS.values()
        if c.kind == "decoder"
    ]
    results = tab.evaluate(
        """all => all.map(s => { const r = document.querySelector('.mha-calculator').mha.update(s);
                                 return {rows: r.rows, params: String(r.params),
                                         kv: String(r.kv_cache_bytes)}; })""",
        settings,
    )
    for s, got in zip(settings, results, strict=True):
        costs = model_costs(MODEL_CONFIGS[s["model"]], s["context"], batch=2, dtype=DTYPES["bfloat16"])
        params = None if got["params"] == "null" else int(got["params"])  # null: weights not counted
        assert (params, int(got["kv"])) == (costs.params, costs.kv_cache_bytes), s["model"]
        width = max(len(k) for k, _ in got["rows"])
        lines = "\n".join(f"{k.ljust(width)}  {v}" for k, v in got["rows"])
        assert lines == cost_report(s["model"], s["context"], batch=2, dtype="bfloat16"), s["model"]
    root = tab.locator(".mha-calculator")
    before = root.locator("table").text_content()
    root.locator("select[name=model]").focus()
    tab.keyboard.press("ArrowUp")  # keyboard operation: the model before the last one set
    assert root.locator("table").text_content() != before
    tab.close()
    assert not errors, errors


def test_the_static_stepper_shows_the_stages_python_computed(browser):
    """On the built page, from disk and offline: each stage the stepper draws is attention_stages of the
    example."""
    from book.chapters.worked_example import small_example
    from book.compute import STAGES, attention_stages

    example = small_example()
    stages = attention_stages(example.module(), example.x)
    tab, errors = open_page(browser, STEPPER_PAGE)
    root = tab.locator(".mha-stepper").first
    for stage in STAGES:
        got = tab.evaluate(
            "key => document.querySelector('.mha-stepper').mha.update({stage: key})", stage.key
        )
        torch.testing.assert_close(
            torch.tensor(got, dtype=torch.float64), stages[stage.key], atol=1e-12, rtol=0
        )
    picture = root.locator("canvas").first.screenshot()
    root.get_by_text("previous", exact=False).first.click()
    assert root.locator("canvas").first.screenshot() != picture
    tab.close()
    assert not errors, errors


def test_the_static_explorer_answers_the_keyboard_and_every_control(browser):
    """Tab to a control and press an arrow key, or change any control: the drawing and settings follow."""
    tab, errors = open_page(browser, EXPLORER_PAGE)
    root = tab.locator(".mha-explorer")
    canvas = root.locator("canvas").first

    def settings():
        return tab.evaluate("() => document.querySelector('.mha-explorer').mha.settings")

    start = settings()
    root.locator("select[name=h]").focus()
    tab.keyboard.press("ArrowDown")
    assert settings()["h"] != start["h"]
    for name, value in (("d_model", "48"), ("mask", "padding"), ("seed", "7"), ("sentence", "a b c d e")):
        before = canvas.screenshot()
        control = root.locator(f"[name={name}]")
        if name in ("d_model", "mask"):
            control.select_option(value)
        else:
            control.fill(value)
            control.dispatch_event("change")
        assert canvas.screenshot() != before, name
        assert str(settings()[name]) == value, name
    before = canvas.screenshot()
    root.locator("[name=valid_length]").fill("2")
    root.locator("[name=valid_length]").dispatch_event("change")
    assert canvas.screenshot() != before and settings()["valid_length"] == 2
    tab.close()
    assert not errors, errors
