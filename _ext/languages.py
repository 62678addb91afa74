"""Sphinx extension of the book: the English and the Chinese site link each page to its counterpart.

The book is one source built twice (``make book``): the English site into ``_build/html/`` and the Chinese
site (``zh/``, scripts/zh_book.py) into ``_build/html/zh/``, each page at the same relative path. In both
builds this extension puts, among the buttons at the top of every page (the search page too), a plain
relative link to the same page in the other language (it works from disk too), and a ``<link rel="alternate"
hreflang>`` into its head. A page that has no
counterpart (the Chinese glossary) links to the other book's first page. On a Chinese page that is not fully
translated yet (``mha_untranslated``, which scripts/zh_book.py computes from the translation records), a line
says that its untranslated paragraphs show the English text.

It also writes myst-nb's files of notebook outputs (the pictures) beside the doctrees rather than beside the
HTML folder: for the English site the same ``_build/jupyter_execute`` as before; for the Chinese site, whose
HTML folder is inside the English one, ``_build/zh/jupyter_execute`` instead of a folder in the English site.

And it registers Chinese search with one repair: Sphinx 7.4's ``SearchChinese`` keeps every Latin word it has
met in a list, shared by the class, that it searches for each word it indexes (quadratic: 1.5 s of the Chinese
build's 10 s of CPU); here the same words are kept in a set.

``_config.yml`` names it twice: ``sphinx.local_extensions`` puts ``_ext`` on the path, and
``sphinx.config.extensions`` loads it.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.search.zh import SearchChinese

# By the site's Sphinx language: where the other site's pages are, from this site's root, and how to name it.
OTHER = {
    "en": {"lang": "zh-CN", "root": "zh/", "label": "中文", "title": "本页的中文版"},
    "zh_CN": {"lang": "en", "root": "../", "label": "English", "title": "This page in English"},
}
UNTRANSLATED = {"zh_CN": "本页尚未全部译完：未译的段落暂时显示英文原文。"}
SPECIAL_PAGES = ("search", "genindex")  # pages every Sphinx site has
ROOT_PAGE = "intro"  # where a page without a counterpart links to (the root of _toc.yml)
TEMPLATE = "language-link.html"  # in templates/, rendered first among the article header's buttons
# (its classes and the note's do not start with "mha-", the figures' roots' classes: _ext/figure_roots.py)


def other_page(app: Sphinx, pagename: str) -> str | None:
    """The relative URL of ``pagename``'s counterpart in the other language, or ``None`` (no other site)."""
    other = OTHER.get(app.config.language)
    if other is None:
        return None
    pages = app.config.mha_other_pages
    target = pagename if pages is None or pagename in pages or pagename in SPECIAL_PAGES else ROOT_PAGE
    return "../" * pagename.count("/") + other["root"] + target + ".html"


def add_language_link(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """The counterpart's link among the header buttons (``templates/language-link.html``) and in the head;
    on a page not fully translated, the note at the top of its text."""
    if doctree is None and pagename not in SPECIAL_PAGES:
        return
    href = other_page(app, pagename)
    if href is None:
        return
    other = OTHER[app.config.language]
    context["mha_language"] = {**other, "href": href}
    header = context.get("theme_article_header_end") or []
    header = [t.strip() for t in header.split(",")] if isinstance(header, str) else list(header)
    context["theme_article_header_end"] = [TEMPLATE, *[t for t in header if t != TEMPLATE]]
    lang, url = other["lang"], html.escape(href)
    context["metatags"] = (
        context.get("metatags", "") + f'\n<link rel="alternate" hreflang="{lang}" href="{url}">'
    )
    note = UNTRANSLATED.get(app.config.language)
    if note and pagename in (app.config.mha_untranslated or []):
        context["body"] = f'<p class="untranslated-note">{html.escape(note)}</p>' + context.get("body", "")


def add_templates(app: Sphinx, config: Any) -> None:
    config.templates_path.append(str(Path(__file__).resolve().parent / "templates"))


def add_theme_catalogue(app: Sphinx, config: Any) -> None:
    """The book's catalogue for the theme's messages, read where the theme's own has none."""
    if config.mha_theme_catalogue:
        app.add_message_catalog("booktheme", config.mha_theme_catalogue)


def move_notebook_outputs(app: Sphinx) -> None:
    """myst-nb's output folder beside the doctrees (after myst-nb has set it beside the HTML folder)."""
    config = getattr(app.env, "mystnb_config", None)
    if config is not None:
        folder = Path(app.doctreedir).parent / "jupyter_execute"
        app.env.mystnb_config = config.copy(output_folder=str(folder.resolve()))


class _Words(set):
    """A set with the one list method ``SearchChinese`` calls (``extend``)."""

    def extend(self, words) -> None:
        self.update(words)


class ChineseSearch(SearchChinese):
    """Sphinx's Chinese search (jieba, and the Porter stemmer for Latin words), its Latin words in a set."""

    def init(self, options: dict[str, str]) -> None:
        super().init(options)
        self.latin_terms = _Words()  # was a list shared by the class, searched word by word


def setup(app: Sphinx) -> dict:
    # the pages of the other site (None: the same pages as this one), and this site's untranslated pages
    app.add_config_value("mha_other_pages", None, "html")
    app.add_config_value("mha_untranslated", [], "html")
    # a catalogue of the theme's messages that its own zh_CN lacks (scripts/zh_book.py write_catalogues)
    app.add_config_value("mha_theme_catalogue", None, "html")
    app.connect("config-inited", add_theme_catalogue)
    app.connect("config-inited", add_templates)
    app.connect("html-page-context", add_language_link, priority=400)  # before the theme reads its templates
    app.connect("builder-inited", move_notebook_outputs, priority=900)  # after myst-nb's own (500)
    app.add_search_language(ChineseSearch)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
