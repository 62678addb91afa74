"""A JupyterLab of its own with the book's live widgets, driven in headless Chromium: for the JupyterLab test
(tests/browser/test_jupyterlab.py) and the JupyterLab benchmark (benchmarks/bench_jupyterlab.py).

:func:`running_lab` starts ``jupyter lab`` beside the running Python (a random token, a temporary root folder
and configuration, news and announcements off, on a free port of 127.0.0.1) with a notebook of
:data:`CELLS`: a head explorer, a stage stepper, a cost calculator, the MiniLM box (with the stored sentences
of "What trained heads do") and the decoder box.
:func:`open_notebook` opens it in a Chromium tab (every request to another host is aborted), runs all cells
and waits until each widget has mounted live. :func:`kernel` runs code in the notebook's kernel;
:data:`TIMED_CHANGE` changes a control as a reader does and waits for the redraw.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

JUPYTER = Path(sys.executable).with_name("jupyter")
SENTENCE = "the cat sat on the mat because it was tired"
CELLS = [
    "from book.widgets import HeadExplorer\ne = HeadExplorer(d_model=32, h=4)\ne",  # on SENTENCE
    "from book.compute import attention_stages\nfrom book.chapters.worked_example import worked_example\n"
    "from book.widgets import stage_stepper\nex = worked_example()\n"
    "s = stage_stepper(attention_stages(ex.module(), ex.x), start='x')\ns",
    "from book.widgets import cost_calculator\nc = cost_calculator('Llama 3.1 8B', context=4096)\nc",
    "from book.minilm.census import load_head_results\nfrom book.minilm.page import MiniLMWidget\n"
    "from book.minilm.stored import load_stored\nm = MiniLMWidget(load_head_results()['labels'], "
    "sentence='The cat sat on the mat.', other='', stored=load_stored())\nm",
    "from book.decoder.box import DecoderWidget\n"
    "d = DecoderWidget({(0, 1): 'previous token', (1, 0): 'induction'}, shown_head=(1, 0))\nd",
]
# the root classes mha-<name>, in CELLS' order
WIDGETS = ("explorer", "stepper", "calculator", "minilm", "decoder")

# In the page: change a control as a reader does and wait for the redraw; return the milliseconds. The
# explorer and the calculator draw twice: at once in the page, then Python's answer; for them
# this returns both times ([first picture, Python's picture]), one time for a figure that draws once. It
# throws if the picture, or Python's answer, does not come within 10 s.
TIMED_CHANGE = """async ([selector, name, value]) => {
    const el = document.querySelector(selector), control = el.querySelector(`[name=${name}]`);
    const before = el.mha.draws, received = el.mha.received, t0 = performance.now();
    const tick = () => new Promise((r) => { const c = new MessageChannel(); c.port1.onmessage = r;
                                            c.port2.postMessage(0); });
    control.value = String(value);
    // as a reader's typing does: input events, then the change that commits a number box (issue 32)
    if (control.tagName !== 'SELECT') control.dispatchEvent(new Event('input'));
    control.dispatchEvent(new Event('change'));
    while (el.mha.draws === before) {
        if (performance.now() - t0 > 10000) throw new Error(`no redraw after ${name} = ${value}`);
        await tick();
    }
    const first = performance.now() - t0;
    if (received === undefined) return first;
    while (el.mha.received === received) {
        if (performance.now() - t0 > 10000) throw new Error(`no answer from Python after ${name} = ${value}`);
        await tick();
    }
    return [first, performance.now() - t0];
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def notebook(cells: list[str]) -> dict:
    """An nbformat 4 notebook of unexecuted code cells, on the python3 kernel."""
    return {
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": src, "outputs": [], "execution_count": None}
            for src in cells
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


@contextlib.contextmanager
def running_lab(root: Path, cells: list[str] = CELLS) -> Iterator[dict]:
    """JupyterLab on 127.0.0.1 with ``root/widgets.ipynb`` (``cells``), stopped on exit.

    Yields ``{"base": URL, "token": ..., "root": root}``.
    """
    if not JUPYTER.exists():
        raise RuntimeError(f"JupyterLab is needed beside {sys.executable}")
    (root / "widgets.ipynb").write_text(json.dumps(notebook(cells)), encoding="utf-8")
    config = root / ".config"
    (config / "labconfig").mkdir(parents=True, exist_ok=True)
    disabled = {"@jupyterlab/apputils-extension:announcements": True}  # it asks to fetch news
    (config / "labconfig" / "page_config.json").write_text(json.dumps({"disabledExtensions": disabled}))
    token = secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(root / ".settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(root / ".workspaces"),
        "PYTHONUNBUFFERED": "1",
    }
    # A port found free is released before the server binds it, and another process may take it first: then
    # the server stops (port_retries=0) and is started again on another port.
    for _attempt in range(3):
        server, base = _start(root, env, free_port(), token)
        if server is not None:
            break
    else:
        raise RuntimeError(f"JupyterLab did not start:\n{(root / 'server.log').read_text()}")
    try:
        yield {"base": base, "token": token, "root": root}
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _start(root: Path, env: dict, port: int, token: str) -> tuple[subprocess.Popen | None, str]:
    """JupyterLab on ``port``, once it answers; ``(None, base)`` if the port was taken."""
    command = [
        str(JUPYTER), "lab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        "--ServerApp.terminals_enabled=False", "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly", "--LabApp.expose_app_in_browser=True",
        "--LanguageServerManager.autodetect=False",
        *(["--ServerApp.allow_root=True"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
    ]  # fmt: skip
    with (root / "server.log").open("w") as log:
        server = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=1) as answer:
                if answer.status == 200:
                    return server, base
        except OSError:
            pass
        if server.poll() is not None:
            if "already in use" in (root / "server.log").read_text():
                return None, base
            raise RuntimeError(f"JupyterLab did not start:\n{(root / 'server.log').read_text()}")
        if time.monotonic() > deadline:
            server.kill()
            raise RuntimeError(f"JupyterLab did not start in 30 s:\n{(root / 'server.log').read_text()}")
        time.sleep(0.2)


def open_notebook(browser, lab: dict):
    """A tab on the lab's notebook with every cell run and every widget of :data:`WIDGETS` mounted live.

    Returns the tab, with ``tab.errors`` (the page's uncaught exceptions) and ``tab.blocked`` (the requests to
    other hosts, all aborted). Raises ``RuntimeError`` naming the widget that did not mount in 30 s.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tab = browser.new_page(viewport={"width": 1280, "height": 1600})
    errors: list[str] = []
    blocked: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))

    def only_local(route):
        if route.request.url.startswith(lab["base"]):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    tab.route("**/*", only_local)
    tab.goto(f"{lab['base']}/lab/tree/widgets.ipynb?reset&token={lab['token']}")
    tab.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=30000)
    tab.wait_for_function(
        """() => { const w = window.jupyterapp.shell.currentWidget;
                   const k = w && w.sessionContext && w.sessionContext.session
                             && w.sessionContext.session.kernel;
                   return k && k.status === 'idle'; }""",
        timeout=30000,
    )
    tab.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    for name in WIDGETS:
        try:
            tab.wait_for_function(
                f"() => {{ const el = document.querySelector('.jp-OutputArea .mha-{name}');"
                " return el && el.mha && (el.mha.live !== false); }",
                timeout=30000,
            )
        except PlaywrightTimeout as error:
            raise RuntimeError(f"the live {name} did not mount in 30 s; page errors: {errors}") from error
    tab.errors, tab.blocked = errors, blocked
    return tab


def kernel(tab, code: str) -> str:
    """Run ``code`` in the notebook's kernel (as a hidden request) and return what it printed."""
    return tab.evaluate(
        """code => new Promise((resolve, reject) => {
            const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            const future = kernel.requestExecute({code, silent: false, store_history: false});
            let out = '';
            future.onIOPub = (msg) => {
                if (msg.header.msg_type === 'stream') out += msg.content.text;
                if (msg.header.msg_type === 'error') reject(new Error(msg.content.evalue));
            };
            future.done.then(() => resolve(out), reject);
        })""",
        code,
    )
