"""The static figures of the Chinese notebooks, drawn in Chinese: `python -m scripts.zh_plots [CHAPTER ...]`.

A chapter's static (matplotlib) figures are PNG pictures in its stored outputs, or pictures inside an
interactive figure's HTML: a box's static picture (``<img class="…-print">``, what print and a notebook
without the page's scripts show) and the fallback text beside it, which the box draws with the same texts. The
English notebook is run by `make notebooks` (scripts/execute_notebooks.py); this script runs it once more, in
memory, on the same portable kernels, with ``BOOK_FIGURE_LANGUAGE=zh`` in the kernel's environment, so that
every text of every figure comes from the catalogue ``zh/plots.yml`` (book/figures/_text.py) and is drawn with
the CJK font. It stores each Chinese picture in the Chinese notebook (zh/chapters/X.ipynb), in place of the
English one, with a record in the output's metadata:

    "translation": {"en": <hash of the English picture it replaces>, "texts": [...], "kept": [...]}

``texts`` are the texts the picture shows and ``kept`` those of them shown as they are on purpose (tokens,
names). For a picture inside a figure's HTML, the Chinese output is the English one with its figure's texts
translated (scripts/zh_figures.py) and, after the figure's data, the Chinese run's picture, alt text and
fallback; its record's hash is that of the English picture part, its texts are those the PNG carries
(book.figures._pyplot.png), and ``html`` holds the alt text and the fallback's words. scripts/zh_sync.py keeps
a Chinese picture while its English picture is the one recorded, and otherwise puts the English picture back
(then tests/book/test_plot_texts.py fails, naming the chapter and the command to run). The code cells and
every other output stay those of the English notebook: only the pictures change. Nothing here runs in CI: the
pictures are committed, like every output.

    python -m scripts.zh_plots                        # the chapters whose Chinese pictures are not in step
    python -m scripts.zh_plots chapters/the_math.ipynb  # these chapters, whatever their state
    python -m scripts.zh_plots --all                  # every chapter with a figure (after editing plots.yml)
"""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import html
import io
import json
import re
import sys
from pathlib import Path

import nbformat

from scripts.execute_notebooks import LANGUAGE, run

ROOT = Path(__file__).resolve().parents[1]
RECORD = "translation"  # the output metadata key, as zh_sync's cell records
PNG = "image/png"
HTML = "text/html"
_DATA_END = "</script>"  # a figure's HTML: its root, its data, then (a box) its fallback and its picture
_PRINT = re.compile(r'<img class="[\w-]+-print" alt="([^"]*)"[^>]*src="data:image/png;base64,([^"]+)">')


def _picture_part(output: dict) -> str | None:
    """The part of an interactive figure's HTML after its data, if it holds a picture (a box's print picture
    and fallback text), else ``None``."""
    text = output.get("data", {}).get(HTML)
    if isinstance(text, list):
        text = "".join(text)
    if not isinstance(text, str) or PNG in output.get("data", {}) or not _PRINT.search(text):
        return None
    return text[text.index(_DATA_END) + len(_DATA_END) :]


def picture_hash(output: dict) -> str:
    """The hash a Chinese picture records of the English picture it replaces (16 hex digits)."""
    if (part := _picture_part(output)) is not None:
        text = part
    else:
        data = output["data"][PNG]
        text = "".join(data) if isinstance(data, list) else data
    return hashlib.sha256("".join(text.split()).encode("utf-8")).hexdigest()[:16]


def pictures(cell) -> list[int]:
    """The indices of a code cell's outputs that are pictures: a static figure's PNG, or an interactive
    figure's HTML that holds one."""
    outputs = cell.get("outputs", [])
    return [i for i, o in enumerate(outputs) if PNG in o.get("data", {}) or _picture_part(o) is not None]


def with_picture(output: dict, chinese: dict) -> dict:
    """``output`` (the English output, its figure's texts already translated) with the Chinese picture of
    ``chinese`` (an output of the Chinese run, or of the Chinese notebook, with its record)."""
    if (part := _picture_part(chinese)) is None:
        return copy.deepcopy(chinese)
    merged = copy.deepcopy(output)
    text = merged["data"][HTML]
    text = "".join(text) if isinstance(text, list) else text
    merged["data"][HTML] = text[: text.index(_DATA_END) + len(_DATA_END)] + part
    merged.setdefault("metadata", {})[RECORD] = copy.deepcopy(chinese["metadata"][RECORD])
    return merged


def drawn_texts(output: dict) -> dict:
    """The texts a picture of the Chinese run shows, and those kept (book/figures/_text.py): from the
    display's metadata, or, for a picture inside a figure's HTML, from the PNG's text chunk, with its alt
    text and the visible words of its fallback."""
    metadata = output.setdefault("metadata", {})
    if (part := _picture_part(output)) is None:
        texts = metadata.get(PNG, {}).pop("figure_texts", {"texts": [], "kept": []})
        if PNG in metadata and not metadata[PNG]:
            del metadata[PNG]
        return texts
    from PIL import Image  # matplotlib's own dependency

    found = _PRINT.search(part)
    chunk = Image.open(io.BytesIO(base64.b64decode(found.group(2)))).text.get("figure_texts")
    texts = json.loads(chunk) if chunk else {"texts": [], "kept": []}
    fallback = html.unescape(re.sub(r"<[^>]+>", "", part[: found.start()])).strip()
    texts["html"] = [t for t in (html.unescape(found.group(1)), fallback) if t]  # not drawn by matplotlib
    return texts


def chinese_path(english: Path) -> Path:
    return ROOT / "zh" / english.resolve().relative_to(ROOT)


def in_step(english: nbformat.NotebookNode, chinese: nbformat.NotebookNode) -> list[str]:
    """What is not in step: a picture of ``english`` whose Chinese is missing or records another English
    picture, named by cell (empty: every picture is Chinese and current)."""
    zh_cells = {c.get("id"): c for c in chinese.cells}
    behind = []
    for index, cell in enumerate(english.cells):
        if cell.cell_type != "code" or not pictures(cell):
            continue
        zh = zh_cells.get(cell.get("id"))
        zh_pictures = pictures(zh) if zh is not None else []
        for k, i in enumerate(pictures(cell)):
            if k >= len(zh_pictures):
                behind.append(f"cell {index} (id {cell.get('id')}): picture {k + 1} is missing")
                continue
            record = zh.outputs[zh_pictures[k]].get("metadata", {}).get(RECORD, {})
            if record.get("en") != picture_hash(cell.outputs[i]):
                behind.append(
                    f"cell {index} (id {cell.get('id')}): picture {k + 1} is the English one or older"
                )
    return behind


def draw(english_path: Path) -> tuple[int, float]:
    """Run the English chapter with Chinese figures; store its pictures in the Chinese notebook. Returns the
    number of pictures stored and the seconds the run took."""
    english = nbformat.read(english_path, as_version=4)
    ran = copy.deepcopy(english)
    seconds = run(ran, english_path.resolve().parent, env={LANGUAGE: "zh"})
    zh_path = chinese_path(english_path)
    chinese = nbformat.read(zh_path, as_version=4)
    zh_cells = {c.get("id"): c for c in chinese.cells}
    stored = 0
    for cell, after in zip(english.cells, ran.cells, strict=True):
        if cell.cell_type != "code" or not pictures(cell):
            continue
        drawn, target = pictures(after), zh_cells.get(cell.get("id"))
        if target is None or len(drawn) != len(pictures(cell)) or len(pictures(target)) != len(drawn):
            raise SystemExit(
                f"{english_path} cell {cell.get('id')}: {len(pictures(cell))} English pictures, {len(drawn)} "
                "drawn in Chinese; run python -m scripts.zh_sync first (and make notebooks if the English is "
                "not current)"
            )
        for i, j, t in zip(pictures(cell), drawn, pictures(target), strict=True):
            output = copy.deepcopy(after.outputs[j])
            texts = drawn_texts(output)
            output.metadata[RECORD] = {"en": picture_hash(cell.outputs[i]), **texts}
            target.outputs[t] = with_picture(target.outputs[t], output)
            stored += 1
    zh_path.write_text(nbformat.writes(chinese) + "\n", encoding="utf-8")
    return stored, seconds


def chapters_with_figures() -> list[Path]:
    paths = sorted((ROOT / "chapters").glob("*.ipynb"))
    return [p for p in paths if any(pictures(c) for c in nbformat.read(p, as_version=4).cells)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("chapters", nargs="*", type=Path, help="English notebooks (default: those behind)")
    parser.add_argument("--all", action="store_true", help="every chapter with a figure")
    args = parser.parse_args(argv)
    paths = args.chapters or chapters_with_figures()
    if not args.chapters and not args.all:
        paths = [
            p
            for p in paths
            if in_step(nbformat.read(p, as_version=4), nbformat.read(chinese_path(p), as_version=4))
        ]
    for path in paths:
        stored, seconds = draw(path)
        print(f"{path}: {stored} pictures drawn in Chinese in {seconds:.1f} s", flush=True)
    if not paths:
        print("every Chinese picture is in step with its English one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
