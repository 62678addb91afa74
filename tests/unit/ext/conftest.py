"""What the tests of _ext/minilm_weights.py and _ext/smollm2_weights.py share: the hook, faked writer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest


@pytest.fixture
def hook_writes(tmp_path, monkeypatch) -> Callable[[ModuleType, ModuleType], list[Path]]:
    """hook_writes(extension, writer): the targets that ``extension.write_weights`` passes to
    ``writer.write_weights_script`` (faked) after a successful HTML build into ``tmp_path``, a failed one and
    a LaTeX build; only the first may write."""

    def run(extension: ModuleType, writer: ModuleType) -> list[Path]:
        written = []

        def fake_write(target: Path) -> Path:
            written.append(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("globalThis.x({});\n")
            return target

        monkeypatch.setattr(writer, "write_weights_script", fake_write)
        html_app = SimpleNamespace(builder=SimpleNamespace(format="html"), outdir=str(tmp_path))
        extension.write_weights(html_app, None)
        extension.write_weights(html_app, RuntimeError("failed build"))
        extension.write_weights(SimpleNamespace(builder=SimpleNamespace(format="latex"), outdir="x"), None)
        return written

    return run
