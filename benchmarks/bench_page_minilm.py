"""How fast chapter 1's in-page all-MiniLM-L6-v2 loads and attends, in headless Chromium.

Usage:
    python -m benchmarks.bench_page_minilm [--site _build/html] [--scheme file|http] [--sizes 8 16 32 64]
                                           [--repeats 7] [--mbit 10]
    python -m benchmarks.bench_page_minilm --quick    # one load, sizes 8 and 16, 3 repeats

Reads the built book (``make book``, or ``$MHA_SITE``) and opens ``chapters/why_multiple_heads.html``, by
default from disk (file://, as a reader offline), with every other host blocked. Times, inside the page with
``performance.now()``:

- **load**: ``el.mha.load()`` on first use: inserting the weights scripts one by one (float16 in base64,
  written at build time; every tensor but the word embeddings), starting the worker from a Blob URL and
  decoding the weights to float32 there; and the longest main-thread task meanwhile;
- **attend**: ``el.mha.attend(sentence)`` for sentences of exactly 8, 16, 32 and 64 tokens ([CLS] and [SEP]
  included): tokenizing, the forward pass in the worker, and the ``6 x 12 x n x n`` weights sent back. The
  median of ``--repeats`` runs, after one warm-up run (which also loads the rows of the sentence's words).

and, first, what a reader meets on a slow line:

- **first load**: the chapter served over ``http://127.0.0.1`` (Chromium's network emulation, CDP's
  ``Network.emulateNetworkConditions``, does not apply to ``file://``) at ``--mbit`` megabits per second
  (default 10, with 20 ms latency) in a fresh browser context (an empty cache), the box's Run button
  clicked once the page is quiet (no long task for 2 s: MathJax has typeset the chapter): the time to the
  first picture (the head shown large is drawn), the time until the box has run the whole model on both
  sentences (its read-out is written), the bytes it loaded (the resource timings' encoded body sizes), and
  the longest task on the page's main thread meanwhile (a ``PerformanceObserver`` on ``longtask`` entries,
  which Chromium reports for every task over 50 ms). The goal: no task over 200 ms. The CDP Network domain
  stays off: its instrumentation of every received chunk would lengthen the very tasks measured.

The goal for attend is at most 200 ms at 16 tokens on an idle machine. The last line is machine-readable:
``first_picture_ms=<t> full_ms=<u> first_bytes=<b> longest_task_ms=<m> load_ms=<x> load_longest_task_ms=<l>
attend_8_ms=<y> attend_16_ms=<z> ...``.
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
TASK_GOAL_MS = 200  # the longest main-thread task while the model loads and runs
LATENCY_MS = 20  # the emulated line's round trip
# Every long task (over 50 ms) of the page, from its start: Chromium reports them to this observer; and room
# for every resource's timing (the page itself has many), to count the bytes the box loads.
LONG_TASKS = """performance.setResourceTimingBufferSize(100000);
window.mhaLongTasks = [];
window.mhaLastLongTask = 0;
new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
        window.mhaLongTasks.push(e.duration);
        window.mhaLastLongTask = e.startTime + e.duration;
    }
}).observe({type: "longtask", buffered: true});"""
# The page's own start (the theme, MathJax typesetting the chapter) is over when no long task came for 2 s.
QUIET = "() => performance.now() - window.mhaLastLongTask > 2000"
# Click Run once; resolve when the head shown large is first drawn and when the read-out is written.
FIRST_RUN = """async () => {
    const root = ROOT_EL, big = root.querySelector(".mha-figure canvas");
    const out = root.querySelector(".mm-readout");
    window.mhaLongTasks.length = 0;  // the page's own start is not the box's
    const t0 = performance.now();
    let first = null;
    const done = new Promise((resolve) => {
        const seen = () => {
            if (first === null && big.dataset.mhaFontPx) first = performance.now() - t0;
            if (out.textContent) { observer.disconnect(); resolve(); }
        };
        const observer = new MutationObserver(seen);
        observer.observe(root, {subtree: true, attributes: true, childList: true, characterData: true});
    });
    root.querySelector("button[name=run]").click();
    await done;
    const full = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 300));  // a long task's entry arrives after the task
    const bytes = performance.getEntriesByType("resource").filter((e) => e.startTime >= t0)
        .reduce((sum, e) => sum + e.encodedBodySize, 0);
    const tasks = window.mhaLongTasks;
    return {first, full, bytes, longest: Math.max(0, ...tasks), tasks: tasks.length};
}"""
# The whole model loaded through el.mha.load(), and the longest main-thread task meanwhile.
LOAD = """async () => {
    window.mhaLongTasks.length = 0;
    const t0 = performance.now();
    await ROOT.load();
    const ms = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 300));
    return {ms, longest: Math.max(0, ...window.mhaLongTasks)};
}"""
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


def first_load(browser, site: Path, mbit: float) -> dict:
    """The box's first Run on a line of ``mbit`` megabits per second, served over http (see the docstring)."""
    httpd, origin = serve(site)
    try:
        tab = browser.new_page()
        tab.route(lambda u: not u.startswith((origin, "data:", "blob:")), lambda route: route.abort())
        cdp = tab.context.new_cdp_session(tab)
        rate = mbit * 1e6 / 8  # bytes per second
        cdp.send(
            "Network.emulateNetworkConditions",
            {"offline": False, "latency": LATENCY_MS, "downloadThroughput": rate, "uploadThroughput": rate},
        )
        tab.add_init_script(LONG_TASKS)
        tab.goto(f"{origin}/{PAGE}", wait_until="load", timeout=180_000)
        tab.wait_for_function(QUIET, timeout=60_000, polling=250)
        got = tab.evaluate(FIRST_RUN.replace("ROOT_EL", "document.querySelector('.mha-minilm')"))
        tab.close()
    finally:
        httpd.shutdown()
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_site = Path(os.environ.get("MHA_SITE", ROOT / "_build" / "html"))
    parser.add_argument("--site", type=Path, default=default_site, help="the built book's html folder")
    parser.add_argument("--scheme", choices=("file", "http"), default="file")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32, 64], help="tokens per sentence")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per size (median)")
    parser.add_argument("--quick", action="store_true", help="sizes 8 and 16, 3 repeats")
    parser.add_argument("--mbit", type=float, default=10, help="the first load's line, megabits per second")
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
        first = first_load(browser, args.site, args.mbit)
        print(
            f"first Run at {args.mbit:g} Mbit/s (http://127.0.0.1): first picture "
            f"{first['first'] / 1e3:6.1f} s, whole model {first['full'] / 1e3:6.1f} s, "
            f"{first['bytes'] / 1e6:.1f} MB loaded"
        )
        print(
            f"longest main-thread task meanwhile: {first['longest']:6.0f} ms ({first['tasks']} over 50 ms; "
            f"goal <= {TASK_GOAL_MS} ms)"
        )
        results = {
            "first_picture_ms": first["first"],
            "full_ms": first["full"],
            "first_bytes": first["bytes"],
            "longest_task_ms": first["longest"],
        }
        tab = browser.new_page()
        tab.route(lambda u: not u.startswith((origin, "data:", "blob:")), lambda route: route.abort())
        tab.add_init_script(LONG_TASKS)
        tab.goto(url, wait_until="load")
        tab.wait_for_function(QUIET, timeout=60_000, polling=250)
        load = tab.evaluate(LOAD.replace("ROOT", ROOT_JS))
        print(
            f"load (weights scripts, worker, decode): {load['ms']:8.1f} ms, longest main-thread task "
            f"{load['longest']:4.0f} ms  [{args.scheme}://]"
        )
        results["load_ms"] = load["ms"]
        results["load_longest_task_ms"] = load["longest"]
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
