"""Keep the Chinese book (``zh/``) in step with the English one: `python -m scripts.zh_sync`.

The English sources are the one source of the book's code and outputs. The Chinese book mirrors them in
``zh/``, document by document at the same relative path (``chapters/the_math.ipynb`` and
``zh/chapters/the_math.ipynb``, ``intro.md`` and ``zh/intro.md``), plus ``zh/glossary.md`` (the Chinese book's
term list, which has no English page) and ``zh/book.yml`` (the Chinese texts of ``_config.yml`` and
``_toc.yml``). The documents are those of ``_toc.yml`` (:mod:`scripts.documents`).

**Units.** A notebook's units are its Markdown cells, matched by cell id, and the alt texts of its pictures (a
code cell's ``mystnb.image.alt``, unit ``<cell id>/alt``, recorded under ``"translation": {"alt": ...}`` in
the code cell's metadata); a Markdown page's units are its sections (split before each heading, with a
``(label)=`` line that precedes a heading), matched in order.

**Records.** Each unit of a Chinese document records what it translates: a JSON object, in a notebook cell's
metadata under ``"translation"``, in a page as a MyST comment line that opens the section (``% translation
{"en": "…"}``):

* ``{"en": H}``: the unit translates the English text whose hash is ``H`` (:func:`text_hash`: SHA-256 of the
  text with its whitespace runs made single spaces, so that rewrapping a paragraph changes nothing, 16 hex
  digits);
* ``{"en": H, "copy": C}``: not translated yet. The unit is this script's copy of that English text (``C`` is
  the copy's own hash). The copy is refreshed whenever the English changes, until a translator edits it: then
  its hash no longer matches ``C``, the copy is left alone (it is "started"), and ``--accept`` records it;
* ``"allow": [...]``, optional in either: checks that this unit may skip, each ``kind:value``: ``term:<English
  term>`` (the glossary's checks), ``number:<n>`` and ``math:<expression>`` (the sameness checks), with a
  reason in the translation's own words where it is not obvious.

**What the script writes.** Code cells (source, outputs, metadata and tags, execution counts), the cells'
order and the notebook's metadata are copied from the English notebook, so that a Chinese notebook runs as it
is in Jupyter or Colab, with the same set-up cell; only the interactive figures' texts in the outputs are
translated on the way, with the catalogue ``zh/figures.yml`` (:mod:`scripts.zh_figures`), and the static
figures' pictures are the Chinese ones that :mod:`scripts.zh_plots` drew from the current English pictures
(an English picture where none is current). Markdown cells keep
their Chinese text and record, and cells and sections not translated yet get a copy of the current English
(paths of included files made relative to ``zh/``: :func:`relocate`). Nothing is translated twice: a
translation stays until its English changes, and then it is reported stale (the tests fail) rather than
replaced.

Commands:

    python -m scripts.zh_sync                    # regenerate zh/ from the English sources, translations kept
    python -m scripts.zh_sync --check            # exit 1 if that would change a file
    python -m scripts.zh_sync --status [DOC ...] # per document: its units translated, stale, untranslated
    python -m scripts.zh_sync --diff DOC         # what changed in the English of each stale unit (from git)
    python -m scripts.zh_sync --accept DOC [UNIT ...]  # these units now translate the current English
    python -m scripts.zh_sync --figures          # the figure texts with no Chinese in zh/figures.yml

``DOC`` is a document's name as in ``_toc.yml`` (``chapters/step_by_step``, ``intro``), ``UNIT`` a cell id or
a section number as the status and the tests print them. ``--accept DOC`` alone accepts the units whose copy a
translator has edited; a stale unit is accepted by naming it, after its Chinese has been brought up to date.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import difflib
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat

from scripts import myst, zh_figures, zh_plots
from scripts.documents import documents, english_path

ROOT = Path(__file__).resolve().parents[1]
ZH = ROOT / "zh"
RECORD = "translation"  # the cell metadata key, and the word of a page's record comment


# ---------------------------------------------------------------------------------------------------------
# Hashes, paths
# ---------------------------------------------------------------------------------------------------------


def chinese_path(doc: str, root: Path = ROOT) -> Path:
    """Where the Chinese document lives: ``zh/`` plus the English path."""
    return root / "zh" / english_path(doc, root).relative_to(root)


def text_hash(text: str) -> str:
    """The hash that a record keeps: whitespace runs count as one space (rewrapping changes nothing)."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


PATH_DIRECTIVES = {"literalinclude", "include", "image", "figure"}  # their argument is a path


def relocate(text: str, depth: int = 1) -> str:
    """``text`` of an English document with its relative paths to included files and images made valid
    ``depth`` folders deeper (``zh/`` is one folder deeper): ``../mha/x.py`` becomes ``../../mha/x.py``. The
    paths are those the parser reads (scripts/myst.py): the argument of a ``{literalinclude}``, ``{include}``,
    ``{image}`` or ``{figure}`` directive (in another directive too) and an image's source."""
    lines = text.splitlines(keepends=True)
    paths = []  # (the lines where the path is written, what it follows there, the path)
    for token, first in myst.walk(text):
        if token.map is None:
            continue
        where = range(first + token.map[0], first + token.map[1])
        if (found := myst.directive(token)) and found[0] in PATH_DIRECTIVES and found[1]:
            paths.append((where[:1], "}", found[1].split()[0]))  # on the directive's first line
        paths += [(where, "](", c.attrs["src"]) for c in token.children or [] if c.type == "image"]
    for where, before, path in paths:
        if "://" not in path and not path.startswith(("/", "#", "data:")):
            line, at = _written(lines, where, before, path)
            lines[line] = lines[line][:at] + "../" * depth + lines[line][at:]
    return "".join(lines)


def _written(lines: list[str], where: range, before: str, path: str) -> tuple[int, int]:
    """Where, on one of the lines ``where``, ``path`` is written after ``before`` (spaces between), and not
    moved yet (a moved path follows ``before`` with ``../``): the line and the path's first character."""
    for line in where:
        at = lines[line].find(before)
        while at >= 0:
            rest = lines[line][at + len(before) :]
            start = at + len(before) + len(rest) - len(rest.lstrip(" \t"))
            if lines[line].startswith(path, start):
                return line, start
            at = lines[line].find(before, at + 1)
    raise ValueError(f"{path!r} is not written on the lines {where.start + 1}-{where.stop} of the text")


# ---------------------------------------------------------------------------------------------------------
# Units and their states
# ---------------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Unit:
    """One translatable unit of a Chinese document, with the English it mirrors."""

    doc: str
    key: str  # a cell id, or a section's number (from 1)
    index: int  # the cell's index in the notebook, or the section's number
    en: str  # the current English text
    zh: str  # the Chinese document's text (a translation, or a copy of the English)
    record: dict
    section: bool = False  # a Markdown page's section (else a notebook's cell or alt text)

    @property
    def state(self) -> str:
        """``translated``, ``stale`` (translated from an older English text), ``untranslated`` (the script's
        copy of the English) or ``started`` (a copy a translator has edited, not yet recorded by --accept)."""
        if "copy" in self.record:
            return "untranslated" if text_hash(self.zh) == self.record["copy"] else "started"
        if not self.record.get("en"):
            return "untranslated"
        return "translated" if self.record["en"] == text_hash(self.en) else "stale"

    @property
    def allowed(self) -> set[str]:
        return set(self.record.get("allow", []))

    @property
    def where(self) -> str:
        """How messages name the unit: the Chinese file, the cell (number, id) or the section, its start."""
        first = next((line for line in self.en.splitlines() if line.strip()), "")[:60]
        if self.section:
            return f'zh/{self.doc}.md section {self.key} ("{first}")'
        if self.key.endswith(ALT):
            return (
                f"zh/{self.doc}.ipynb cell {self.index} (id {self.key[: -len(ALT)]}, its picture's alt text)"
            )
        return f'zh/{self.doc}.ipynb cell {self.index} (id {self.key}, "{first}")'

    @property
    def advice(self) -> str:
        """What the unit's state asks of a maintainer, with the commands (what the tests print)."""
        accept = f"python -m scripts.zh_sync --accept {self.doc} {self.key}"
        if self.state == "stale":
            return (
                f"{self.where} was translated from an older English text: update the Chinese (python -m "
                f"scripts.zh_sync --diff {self.doc} shows what changed in the English), then {accept}"
            )
        if self.state == "started":
            return f"{self.where} is translated, not recorded: if it translates the current English, {accept}"
        if self.state == "untranslated":
            return f"{self.where} has no translation yet (it shows the English): translate it, then {accept}"
        return f"{self.where} is translated"


def copy_record(english: str) -> tuple[str, dict]:
    """The copy of an English text that an untranslated unit holds, and its record."""
    text = relocate(english)
    return text, {"en": text_hash(english), "copy": text_hash(text)}


# ---------------------------------------------------------------------------------------------------------
# Notebooks
# ---------------------------------------------------------------------------------------------------------


ALT = "/alt"  # a figure's alt text is a unit of its own, named by its code cell's id and this


def alt_text(cell) -> str | None:
    """A code cell's alt text for its picture (``mystnb.image.alt``, which myst-nb gives the page's image)."""
    return cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt")


def _kept(english: str, before: str | None, record: dict, key: str, index: int) -> tuple[str, dict]:
    """A unit's text and record after a sync: the translation kept, or a fresh copy of the English."""
    state = Unit("", key, index, english, before, record).state if before is not None and record else ""
    if state in ("translated", "stale", "started"):
        return before, record
    text, fresh = copy_record(english)
    return text, {**fresh, **({"allow": record["allow"]} if "allow" in record else {})}


def sync_notebook(
    en: nbformat.NotebookNode,
    zh: nbformat.NotebookNode | None,
    figures: zh_figures.Catalogue | None = None,
) -> nbformat.NotebookNode:
    """The Chinese notebook for ``en``: code cells and metadata from ``en``, the Markdown and the pictures'
    alt texts of ``zh`` kept, the interactive figures' texts in the outputs translated with ``figures`` (the
    catalogue ``zh/figures.yml``: :mod:`scripts.zh_figures`)."""
    old = {c.get("id"): c for c in zh.cells} if zh is not None else {}
    out = copy.deepcopy(en)
    for index, cell in enumerate(out.cells):
        before = old.get(cell.get("id"))
        if before is not None and before.cell_type != cell.cell_type:
            before = None
        if cell.cell_type == "code" and figures is not None:
            zh_figures.translate_outputs(cell.get("outputs", []), figures)
        if cell.cell_type == "code" and before is not None:
            keep_pictures(cell, before)
        if cell.cell_type == "markdown":
            record = dict(before.metadata.get(RECORD, {})) if before is not None else {}
            cell.source, record = _kept(cell.source, getattr(before, "source", None), record, cell.id, index)
            cell.metadata[RECORD] = record
        elif (english := alt_text(cell)) is not None:
            record = dict(before.metadata.get(RECORD, {}).get("alt", {})) if before is not None else {}
            text, record = _kept(
                english, alt_text(before) if before is not None else None, record, cell.id, index
            )
            cell.metadata["mystnb"]["image"]["alt"] = text
            cell.metadata[RECORD] = {"alt": record}
    return out


def keep_pictures(cell, before) -> None:
    """Put back into ``cell`` (the English code cell, copied) the Chinese pictures of ``before`` (the Chinese
    notebook's cell) that were drawn from its current English pictures (:mod:`scripts.zh_plots`)."""
    old = [before.outputs[i] for i in zh_plots.pictures(before)]
    for k, i in enumerate(zh_plots.pictures(cell)):
        if k < len(old) and old[k].get("metadata", {}).get(RECORD, {}).get("en") == zh_plots.picture_hash(
            cell.outputs[i]
        ):
            cell.outputs[i] = zh_plots.with_picture(cell.outputs[i], old[k])


def notebook_units(doc: str, en: nbformat.NotebookNode, zh: nbformat.NotebookNode) -> list[Unit]:
    cells = {c.get("id"): c for c in en.cells}
    units = []
    for index, cell in enumerate(zh.cells):
        english = cells.get(cell.get("id"))
        if english is None or english.cell_type != cell.cell_type:
            continue
        if cell.cell_type == "markdown":
            record = dict(cell.metadata.get(RECORD, {}))
            units.append(Unit(doc, cell.id, index, english.source, cell.source, record))
        elif alt_text(english) is not None and alt_text(cell) is not None:
            record = dict(cell.metadata.get(RECORD, {}).get("alt", {}))
            units.append(Unit(doc, cell.id + ALT, index, alt_text(english), alt_text(cell), record))
    return units


# ---------------------------------------------------------------------------------------------------------
# Markdown pages
# ---------------------------------------------------------------------------------------------------------


def split_sections(text: str) -> list[str]:
    """A MyST page cut before each of its headings (not one in a code block or a directive; a ``(label)=``
    target right above a heading goes with it); the pieces joined give the page back."""
    lines, blocks = text.splitlines(keepends=True), myst.blocks(text)
    targets = {block.start for block in blocks if block.kind == "myst_target"}
    starts = [0]
    for block in blocks:
        if block.kind == "heading" and block.start > 0:
            start = block.start
            while start - 1 in targets:
                start -= 1
            if start > starts[-1]:
                starts.append(start)
    return ["".join(lines[a:b]) for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]


def read_page(text: str) -> list[tuple[dict, str]]:
    """A Chinese page's sections: (record, text), each section opened by its record comment (a line of a
    comment of the page, ``% translation {...}``)."""
    records = {}  # line -> the record it holds
    for block in myst.blocks(text):
        for line, comment in enumerate(block.body.split("\n") if block.kind == "myst_line_comment" else []):
            word, _, record = comment.strip().partition(" ")
            if word == RECORD and record.startswith("{"):
                records[block.start + line] = json.loads(record)
    sections: list[tuple[dict, str]] = []
    for number, line in enumerate(text.splitlines(keepends=True)):
        if number in records:
            sections.append((records[number], ""))
        elif sections:
            sections[-1] = (sections[-1][0], sections[-1][1] + line)
        elif line.strip():
            raise ValueError(f"text before the first record comment: {line[:60]!r}")
    return sections


def write_page(sections: list[tuple[dict, str]]) -> str:
    """A Chinese page from its sections: each opened by its record comment, after a blank line (a MyST comment
    cannot interrupt a paragraph)."""
    parts = []
    for number, (record, text) in enumerate(sections, start=1):
        end = "\n" if number == len(sections) else "\n\n"
        parts.append(f"% {RECORD} {json.dumps(record, ensure_ascii=False)}\n{text.rstrip()}{end}")
    return "".join(parts)


def _align(en_hashes: list[str], old: list[tuple[dict, str]]) -> list[int | None]:
    """For each English section, the index of the Chinese section that mirrors it, or None (a new section).
    Sections whose English is unchanged match by hash; the others pair in order between matches."""
    matcher = difflib.SequenceMatcher(a=en_hashes, b=[r.get("en", "") for r, _ in old], autojunk=False)
    pairs: list[int | None] = [None] * len(en_hashes)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            for k in range(min(i2 - i1, j2 - j1)):
                pairs[i1 + k] = j1 + k
    return pairs


def sync_page(en_text: str, zh_text: str | None) -> str:
    """The Chinese page for ``en_text``: its translated sections kept, the others copies of the English."""
    english = split_sections(en_text)
    old = read_page(zh_text) if zh_text else []
    pairs = _align([text_hash(s) for s in english], old)
    out = []
    for number, (section, j) in enumerate(zip(english, pairs, strict=True), start=1):
        record, text = old[j] if j is not None else ({}, "")
        state = (
            Unit("", str(number), number, section, text, record, section=True).state
            if record
            else "untranslated"
        )
        if state == "untranslated":
            text, fresh = copy_record(section)
            out.append(({**fresh, **({"allow": record["allow"]} if "allow" in record else {})}, text))
        else:
            out.append((record, text))
    return write_page(out)


def page_units(doc: str, en_text: str, zh_text: str) -> list[Unit]:
    english, chinese = split_sections(en_text), read_page(zh_text)
    return [
        Unit(doc, str(n), n, en, zh, record, section=True)
        for n, (en, (record, zh)) in enumerate(zip(english, chinese, strict=False), start=1)
    ]


# ---------------------------------------------------------------------------------------------------------
# The book
# ---------------------------------------------------------------------------------------------------------


def synced(doc: str, root: Path = ROOT) -> str:
    """The text that ``zh/<doc>`` must hold: the English document's code, the Chinese one's translations."""
    en_path, zh_path = english_path(doc, root), chinese_path(doc, root)
    old = zh_path.read_text(encoding="utf-8") if zh_path.exists() else None
    if en_path.suffix == ".ipynb":
        zh = nbformat.reads(old, as_version=4) if old else None
        figures = zh_figures.Catalogue.load(root)
        return nbformat.writes(sync_notebook(nbformat.read(en_path, as_version=4), zh, figures)) + "\n"
    return sync_page(en_path.read_text(encoding="utf-8"), old)


def units(doc: str, root: Path = ROOT) -> list[Unit]:
    """The units of the committed Chinese document (as it is, not as the script would write it)."""
    en_path, zh_path = english_path(doc, root), chinese_path(doc, root)
    if not zh_path.exists():
        raise FileNotFoundError(f"{zh_path.relative_to(root)} is missing: run python -m scripts.zh_sync")
    if en_path.suffix == ".ipynb":
        en, zh = nbformat.read(en_path, as_version=4), nbformat.read(zh_path, as_version=4)
        return notebook_units(doc, en, zh)
    return page_units(doc, en_path.read_text(encoding="utf-8"), zh_path.read_text(encoding="utf-8"))


def translated_documents(root: Path = ROOT) -> list[str]:
    """The documents whose every unit translates the current English (the others still show some English)."""
    return [doc for doc in documents(root) if all(u.state == "translated" for u in units(doc, root))]


def _translations(path: Path) -> list[str]:
    """The translated (or started) texts of a Chinese document's text: what a sync must not lose unnoticed."""
    if path.suffix == ".ipynb":
        cells = nbformat.read(path, as_version=4).cells
        pairs = [(c.metadata.get(RECORD, {}), c.source) for c in cells if c.cell_type == "markdown"]
        pairs += [
            (c.metadata.get(RECORD, {}).get("alt"), alt_text(c)) for c in cells if c.cell_type == "code"
        ]
    else:
        pairs = read_page(path.read_text(encoding="utf-8"))
    return [text for record, text in pairs if record and text_hash(text) != record.get("copy")]


def sync(root: Path = ROOT, *, write: bool = True, dropped: list[str] | None = None) -> list[Path]:
    """Regenerate every Chinese document; return those that changed (written only with ``write``). The start
    of each translation that the English no longer has a place for (its cell deleted) goes to ``dropped``."""
    changed = []
    for doc in documents(root):
        path, text = chinese_path(doc, root), synced(doc, root)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            changed.append(path)
            before = _translations(path) if path.exists() else []
            if write:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                lost = [t for t in before if t.strip() not in {a.strip() for a in _translations(path)}]
                if dropped is not None:
                    dropped += [f"{path.relative_to(root)}: {' '.join(t.split())[:60]}" for t in lost]
    return changed


def accept(doc: str, keys: list[str] | None = None, root: Path = ROOT) -> list[str]:
    """Record that units of ``doc`` translate the current English: the named ones (a stale unit whose Chinese
    was brought up to date, or a started one), or with no names every started unit. Returns what it did."""
    path, done = chinese_path(doc, root), []
    found = {u.key: u for u in units(doc, root)}
    unknown = sorted(set(keys or []) - set(found))
    if unknown:
        raise SystemExit(f"{doc}: no unit {unknown}; the units are {sorted(found)}")
    chosen = [found[k] for k in keys] if keys else [u for u in found.values() if u.state == "started"]
    records = {}
    for unit in chosen:
        if unit.state == "untranslated":
            raise SystemExit(f"{unit.where} is still the English copy: translate it first")
        record = {"en": text_hash(unit.en), **({"allow": unit.record["allow"]} if unit.allowed else {})}
        if (
            unit.state == "started"
        ):  # translated from the copy it was given, which may be older than the English
            record["en"] = unit.record["en"]
        records[unit.key] = record
        done.append(f"{unit.where}: {unit.state} -> recorded")
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.get("id") in records:
                cell.metadata[RECORD] = records[cell.id]
            if cell.get("id", "") + ALT in records:
                cell.metadata[RECORD] = {"alt": records[cell.id + ALT]}
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    else:
        sections = read_page(path.read_text(encoding="utf-8"))
        sections = [(records.get(str(n), r), t) for n, (r, t) in enumerate(sections, start=1)]
        path.write_text(write_page(sections), encoding="utf-8")
    return done


def english_history(doc: str, wanted: str, key: str, root: Path = ROOT) -> str | None:
    """The English text of a unit whose hash is ``wanted``, from the English file's git history."""
    path = english_path(doc, root).relative_to(root).as_posix()
    try:
        commits = subprocess.run(
            ["git", "-C", str(root), "log", "--format=%H", "--", path],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    for commit in commits:
        text = subprocess.run(
            ["git", "-C", str(root), "show", f"{commit}:{path}"], capture_output=True, text=True
        )
        if text.returncode:
            continue
        if path.endswith(".ipynb"):
            cells = nbformat.reads(text.stdout, as_version=4).cells
            candidates = [c.source if c.cell_type == "markdown" else alt_text(c) or "" for c in cells]
        else:
            candidates = split_sections(text.stdout)
        for candidate in candidates:
            if text_hash(candidate) == wanted:
                return candidate
    return None


def status_lines(docs: list[str], root: Path = ROOT) -> list[str]:
    lines = []
    for doc in docs:
        found = units(doc, root)
        states = [u.state for u in found]
        counts = ", ".join(
            f"{states.count(s)} {s}" for s in ("translated", "stale", "started", "untranslated")
        )
        lines.append(f"{doc}: {len(found)} units: {counts}")
        lines += [f"  {u.state}: {u.where}" for u in found if u.state in ("stale", "started")]
    return lines


def _sentences(text: str) -> list[str]:
    """A text one sentence a line, whatever its wrapping: what a diff of prose should compare."""
    return re.sub(r"\s+", " ", text).strip().replace(". ", ".\n").splitlines()


def diff_lines(doc: str, root: Path = ROOT) -> list[str]:
    lines = []
    for unit in units(doc, root):
        if unit.state not in ("stale", "started") or unit.record.get("en") == text_hash(unit.en):
            continue
        old = english_history(doc, unit.record["en"], unit.key, root)
        lines.append(f"== {unit.where}: the English it translates changed")
        if old is None:
            lines.append("  (the older English text is not in this clone's git history)")
            continue
        diff = difflib.unified_diff(_sentences(old), _sentences(unit.en), "translated", "now", lineterm="")
        lines += list(diff)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="exit 1 if zh/ is not in step with the English")
    group.add_argument("--status", nargs="*", metavar="DOC", help="translation state per document")
    group.add_argument("--diff", metavar="DOC", help="English changes behind each stale unit of DOC")
    group.add_argument(
        "--accept", nargs="+", metavar=("DOC", "UNIT"), help="record translations of DOC's units"
    )
    group.add_argument(
        "--figures", action="store_true", help="figure texts with no Chinese in zh/figures.yml, pairs unused"
    )
    args = parser.parse_args(argv)
    if args.figures:
        found = zh_figures.report()
        print("\n".join(found.lines()))
        return 0 if found.ok else 1
    if args.check:
        changed = sync(write=False)
        for path in changed:
            print(
                f"{path.relative_to(ROOT)} is not in step with its English source: "
                "run python -m scripts.zh_sync"
            )
        return 1 if changed else 0
    if args.status is not None:
        print("\n".join(status_lines(args.status or documents())))
        return 0
    if args.diff:
        print("\n".join(diff_lines(args.diff)) or f"{args.diff}: no translated unit is behind its English")
        return 0
    if args.accept:
        doc, *keys = args.accept
        print("\n".join(accept(doc, keys or None)) or f"{doc}: nothing to accept (no started unit)")
        return 0
    dropped: list[str] = []
    for path in sync(dropped=dropped):
        print(f"wrote {path.relative_to(ROOT)}")
    for text in dropped:
        print(f"dropped, its English is gone (git keeps it): {text}")
    print("\n".join(status_lines(documents())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
