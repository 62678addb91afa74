"""Sphinx extension of the book: a page loads the figures' scripts only if it shows a figure.

``_config.yml``'s ``html_js_files`` lists the interactive figures' classic scripts (``mha/widgets/static``;
a test keeps the list equal to ``mha.widgets.frontend.SCRIPTS``), and Sphinx would put them on every page.
A figure on a page is a root element whose class starts with ``mha-`` (``mha.widgets.frontend`` writes
them); a page without one, such as the references or the changelog, now loads none of those scripts.
MathJax needs nothing here: Sphinx adds it only to pages with equations.
"""

from __future__ import annotations

import re
from typing import Any

from sphinx.application import Sphinx

FIGURE_ROOT = re.compile(r"""class=["'](?:[^"']*\s)?mha-""")


def drop_unused_figure_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """Remove the figure scripts from ``context['script_files']`` when the page's body has no figure root."""
    if FIGURE_ROOT.search(context.get("body", "")):
        return
    names = {str(entry[0] if isinstance(entry, tuple) else entry) for entry in app.config.html_js_files}

    def is_figure_script(script: Any) -> bool:  # Sphinx names them "_static/core.js" by now
        return str(getattr(script, "filename", script) or "").removeprefix("_static/") in names

    context["script_files"] = [s for s in context.get("script_files", []) if not is_figure_script(s)]


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", drop_unused_figure_scripts, priority=900)  # after the scripts are added
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
