"""How fast chapter 1's in-page all-MiniLM-L6-v2 loads and attends, in headless Chromium, from disk.

Usage:
    python -m benchmarks.bench_page_minilm [--site _build/html] [--scheme file|http] [--sizes 8 16 32 64]
                                           [--repeats 7]
    python -m benchmarks.bench_page_minilm --quick    # one load, sizes 8 and 16, 3 repeats

Reads the built book (``make book``, or ``$MHA_SITE``) and opens ``chapters/why_multiple_heads.html``, by
default from disk (file://, as a reader offline), with every other host blocked. Times, inside the page with
``performance.now()``:

- **load**: ``el.mha.load()`` on first use: inserting the weights script (float16 in base64, written at
  build time; every tensor but the word embeddings), decoding it, starting the worker from a Blob URL and
  converting the weights to float32 there;
- **attend**: ``el.mha.attend(sentence)`` for sentences of exactly 8, 16, 32 and 64 tokens ([CLS] and [SEP]
  included): tokenizing, the forward pass in the worker, and the ``6 x 12 x n x n`` weights sent back. The
  median of ``--repeats`` runs, after one warm-up run (which also loads the rows of the sentence's words).

The goal is at most 200 ms at 16 tokens on an idle machine. The last line is machine-readable:
``load_ms=<x> attend_8_ms=<y> attend_16_ms=<z> ...``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

from scripts import chromium  # one way to start Chromium

ROOT = Path(__file__).resolve().parents[1]

PAGE = "chapters/why_multiple_heads.html"
GOAL_MS = 200  # at 16 tokens
LOAD = "async () => { const t0 = performance.now(); await ROOT.load(); return performance.now() - t0; }"
ATTEND = """async ([sentence, repeats]) => {
    const first = await ROOT.attend(sentence);  // warm-up
    const times = [];
    for (let i = 0; i < repeats; i++) {
        const t0 = performance.now();
        await ROOT.attend(sentence);
        times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return {n: first.tokens.length, median: times[Math.floor(times.length / 2)]};
}"""
ROOT_JS = "document.querySelector('.mha-minilm').mha"


def sentence_of(n: int) -> str:
    """A sentence of exactly ``n`` tokens: ``n - 2`` words, one token each, between [CLS] and [SEP]."""
    return " ".join(["word"] * (n - 2))


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # no line per request
        pass


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_site = Path(os.environ.get("MHA_SITE", ROOT / "_build" / "html"))
    parser.add_argument("--site", type=Path, default=default_site, help="the built book's html folder")
    parser.add_argument("--scheme", choices=("file", "http"), default="file")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32, 64], help="tokens per sentence")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per size (median)")
    parser.add_argument("--quick", action="store_true", help="sizes 8 and 16, 3 repeats")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.repeats = [8, 16], 3
    if not (args.site / PAGE).is_file():
        raise SystemExit(f"no built chapter at {args.site / PAGE}: run `make book` (or pass --site)")
    if any(n < 3 or n > 128 for n in args.sizes):
        raise SystemExit("--sizes must lie in 3..128 tokens")
    httpd = None
    if args.scheme == "http":
        httpd, origin = serve(args.site)
        url = f"{origin}/{PAGE}"
    else:
        origin = "file://"
        url = (args.site / PAGE).resolve().as_uri()
    with sync_playwright() as p:
        browser = chromium.launch(p)
        tab = browser.new_page()
        tab.route(lambda u: not u.startswith((origin, "data:", "blob:")), lambda route: route.abort())
        tab.goto(url, wait_until="load")
        load_ms = tab.evaluate(LOAD.replace("ROOT", ROOT_JS))
        print(f"load (weights script, decode, worker, float32): {load_ms:8.1f} ms  [{args.scheme}://]")
        results = {"load_ms": load_ms}
        for n in args.sizes:
            got = tab.evaluate(ATTEND.replace("ROOT", ROOT_JS), [sentence_of(n), args.repeats])
            if got["n"] != n:
                raise SystemExit(f"a sentence of {n} tokens tokenized to {got['n']}")
            goal = f"  (goal <= {GOAL_MS} ms)" if n == 16 else ""
            print(f"attend, {n:3} tokens: median {got['median']:8.1f} ms over {args.repeats} runs{goal}")
            results[f"attend_{n}_ms"] = got["median"]
        browser.close()
    if httpd is not None:
        httpd.shutdown()
    print(" ".join(f"{k}={v:.1f}" for k, v in results.items()))


if __name__ == "__main__":
    main()
