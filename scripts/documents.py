"""The book's documents: their names in ``_toc.yml``, in order, and their English sources.

A document is named as ``_toc.yml`` names it (``intro``, ``chapters/the_math``); its English source is the one
file of that name, ``.ipynb`` or ``.md``. The Chinese book (scripts/zh_sync.py) mirrors these documents, and
the figures' texts (scripts/zh_figures.py) are read from the English notebooks among them.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from scripts import ROOT


def documents(root: Path = ROOT) -> list[str]:
    """The book's documents, as named in ``_toc.yml``, in order (the root first)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]


def english_path(doc: str, root: Path = ROOT) -> Path:
    """The English source of ``doc``: ``<doc>.ipynb`` or ``<doc>.md``, whichever exists (exactly one must)."""
    found = [p for p in (root / f"{doc}.ipynb", root / f"{doc}.md") if p.exists()]
    if len(found) != 1:
        raise FileNotFoundError(f"{doc}: expected one English source, {doc}.ipynb or {doc}.md, found {found}")
    return found[0]
