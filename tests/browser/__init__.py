"""The browser lane: the figures, the built pages, the decks and JupyterLab in headless Chromium."""
