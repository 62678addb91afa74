"""The headless Chromium that the browser tests, `make pdf` and the static-explorer benchmark drive.

Debian's package (`/usr/bin/chromium`, installed by `.ci/run`), launched by Playwright: `playwright install`
downloads a browser build and cannot work without network. The flags keep Chromium from calling home (this
machine, like a reader's offline one, reaches no other host) and let it run as root in a container.
"""

from __future__ import annotations

import shutil

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def launch(playwright):
    """Launch headless Chromium with :data:`ARGS` from a started ``sync_playwright()``."""
    if CHROMIUM is None:
        raise RuntimeError("Debian's chromium is needed (.ci/run installs it): apt-get install chromium")
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
