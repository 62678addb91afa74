"""The lecture decks of `make slides` (scripts/build_slides.py, scripts/tag_slides.py, slides/).

The decks are built once into a temporary folder, then each is opened from disk (file://) in headless
Chromium with every request to another host blocked, as a lecturer offline would open it: no error, at least
8 slides, paging works, equations typeset, the interactive figures mount. The rules that shape a chapter into
a deck are checked on a small notebook made here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import build_slides  # the book's scripts/, which tests/conftest.py puts on sys.path
import nbformat
import pytest
import tag_slides

pytestmark = pytest.mark.site  # builds the decks

ROOT = Path(__file__).resolve().parents[1]

CHAPTERS = build_slides.chapters()


def _digest(paths):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    before = _digest(CHAPTERS)
    out = tmp_path_factory.mktemp("slides")
    built = build_slides.build(out)
    assert _digest(CHAPTERS) == before, "building the decks changed a committed notebook"
    return built


def test_every_chapter_has_a_deck_that_names_no_other_host(decks):
    assert set(decks) == {p.stem for p in CHAPTERS}
    for stem, deck in decks.items():
        html = deck.read_text()
        for cdn in ("unpkg.com", "cdnjs", "cdn.jsdelivr", "require.min.js", "jquery", "MathJax.Hub"):
            assert cdn not in html, f"{stem}: {cdn}"
        assert deck.name == f"{stem}.slides.html"


_READ_DECK = r"""async () => {
  await MathJax.startup.promise;
  await document.fonts.ready;
  const first = Reveal.getIndices();
  Reveal.next();
  const second = Reveal.getIndices();
  return {
    total: Reveal.getTotalSlides(),
    moved: JSON.stringify(first) !== JSON.stringify(second),
    equations: document.querySelectorAll("mjx-container").length,
    texErrors: document.querySelectorAll("mjx-container merror").length,
    figures: document.querySelectorAll(".mha-explorer, .mha-stepper, .mha-calculator").length,
    mounted: [...document.querySelectorAll(".mha-explorer, .mha-stepper, .mha-calculator")]
      .filter(el => el.mha).length,
    brokenImages: [...document.images].filter(i => !i.complete || i.naturalWidth === 0).length,
    fontsFailed: [...document.fonts].filter(f => f.status === "error").map(f => f.family),
  };
}"""


@pytest.mark.parametrize("chapter", [p.stem for p in CHAPTERS])
def test_deck_opens_offline_pages_and_typesets(chapter, decks, browser):
    tab = browser.new_page(viewport={"width": 1280, "height": 800})
    errors, other_hosts, failed = [], [], []
    tab.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    tab.on("console", lambda m: m.type == "error" and errors.append(f"console error: {m.text}"))
    tab.on("request", lambda r: r.url.startswith(("file:", "data:", "blob:")) or other_hosts.append(r.url))
    tab.on("requestfailed", lambda r: r.url.startswith("file:") and failed.append(r.url))
    tab.route(lambda url: not url.startswith(("file:", "data:", "blob:")), lambda route: route.abort())
    tab.goto(decks[chapter].as_uri(), wait_until="load")
    seen = tab.evaluate(_READ_DECK)
    tab.close()
    assert not other_hosts, f"{chapter} requests other hosts: {sorted(set(other_hosts))}"
    assert not failed, f"{chapter}: files beside the deck failed to load: {failed}"
    assert not errors, "\n".join(errors)
    assert seen["total"] >= 8, seen
    assert seen["moved"], "Reveal.next() did not change the slide"
    assert seen["equations"] > 0 and seen["texErrors"] == 0, seen
    assert seen["mounted"] == seen["figures"], f"{chapter}: an interactive figure did not mount: {seen}"
    assert seen["brokenImages"] == 0 and not seen["fontsFailed"], seen


# ---------------------------------------------------------------------------------------------------------
# The rules of scripts/tag_slides.py, on a notebook made here
# ---------------------------------------------------------------------------------------------------------


def _shaped():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    long = " ".join(["Words of prose."] * 40)
    check = code("# Check of the solution", metadata={"tags": ["hide-cell"]})
    printed = code(
        "print(many)", outputs=[nbformat.v4.new_output("stream", text="".join(f"{i}\n" for i in range(40)))]
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md("# Title\n\nWhat this teaches {cite}`vaswani2017attention`."),
        code("# Set-up"),
        md(f"## A section\n\n{long}\n\n$$\nx^2\n$$"),
        printed,
        md("### A subsection\n\n- one\n- two"),
        md("## Exercises\n\nEach solution is folded.\n\n```{exercise} Try it\n:label: t-ex\n\nDo it.\n```\n\n"
           "```{solution} t-ex\n:class: dropdown\n\nSECRET answer.\n```"),
        check,
    ]  # fmt: skip
    return tag_slides.slide_notebook(nb, tag_slides.References(ROOT), ROOT / "chapters")


def test_tagging_rules():
    nb = _shaped()
    kinds = [(c.metadata["slideshow"]["slide_type"], c.source.split("\n")[0][:20]) for c in nb.cells]
    assert kinds[0] == ("slide", "# Title")
    assert "Vaswani et al., 2017" in nb.cells[1].source
    assert ("skip", "# Set-up") in kinds
    assert ("slide", "## A section") in kinds and ("subslide", "### A subsection") in kinds
    assert ("notes", "Words of prose. Word") in kinds  # the long paragraph, in full
    assert ("-", "Words of prose. …") in kinds  # its first sentence on the slide
    assert ("subslide", "**Exercise: Try it**") in kinds
    assert ("skip", "Each solution is fol") in kinds
    assert ("skip", "# Check of the solut") in kinds
    assert not any("SECRET" in c.source for c in nb.cells)
    printed = next(c for c in nb.cells if c.source == "print(many)")
    assert printed.outputs[0].text.count("\n") == tag_slides.OUTPUT_KEEP_LINES + 1
    assert "30 more lines" in printed.outputs[0].text


def test_chapters_become_lecture_shaped_decks():
    refs = tag_slides.References(ROOT)
    for path in CHAPTERS:
        nb = tag_slides.slide_notebook(nbformat.read(path, as_version=4), refs, path.parent)
        kinds = [c.metadata["slideshow"]["slide_type"] for c in nb.cells]
        h2 = [c for c in nb.cells if c.source.startswith("## ")]
        assert all(c.metadata["slideshow"]["slide_type"] == "slide" for c in h2), path.stem
        assert kinds.count("slide") >= 4, path.stem
        assert not any("{solution}" in c.source or "{cite" in c.source for c in nb.cells), path.stem
        first_code = next(c for c in nb.cells if c.cell_type == "code")
        assert first_code.metadata["slideshow"]["slide_type"] == "skip", "the set-up cell is shown"
