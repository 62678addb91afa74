"""What the figures' own browser tests share: one figure's axe-core scan, its printed picture, and a box that
asks Python (book.widgets.frontend.BoxWidget) live on a stand-in Jupyter model.

(The whole site's scan is tests/browser/visits.py, whose rules these share: ``TAGS`` and ``IMPACTS``.)
"""

from __future__ import annotations

import base64
import io
import struct

from axe_playwright_python.sync_playwright import Axe
from pypdf import PdfReader

from tests.browser.visits import IMPACTS, TAGS


def axe_findings(page, selector: str) -> list[str]:
    """The serious and critical WCAG 2.0-2.2 A/AA violations (experimental rules too) inside ``selector``,
    with the figure's top scrolled below the theme's sticky header (which would cover a control:
    target-size); ``[]`` when there is none."""
    page.evaluate(
        f"() => scrollTo(0, document.querySelector('{selector}').getBoundingClientRect().top + scrollY - 150)"
    )
    # (preload: false, or axe-core reads every stylesheet itself, which fails from disk and says so)
    options = {"runOnly": [*TAGS, "experimental"], "preload": False}
    result = Axe().run(page, context={"include": [[selector]]}, options=options)
    return [
        f"{v['id']}: {[n['html'][:80] for n in v['nodes'][:3]]}"
        for v in result.response["violations"]
        if v["impact"] in IMPACTS and set(v["tags"]) & set(TAGS)
    ]


def png_size(data_uri: str) -> tuple[int, int]:
    """The width and height of a PNG given as a data: URI."""
    png = base64.b64decode(data_uri.split(",", 1)[1])
    assert png[12:16] == b"IHDR"
    return struct.unpack(">II", png[16:24])


def assert_prints_its_picture(page, picture: str) -> None:
    """The figure's static picture (``picture``, an ``img`` with a data: URI) is hidden on screen and printed
    in the page's PDF; afterwards the page is in print media, for the caller's checks of what hides."""
    image = page.locator(picture)
    size = png_size(image.get_attribute("src"))
    assert not image.is_visible()  # on screen, the live figure
    pdf = PdfReader(io.BytesIO(page.pdf(format="A4")))
    printed = [(im.image.width, im.image.height) for p in pdf.pages for im in p.images]
    assert size in printed, f"the figure's {size} picture is not among the PDF's images {printed}"
    page.emulate_media(media="print")
    assert image.is_visible()


# A box's ES module (BoxWidget._esm) on a stand-in Jupyter model: model.send reaches the exposed function
# `python` (the widget's reply) and the reply comes back as a custom message, its bytes as DataViews.
_RENDER = """async ([esm, spec]) => {
    const url = URL.createObjectURL(new Blob([esm], {type: 'text/javascript'}));
    const widget = (await import(url)).default;
    const handlers = {};
    const model = {
        get: (k) => ({spec})[k],
        on: (e, f) => { handlers[e] = f; }, off: (e) => { delete handlers[e]; },
        send: (content) => window.python(content).then(([reply, bytes]) =>
            handlers['msg:custom'](reply, bytes.map((b) => new DataView(Uint8Array.from(b).buffer)))),
    };
    const el = document.createElement('div');
    document.body.append(el);
    widget.render({model, el});
}"""


def render_live(browser, widget, asked: list | None = None):
    """A page with ``widget`` (a BoxWidget) rendered live on a stand-in model, every request answered by
    ``widget.reply`` (and appended to ``asked``); returns ``(page, errors)``, the page's errors so far."""

    def python(content: dict) -> list:
        if asked is not None:
            asked.append(content)
        message, buffers = widget.reply(content)
        return [message, [list(b) for b in buffers]]

    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.expose_function("python", python)
    page.set_content("<!doctype html><html lang='en'><body></body></html>")
    page.evaluate(_RENDER, [widget._esm, widget.spec])
    return page, errors
