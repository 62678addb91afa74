"""The weights scripts of the pages that run a real model (MiniLM, SmolLM2): built once per installed model
into a cache, then copied into each site that `make book` writes.

Building them reads the model and writes tens of megabytes of base64; copying them takes a second. The cache
is ``$MHA_CACHE`` or ``~/.cache/mha``, one folder per model version and format, written under a temporary name
and renamed when complete, so that a reader (another build running at the same time) never sees half of it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path


def cache_root(cache: Path | str | None = None) -> Path:
    """``cache``, else ``$MHA_CACHE``, else ``~/.cache/mha``."""
    return Path(cache or os.environ.get("MHA_CACHE") or Path.home() / ".cache" / "mha")


def cached_scripts(
    name: str,
    write: Callable[[Path], None],
    target: Path,
    folders: Sequence[str] = (),
    *,
    cache: Path | str | None = None,
) -> Path:
    """Copy the script ``target.name`` and the ``folders`` beside it from the cache folder ``name``, calling
    ``write(folder)`` to build that folder first if it is not complete.

    Args:
        name: the cache folder, naming the model's version and the scripts' format (a new one rebuilds).
        write: writes ``target.name`` and the ``folders`` into the folder it is given.
        target: the file to write, for example the built site's ``_static/minilm-weights.js``.
        folders: the folders of parts beside it.
        cache: where the built scripts are kept between builds (:func:`cache_root`).

    Returns:
        ``target``.
    """
    root, target = cache_root(cache), Path(target)
    cached = root / name
    if not (cached / target.name).is_file():
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
        try:
            write(staging)
            staging.rename(cached)  # a reader never sees a half-written folder
        except OSError:  # another process built it first
            if not (cached / target.name).is_file():
                raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cached / target.name, target)
    for folder in folders:
        shutil.copytree(cached / folder, target.parent / folder, dirs_exist_ok=True)
    return target
