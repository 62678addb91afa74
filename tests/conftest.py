"""Shared fixtures: tests run on the CPU in float64 unless they say otherwise, and share one browser."""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # the book's build scripts

import chromium


@pytest.fixture(autouse=True)
def _deterministic():
    torch.manual_seed(0)
    yield


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium (scripts/chromium.py), one for the whole run; each test opens its own pages."""
    if chromium.CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it): apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = chromium.launch(p)
        yield launched
        launched.close()
