"""How fast SmolLM2-135M-Instruct loads and runs in the page ("Run on your own text", issue 47), in headless
Chromium.

Usage:
    python -m benchmarks.bench_page_smollm2 [--site _build/html] [--scheme file|http] [--repeats 3]

Reads the built book (``make book``, or ``$MHA_SITE``) and opens ``chapters/trained_heads.html``, by default
from disk (file://, as a reader offline; ``--scheme http`` serves it from 127.0.0.1), every other host
blocked. Times, inside the page with ``performance.now()``:

- **first predict**: ``el.mha.predict(text)`` on a text of exactly 32 tokens, as the first call of the page:
  loading the weights (the classic scripts, each part decoded on the main thread and transferred to the
  worker), building the tokenizer and the model in the worker, then the forward pass with every head's
  weights and the top-5 at every position; and the longest main-thread task meanwhile (a
  ``PerformanceObserver`` on ``longtask``; the goal is none over 200 ms);
- **predict_32**: the median of ``--repeats`` more such calls;
- **token**: a 16-token ``el.mha.generate(text, {max_new_tokens: 16})`` call's time over the tokens it
  made, its 32-token prompt included;
- **weights**: the bytes of ``smollm2-weights.js`` and ``smollm2-parts/`` in the site;
- **peak memory**: the largest resident set of the tab's renderer process (the page and its worker), sampled
  every 100 ms from /proc.

Budgets on the book's two-core machine: first predict 40 s, predict_32 6 s, token 500 ms, weights 135e6 bytes,
memory 1.5 GB. The last line is machine-readable:
``first_predict_ms=<a> predict_32_ms=<b> token_ms=<c> weights_bytes=<d> peak_mb=<e>``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import threading
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from scripts import chromium

ROOT = Path(__file__).resolve().parents[1]
PAGE = "chapters/trained_heads.html"
API = "document.querySelector('.mha-smollm2').mha"
LONG_TASKS = """window.mhaLongTasks = [];
new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.mhaLongTasks.push(e.duration);
}).observe({type: "longtask", buffered: true});"""
FIRST = f"""async (text) => {{
    window.mhaLongTasks.length = 0;
    const t0 = performance.now();
    const r = await {API}.predict(text);
    const ms = performance.now() - t0;
    await new Promise((ok) => setTimeout(ok, 300));
    return {{ms, n: r.ids.length, longest: Math.max(0, ...window.mhaLongTasks)}};
}}"""
AGAIN = f"""async ([text, repeats]) => {{
    window.mhaLongTasks.length = 0;
    const times = [];
    for (let i = 0; i < repeats; i++) {{
        const t0 = performance.now();
        await {API}.predict(text);
        times.push(performance.now() - t0);
    }}
    times.sort((a, b) => a - b);
    const t0 = performance.now();
    const ids = await {API}.generate(text, {{max_new_tokens: 16}});
    const gen = performance.now() - t0;
    await new Promise((ok) => setTimeout(ok, 300));
    return {{median: times[Math.floor(times.length / 2)], gen, made: ids.length,
             longest: Math.max(0, ...window.mhaLongTasks)}};
}}"""


def text_of_32_tokens() -> str:
    """A plain English text of exactly 32 tokens (the file's tokenizer; the model itself is not loaded)."""
    from mha.pretrained.smollm2 import build_tokenizer, read_gguf

    tokenizer = build_tokenizer(read_gguf())
    paragraph = (
        "The old lighthouse keeper climbed the stairs every evening at dusk, lit the great lamp, and watched "
        "the ships pass safely through the narrow channel until the morning came again."
    )
    ids = tokenizer.encode(paragraph, add_special_tokens=False).ids[:32]
    text = tokenizer.decode(ids)
    if len(tokenizer.encode(text, add_special_tokens=False).ids) != 32:
        raise RuntimeError("the benchmark's text is not 32 tokens")
    return text


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _renderer_rss_mb() -> float:
    """The largest resident set (MB) of this process's Chromium renderers."""
    best = 0.0
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"--type=renderer" not in f.read():
                    continue
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        best = max(best, int(line.split()[1]) / 1024)
        except OSError:
            continue
    return best


class Peak(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak, self.running = 0.0, True

    def run(self) -> None:
        while self.running:
            self.peak = max(self.peak, _renderer_rss_mb())
            time.sleep(0.1)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--site", type=Path, default=Path(os.environ.get("MHA_SITE", ROOT / "_build" / "html"))
    )
    parser.add_argument("--scheme", choices=("file", "http"), default="file")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    site = args.site.resolve()
    static = site / "_static"
    weights = (static / "smollm2-weights.js").stat().st_size + sum(
        p.stat().st_size for p in (static / "smollm2-parts").iterdir()
    )
    text = text_of_32_tokens()
    httpd = None
    if args.scheme == "http":
        handler = functools.partial(QuietHandler, directory=str(site))
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        origin = f"http://127.0.0.1:{httpd.server_address[1]}"
        url = f"{origin}/{PAGE}"
    else:
        origin, url = "file://", (site / PAGE).as_uri()
    peak = Peak()
    try:
        with sync_playwright() as p:
            browser = chromium.launch(p)
            tab = browser.new_page(viewport={"width": 1280, "height": 900})
            tab.route(lambda u: not u.startswith((origin, "data:", "blob:")), lambda route: route.abort())
            tab.add_init_script(LONG_TASKS)
            tab.goto(url, wait_until="load", timeout=120_000)
            tab.wait_for_function(f"() => {API} && typeof {API}.predict === 'function'", timeout=60_000)
            peak.start()
            first = tab.evaluate(FIRST, text)
            if first["n"] != 32:
                raise RuntimeError(f"the page read {first['n']} tokens, not 32")
            again = tab.evaluate(AGAIN, [text, args.repeats])
            peak.running = False
            browser.close()
    finally:
        if httpd is not None:
            httpd.shutdown()
    token = again["gen"] / again["made"]
    print(
        f"scheme={args.scheme} first predict {first['ms'] / 1e3:.1f} s (longest main-thread task "
        f"{first['longest']:.0f} ms while loading; {again['longest']:.0f} ms while computing), "
        f"predict_32 median {again['median'] / 1e3:.2f} s of {args.repeats}, generate {again['made']} tokens "
        f"in {again['gen'] / 1e3:.2f} s"
    )
    print(
        f"first_predict_ms={first['ms']:.0f} predict_32_ms={again['median']:.0f} token_ms={token:.0f} "
        f"weights_bytes={weights} peak_mb={peak.peak:.0f}"
    )


if __name__ == "__main__":
    main()
