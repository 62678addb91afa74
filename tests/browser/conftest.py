"""What the browser lane's tests share beyond tests/conftest.py: the built site served over http://."""

from __future__ import annotations

import functools
import http.server
import threading

import pytest

from tests.built_site import SITE


@pytest.fixture(scope="module")
def server():
    """The built site (tests.built_site.SITE) on a local server: the URL of its root, for one module."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
