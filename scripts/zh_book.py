"""The Chinese site, built inside the English one: `python -m scripts.zh_book` (what `make book` runs second).

The Chinese book's sources are ``zh/`` (kept in step with the English ones by scripts/zh_sync.py). Its
configuration and table of contents are not kept by hand: they are derived here from ``_config.yml`` and
``_toc.yml`` (:func:`site_config`, :func:`site_toc`), with the Chinese texts of ``zh/book.yml`` (title,
author, description, footer, part captions: :func:`scripts.texts.ui`) and these differences:

* ``language: zh_CN``: the theme's own texts in Chinese, ``<html lang="zh-CN">``, and a search index whose
  Chinese is cut into words by jieba, which is given the glossary's terms as words
  (:func:`write_search_words`), so that a search for 多头注意力 finds the pages that use it;
* the site is written into ``_build/html/zh/``, each page at the path of its English page below it, and shares
  the English site's assets instead of copying them: the figures' scripts and styles, MathJax and the book's
  CSS are loaded from ``../_static/`` (``html_js_files``, ``mha_scripts_prefix`` and ``mathjax_path`` point
  there, ``html_static_path`` is empty), so chapter 1's MiniLM box loads the English site's
  ``minilm-weights.js`` beside ``minilm.js`` (and the decoder box the English ``decoder-weights.js`` beside
  ``decoderbox.js``), and the ``minilm_weights`` and ``decoder_weights`` extensions, which write those files,
  are not run a second time;
* the launch and edit buttons lead to ``zh/`` in the repository; the glossary (``zh/glossary.md``) joins the
  back matter after the page ``glossary_after`` of ``zh/book.yml``; pages that are not fully translated say so
  (``_ext/languages.py``, which also links every page to its counterpart in the other language).

Jupyter Book's work files go to ``_build/zh/`` (the derived ``_config.yml`` and ``_toc.yml``, doctrees, the
notebooks' images), so the English site gets no folder of them. Nothing is executed: the notebooks carry the
English notebooks' outputs.

Usage: python -m scripts.zh_book [--html _build/html/zh] [--work _build/zh]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from scripts import myst, zh_sync
from scripts.documents import documents
from scripts.texts import ui

ROOT = Path(__file__).resolve().parents[1]
ZH = ROOT / "zh"
HTML = ROOT / "_build" / "html" / "zh"
WORK = ROOT / "_build" / "zh"
LANGUAGES = {"en": "en", "zh": "zh_CN"}  # --lang of the build scripts -> Sphinx's language
SHARED = (
    "../../_static/"  # from zh/_static/, the English site's _static/ (Sphinx joins asset paths to _static/)
)
# The extensions' own texts that Sphinx's zh_CN does not translate, as Sphinx options: their English defaults
# (sphinx-togglebutton has a zh-cn catalogue, which zh_CN does not find; myst-nb has none).
THEME_TEXTS = {
    "togglebutton_hint": "Click to show",
    "togglebutton_hint_hide": "Click to hide",
    "nb_code_prompt_show": "Show code cell {type}",
    "nb_code_prompt_hide": "Hide code cell {type}",
}
# The theme's texts that its zh_CN catalogue lacks, for the book's copies of its templates (_theme/templates):
# html_context variables, each template falling back on the theme's own text (``_('Color mode')``) in English.
THEME_CONTEXT = {"mha_color_mode": "Color mode"}
# The theme's and Sphinx's messages that their zh_CN catalogues leave English, by gettext domain: compiled
# into the Chinese build's own catalogue (write_catalogues), read after the theme's (_ext/languages.py) and
# before Sphinx's (locale_dirs).
THEME_MESSAGES = {
    "sphinx": ("Link to this heading", "Link to this equation", "Link to this image", "Link to this table"),
    "booktheme": (
        "Repository",
        "Suggest edit",
        "Open issue",
        "Source repositories",
        "Launch interactive content",
        "Launch on",
    ),
}
SEARCH_BAR = "Search this book..."  # the search box (Jupyter Book's html_theme_options.search_bar_text)
# extensions that write a shared asset: run by the English build only
NOT_SHARED = {"minilm_weights", "decoder_weights", "smollm2_weights"}


def _translated(text: str, missing: list[str]) -> str:
    try:
        return ui(text, "zh")
    except KeyError:
        missing.append(text)
        return text


def site_config(lang: str = "zh", *, missing: list[str] | None = None) -> dict:
    """``_config.yml`` for the book in ``lang``; an English text without its Chinese stays English and is
    appended to ``missing`` (tests/book/test_translation.py fails on it; the build goes on)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    if lang == "en":
        return config
    missing = [] if missing is None else missing
    for key in ("title", "author", "description"):
        config[key] = _translated(" ".join(str(config[key]).split()), missing)
    html = config.setdefault("html", {})
    html["extra_footer"] = _translated(" ".join(html.get("extra_footer", "").split()), missing)
    config["repository"]["path_to_book"] = "zh"
    config["bibtex_bibfiles"] = [str(ROOT / path) for path in config.get("bibtex_bibfiles", [])]
    config["exclude_patterns"] = ["_build", "**.ipynb_checkpoints", "book.yml"]
    sphinx = config["sphinx"]
    sphinx["local_extensions"] = {name: str(ROOT / path) for name, path in sphinx["local_extensions"].items()}
    for name in NOT_SHARED:
        sphinx["local_extensions"].pop(name, None)
    options = sphinx["config"]
    options["language"] = LANGUAGES[lang]
    options["extensions"] = [e for e in options["extensions"] if e not in NOT_SHARED]
    options["html_static_path"] = []
    # the book's copies of the theme's components (_theme/templates), from the root: the build runs in zh/
    options["templates_path"] = [str(ROOT / path) for path in options.get("templates_path", [])]
    options["html_js_files"] = [SHARED + f for f in options.get("html_js_files", [])]
    options["mha_scripts_prefix"] = SHARED  # the figures' scripts (_ext/page_assets.py): the English copies
    options["html_css_files"] = [SHARED + f for f in options.get("html_css_files", [])]
    options["mathjax_path"] = SHARED + options["mathjax_path"]
    options.update({name: _translated(text, missing) for name, text in THEME_TEXTS.items()})
    context = options.setdefault("html_context", {})
    context.update({name: _translated(text, missing) for name, text in THEME_CONTEXT.items()})
    return config


def site_toc(lang: str = "zh", *, missing: list[str] | None = None) -> dict:
    """``_toc.yml`` for the book in ``lang``: part captions translated, the glossary in the back matter."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    if lang == "en":
        return toc
    missing = [] if missing is None else missing
    after = yaml.safe_load((ZH / "book.yml").read_text(encoding="utf-8"))["glossary_after"]
    for part in toc["parts"]:
        if "caption" in part:
            part["caption"] = _translated(part["caption"], missing)
        files = [c["file"] for c in part["chapters"]]
        if after in files:
            part["chapters"].insert(files.index(after) + 1, {"file": "glossary"})
    return toc


def glossary() -> list[dict[str, str]]:
    """The glossary's table: one dict per row, by the table's column names (``zh/glossary.md``)."""
    header, *body = myst.tables((ZH / "glossary.md").read_text(encoding="utf-8"))[0]
    return [dict(zip(header, row, strict=True)) for row in body]


GLOSSARY_ZH, GLOSSARY_EN, GLOSSARY_AVOID = "中文", "English", "不用"  # the glossary's column names


def write_search_words(path: Path) -> Path:
    """A jieba dictionary of the glossary's Chinese terms, so that the search index keeps them whole."""
    words = sorted(
        {row[GLOSSARY_ZH] for row in glossary() if re.search(r"[\u4e00-\u9fff]", row[GLOSSARY_ZH])}
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{w.replace(' ', '')} 1000 n\n" for w in words), encoding="utf-8")
    return path


def write_catalogues(locale: Path, missing: list[str]) -> Path:
    """Compile :data:`THEME_MESSAGES`, translated with zh/book.yml, into ``locale/zh_CN/LC_MESSAGES``."""
    from babel.messages.catalog import Catalog  # Sphinx's own dependency
    from babel.messages.mofile import write_mo

    folder = locale / LANGUAGES["zh"] / "LC_MESSAGES"
    folder.mkdir(parents=True, exist_ok=True)
    for domain, messages in THEME_MESSAGES.items():
        catalog = Catalog(locale=LANGUAGES["zh"], domain=domain)
        for message in messages:
            catalog.add(message, _translated(message, missing))
        with open(folder / f"{domain}.mo", "wb") as file:
            write_mo(file, catalog)
    return locale


def untranslated_pages() -> list[str]:
    """The pages that still show English (a unit not translated, or translated from an older English)."""
    done = zh_sync.translated_documents()
    return [doc for doc in documents() if doc not in done]


def write_sources(
    work: Path, *, lang: str = "zh", adjust: Callable[[dict], dict] | None = None
) -> tuple[Path, Path, list[str]]:
    """Write the derived ``_config.yml`` (changed by ``adjust``, if given) and ``_toc.yml`` into ``work``;
    return their paths and the English texts that have no Chinese yet."""
    missing: list[str] = []
    config, toc = site_config(lang, missing=missing), site_toc(lang, missing=missing)
    if adjust is not None:
        config = adjust(config)
    options = config["sphinx"]["config"]
    options["html_search_options"] = {"dict": str(write_search_words(work / "search_words.txt"))}
    options["mha_other_pages"] = documents()  # the glossary has no English page
    options["mha_untranslated"] = untranslated_pages()
    if lang != "en":
        options["locale_dirs"] = [str(write_catalogues(work / "locale", missing))]
        options["mha_theme_catalogue"] = options["locale_dirs"][0]
    work.mkdir(parents=True, exist_ok=True)
    note = "# Written by scripts/zh_book.py from {} and zh/book.yml: edit those, not this file.\n"
    config_path, toc_path = work / "_config.yml", work / "_toc.yml"
    config_path.write_text(
        note.format("_config.yml") + yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    )
    toc_path.write_text(note.format("_toc.yml") + yaml.safe_dump(toc, sort_keys=False, allow_unicode=True))
    return config_path, toc_path, missing


def build(
    html: Path = HTML,
    work: Path = WORK,
    *,
    source: Path = ZH,
    adjust: Callable[[dict], dict] | None = None,
    strict: bool = True,
) -> Path:
    """Build the Chinese site from ``source`` into ``html`` (Jupyter Book's work files in ``work``);
    ``adjust`` changes the configuration (the student edition's, scripts/student_edition.py)."""
    from jupyter_book.sphinx import build_sphinx

    config_path, toc_path, missing = write_sources(work, adjust=adjust)
    overrides = {"external_toc_path": str(toc_path), "latex_individualpages": False, "nitpicky": strict}
    # Jupyter Book merges these into its configuration key by key: the theme's other options stay
    overrides["html_theme_options"] = {"search_bar_text": _translated(SEARCH_BAR, missing)}
    for text in missing:
        print(f"zh_book: no Chinese for {text!r} in zh/book.yml (it stays English)", file=sys.stderr)
    result = build_sphinx(
        source,
        html,
        noconfig=True,
        path_config=str(config_path),
        confoverrides=overrides,
        doctreedir=work / ".doctrees",
        warningiserror=strict,
        keep_going=True,
    )
    if result:
        raise SystemExit(f"the Chinese site failed to build ({result})")
    return html


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--html", type=Path, default=HTML)
    parser.add_argument("--work", type=Path, default=WORK)
    args = parser.parse_args(argv)
    html = build(args.html.resolve(), args.work.resolve())
    print(f"Open the Chinese book: {html / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
