"""scripts/chromium.py: Playwright launches Debian's Chromium with the flags that keep it offline, or the
launch says which package is missing."""

from types import SimpleNamespace

import pytest

from scripts import chromium


def playwright():
    calls = []
    return SimpleNamespace(chromium=SimpleNamespace(launch=lambda **kw: calls.append(kw) or "browser")), calls


def test_launch_uses_the_system_chromium_and_the_offline_flags(monkeypatch):
    monkeypatch.setattr(chromium, "CHROMIUM", "/usr/bin/chromium")
    p, calls = playwright()
    assert chromium.launch(p) == "browser"
    assert calls == [{"executable_path": "/usr/bin/chromium", "args": chromium.ARGS}]
    assert {"--disable-background-networking", "--disable-component-update", "--no-sandbox"} <= set(
        chromium.ARGS
    )


def test_without_chromium_the_launch_names_the_package(monkeypatch):
    monkeypatch.setattr(chromium, "CHROMIUM", None)
    p, calls = playwright()
    with pytest.raises(RuntimeError, match="apt-get install chromium"):
        chromium.launch(p)
    assert calls == []
