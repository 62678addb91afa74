"""What the unit lane's tests share beyond tests/conftest.py: the page's ports in a JavaScript engine."""

from __future__ import annotations

import pytest

from tests.ports import Ports


@pytest.fixture(scope="module")
def ports() -> Ports:
    """Every port of book/*/static/ports/ in one V8 context (tests/ports.py), one per test file: each port
    is tested equal to its Python twin in the twin's test file."""
    return Ports()
