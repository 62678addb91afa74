"""An interactive figure's root element, found one way: :func:`figure_roots`.

``book.widgets.frontend`` writes each interactive figure into its HTML (a chapter's stored output, a page, a
deck) as a root element, a ``<div>`` whose first class is the figure's, ``mha-<figure>``, and whose first
child is a ``<script type="application/json">`` holding the figure's data (``</`` written ``<\\/``, so that
the data cannot end the script)::

    <div class="mha-explorer"><script type="application/json">{"settings": …}</script>…</div>

The page's scripts mount each root of their class. Everything else that looks for the figures of an HTML text
reads them with :func:`figure_roots`: the build (``_ext/page_assets.py`` adds the figures' scripts to the
pages that have a root), the Chinese book (scripts/zh_figures.py translates the texts in a root's data), and
the tests of the chapters' outputs and of the built site.

Not an extension: a module of ``_ext`` so that the extensions, which Sphinx imports by their own names with
``_ext`` on its path (``_config.yml``'s ``local_extensions``), and the scripts and the tests, which import
``_ext.figure_roots``, read a root alike; it imports nothing of the book's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_ROOT = re.compile(
    r'<div class="(?P<cls>mha-[\w-]+)[^"]*"[^>]*>\s*<script type="application/json">(?P<json>.*?)</script>',
    re.S,
)


@dataclass(frozen=True)
class Root:
    """A figure's root element in an HTML text: its class, and its data as written, where it is."""

    cls: str  # its first class, the figure's: mha-explorer, mha-stepper, ...
    json: str  # its data, as written (``</`` escaped ``<\/``)
    start: int  # where that JSON starts in the HTML text
    end: int  # and where it ends (the ``</script>`` after it)

    @property
    def data(self) -> dict:
        """The root's data, read."""
        return json.loads(self.json.replace("<\\/", "</"))


def figure_roots(html: str) -> list[Root]:
    """The figures' root elements of ``html``, in order."""
    return [Root(m["cls"], m["json"], m.start("json"), m.end("json")) for m in _ROOT.finditer(html)]
