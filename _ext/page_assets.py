"""Sphinx extension of the book: the figures' scripts, added to the pages that show a figure and to no other.

The interactive figures' classic scripts are ``book.widgets.frontend.SCRIPTS`` (the ports in
``book/widgets/static/ports/``, then the framework and the figures, in load order), the one list that the
pages, the lecture decks and the tests load; ``_config.yml``'s ``html_static_path`` copies their folder into
``_static/``. This extension adds them to the pages, and removes them again from a page without a figure: a
figure on a page is a root element whose class starts with ``mha-`` (``book.widgets.frontend`` writes them),
so a page such as the references or the changelog loads none of those scripts. MathJax needs nothing here:
Sphinx adds it only to pages with equations.

A figure's root is found as everything else finds it, by ``_ext/figure_roots.py`` (imported by its own name,
as Sphinx imports this module, with ``_ext`` on the path).
"""

from __future__ import annotations

import os
from typing import Any

from figure_roots import figure_roots
from sphinx.application import Sphinx
from sphinx.util.fileutil import copy_asset

from book.widgets.frontend import SCRIPTS


def drop_unused_figure_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """Remove the figure scripts from ``context['script_files']`` when the page's body has no figure root."""
    if figure_roots(context.get("body", "")):
        return

    prefix = app.config.mha_scripts_prefix

    def is_figure_script(script: Any) -> bool:  # Sphinx names them "_static/core.js" by now
        name = str(getattr(script, "filename", script) or "").removeprefix("_static/")
        return name.startswith(prefix) and name.removeprefix(prefix) in SCRIPTS

    context["script_files"] = [s for s in context.get("script_files", []) if not is_figure_script(s)]


def add_figure_scripts(app: Sphinx) -> None:
    """Add :data:`SCRIPTS`, in load order, each under ``mha_scripts_prefix`` (the Chinese site, which loads
    the English site's copies, sets it to the path from its ``_static/`` to theirs)."""
    for name in SCRIPTS:
        app.add_js_file(app.config.mha_scripts_prefix + name)


def copy_static_files(app: Sphinx, exception: Exception | None) -> None:
    """Sphinx copies ``html_static_path`` only when some page is out of date: after a change to a figure's
    script or stylesheet alone, ``make book`` would keep the old copies. Copy the book's own static files (the
    relative entries of ``html_static_path``; extensions add theirs as absolute paths, some of them templates)
    at the end of every build; a file already equal is left as it is."""
    if exception is not None or app.builder.format != "html":
        return
    for entry in app.config.html_static_path:
        if not os.path.isabs(entry):
            copy_asset(os.path.join(app.confdir, entry), os.path.join(app.outdir, "_static"))


def setup(app: Sphinx) -> dict:
    app.add_config_value("mha_scripts_prefix", "", "html")
    app.connect("builder-inited", add_figure_scripts)
    app.connect("html-page-context", drop_unused_figure_scripts, priority=900)  # after the scripts are added
    app.connect("build-finished", copy_static_files)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
