"""Every figure of the built book prints a picture: the chapter pages printed to PDF by Chromium.

Reads the built site (tests/built_site.py) from disk. Each chapter with a live figure is
printed as a reader's browser prints it (Playwright's page.pdf, which fires beforeprint and afterprint: the
figures redraw for paper, core.js's onPrint), and the PDF must hold an image for every picture the page shows,
its static images and each figure's canvas, in its state of the moment (a reader's setting, here); in the
printed layout no canvas is wider than its figure, so none is cut. Chapter 1's MiniLM box prints its static
picture (tests/browser/test_site_minilm_promises.py).
"""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader

from tests.browser.test_site_keyboard import DRAWN, FIGURES
from tests.built_site import SITE

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

# What the page shows: its images and the canvases of its live figures (not the MiniLM box's, see above).
PICTURES = """() => ({
  images: [...document.querySelectorAll('.bd-article img')].filter(i => i.getClientRects().length).length,
  canvases: [...document.querySelectorAll('.bd-article .mha-canvas')]
    .filter(c => !c.closest('.mha-minilm') && c.getClientRects().length).length,
})"""

# In the printed layout: canvases wider than the figure that holds them.
CUT = """() => [...document.querySelectorAll('.mha-figure .mha-canvas')]
  .filter(c => !c.closest('.mha-minilm'))
  .filter(c => c.getBoundingClientRect().width > c.closest('.mha-figure').getBoundingClientRect().width + 0.5)
  .map(c => c.getAttribute('aria-label'))"""


def printed_images(page) -> int:
    """The images a PDF page draws (its image XObjects, in forms too), counted without decoding them."""

    def count(resources) -> int:
        n = 0
        for xobject in (resources or {}).get("/XObject", {}).values():
            xobject = xobject.get_object()
            if xobject.get("/Subtype") == "/Image":
                n += 1
            elif xobject.get("/Subtype") == "/Form":
                n += count(xobject.get("/Resources"))
        return n

    return count(page.get("/Resources"))


@pytest.fixture(scope="module")
def tab(browser):
    context = browser.new_context(viewport={"width": 1920, "height": 1000})  # wider than paper
    tab = context.new_page()
    yield tab
    context.close()


@pytest.mark.parametrize("page", sorted(FIGURES))
def test_each_figure_prints_its_picture(tab, page):
    tab.emulate_media(media="screen")
    tab.goto((SITE / f"{page}.html").as_uri())
    tab.wait_for_function(DRAWN, arg=FIGURES[page])
    tab.evaluate(f"() => document.querySelector('.{FIGURES[page]} select, .{FIGURES[page]} input').focus()")
    tab.keyboard.press("ArrowDown")  # a reader's setting: the printed picture is the one shown now
    shown = tab.evaluate(PICTURES)
    printed = PdfReader(io.BytesIO(tab.pdf()))
    images = sum(printed_images(p) for p in printed.pages)
    assert images >= shown["images"] + shown["canvases"], (page, shown, images)
    tab.emulate_media(media="print")
    assert tab.evaluate(CUT) == [], page
