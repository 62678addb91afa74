"""Build one reveal.js deck per chapter into _build/slides/ (`make slides`), to open from disk, offline.

For each chapter of _toc.yml, in order: a copy of the notebook is shaped into a lecture deck by
scripts/tag_slides.py (the committed notebook is not changed), then nbconvert's slides exporter writes
``<chapter>.slides.html`` with the template in slides/template/mha_reveal, which loads nothing from a CDN.
Everything the decks load is copied into ``_assets/`` beside them: reveal.js (slides/vendor/reveal.js),
the site's MathJax 3 (_vendor/mathjax) and the book's interactive figures (book/widgets/static). The
figures run in the decks as on the static site, computing in the page with no kernel; the explorer and the
calculator are the chapters' live demonstrations, and the calculator has no picture to fall back on. A deck
with chapter 1's MiniLM box also gets the model's weights scripts (about 60 MB in all, built once per model
version and cached, :func:`book.minilm.page.write_weights_script`), which the box loads when used: half
on the first Run, then the rows of the word embeddings that its sentences need. A deck with the decoder box of
"Heads that work together" gets that model's weights script (0.1 MB,
:func:`book.decoder.page.write_weights_script`).

The Chinese decks (``--lang zh``, from ``zh/chapters/``; `make slides` writes them into ``_build/slides/zh/``)
have the deck's own words in Chinese and load everything from the English decks' ``_assets/`` beside their
folder (``../_assets/``, copied only if the English decks have not been built): one copy of the weights serves
both.

Usage: python -m scripts.build_slides [--out _build/slides] [--lang en|zh] [chapters/x.ipynb ...]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import nbformat
import tomllib
import yaml
from nbconvert import SlidesExporter

from book.widgets.frontend import copy_static
from scripts.tag_slides import References, slide_notebook
from scripts.texts import ui
from scripts.zh_book import site_config

ROOT = Path(__file__).resolve().parents[1]
ASSETS = "_assets"
TEMPLATES = ROOT / "slides" / "template"
SOURCES = {  # folder in _assets/ -> where it comes from
    "reveal.js": ROOT / "slides" / "vendor" / "reveal.js",
    "mathjax": ROOT / "_vendor" / "mathjax",
}
FIGURES = "mha"  # the folder in _assets/ that gets the figures' page code (book.widgets.frontend.copy_static)


def chapters(lang: str = "en") -> list[Path]:
    """The chapter notebooks in the order of _toc.yml (``lang="zh"``: the Chinese ones, in zh/)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]
    folder = ROOT if lang == "en" else ROOT / lang
    return [folder / f"{f}.ipynb" for f in files if f.startswith("chapters/")]


def assets_url(lang: str = "en") -> str:
    """Where a deck finds its _assets/: beside it, or for a Chinese deck the English decks', one folder up."""
    return ASSETS if lang == "en" else f"../{ASSETS}"


def exporter(lang: str = "en") -> SlidesExporter:
    exp = SlidesExporter(
        language_code=lang,  # ISO 639-1, which nbconvert checks: "zh" (not "zh-CN")
        extra_template_basedirs=[str(TEMPLATES)],
        template_name="mha_reveal",
        reveal_url_prefix=f"{assets_url(lang)}/reveal.js",
        reveal_theme="white",
        reveal_transition="slide",
        reveal_number="c/t",
        reveal_width="1280",
        reveal_height="800",
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    return exp


def copy_assets(out: Path) -> None:
    for name, source in SOURCES.items():
        target = out / ASSETS / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target)
    if (out / ASSETS / FIGURES).exists():
        shutil.rmtree(out / ASSETS / FIGURES)
    copy_static(out / ASSETS / FIGURES)


def build(out: Path, notebooks: list[Path] | None = None, *, lang: str = "en") -> dict[str, Path]:
    """Write a deck per notebook (default: every chapter in ``lang``) into ``out``; return {chapter stem: deck
    path}. The Chinese decks use the assets of the English ones, in ``out``'s parent folder."""
    from book.decoder.page import WEIGHTS_SCRIPT
    from book.decoder.page import write_weights_script as write_decoder_weights
    from book.minilm.page import CLASS_NAME, WEIGHTS_FILE, write_weights_script
    from book.widgets.frontend import FIGURES, ROOT_CLASSES, SCRIPTS

    out.mkdir(parents=True, exist_ok=True)
    shared = out if lang == "en" else out.parent  # where the decks' _assets/ are
    if lang == "en" or not (shared / ASSETS).is_dir():
        copy_assets(shared)
    refs, exp, decks = References(ROOT, lang=lang), exporter(lang), {}
    minilm = False  # whether a deck holds chapter 1's MiniLM box
    decoder = False  # whether a deck holds the decoder box of "Heads that work together"
    numbers = {p.resolve(): i for i, p in enumerate(chapters(lang), start=1)}
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    book = ui("{title}, version {version}", lang).format(title=site_config(lang)["title"], version=version)
    for path in notebooks or chapters(lang):
        nb = nbformat.read(path, as_version=4)
        nb = slide_notebook(nb, refs, path.parent, number=numbers.get(path.resolve()), book=book)
        resources = {
            "metadata": {"name": path.stem},
            "mha_assets": assets_url(lang),
            "mha_scripts": SCRIPTS,
            "mha_figures": FIGURES,
        }
        body, _ = exp.from_notebook_node(nb, resources=resources)
        deck = out / f"{path.stem}.slides.html"
        deck.write_text(body, encoding="utf-8")
        decks[path.stem] = deck
        minilm = minilm or f'class="{CLASS_NAME}"' in body
        decoder = decoder or f'class="{ROOT_CLASSES["mountDecoder"]}"' in body
    if minilm:
        # the MiniLM box runs the model in the deck as on the site: its weights beside minilm.js, read on use
        weights = shared / ASSETS / "mha" / WEIGHTS_FILE
        if lang == "en" or not weights.is_file():
            write_weights_script(weights)
    if decoder:  # the decoder box runs its model in the deck too: its weights beside decoderbox.js (0.1 MB)
        weights = shared / ASSETS / "mha" / WEIGHTS_SCRIPT
        if lang == "en" or not weights.is_file():
            write_decoder_weights(weights)
    return decks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "slides")
    parser.add_argument("--lang", choices=["en", "zh"], default="en", help="the chapters' language")
    args = parser.parse_args(argv)
    decks = build(args.out, [p.resolve() for p in args.notebooks] or None, lang=args.lang)
    for stem, deck in decks.items():
        print(f"{stem}: {deck}")
    print(f"Open the decks: {args.out.resolve()}/<chapter>.slides.html (press S for the speaker notes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
