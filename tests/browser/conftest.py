"""What the browser lane's tests share beyond tests/conftest.py: the built site served over http://, and the
visits of its pages (tests/browser/visits.py)."""

from __future__ import annotations

import functools
import http.server
import threading

import pytest

from tests.browser.visits import Visits
from tests.built_site import SITE


@pytest.fixture(scope="session")
def server():
    """The built site (tests.built_site.SITE) on a local server: the URL of its root, for the worker's run."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="session")
def visits(browser, server, built_site) -> Visits:
    """Each page of the built sites visited once per state on this worker; a test that asks for it with a
    ``page`` parameter is in that page's xdist group (tests/conftest.py): its tests share the visits."""
    return Visits(browser, server)
