"""How fast the decoder box of "Heads that work together" answers in headless Chromium, on the built book.

Usage:
    python -m benchmarks.bench_page_decoder [--site _build/html] [--scheme file|http] [--repeats 21]

Reads the built book (``make book``, or ``$MHA_SITE``) and opens ``chapters/induction_heads.html``, by default
from disk (file://, as a reader offline), with every other host blocked, in a fresh browser context (an empty
cache). Times, inside the page, from the start of the navigation (``performance.now()``):

- **first draw**: the box's first answer drawn (its text's characters with their guesses), which needs its
  weights script (``_static/decoder-weights.js``, inserted when the box mounts) read and decoded;
- **first predict**: ``el.mha.predict(text)`` called at the page's load event, on a text of 64 characters, and
  the time at which it answers (and the call's own duration); the goal is at most 3 s from the start;
- **predict, 64 characters**: later calls of ``el.mha.predict`` on a text of 64 characters, all heads on and
  with the four induction heads off: the median of ``--repeats`` runs after one warm-up; the goal is at most
  100 ms; and, for scale, the same at the context's 128 characters.

It also prints the page's size and the weights script's (the goals: the page under 2 MB, both at most 8 MB).
The last line is machine-readable: ``first_draw_ms=<a> first_predict_ms=<b> first_predict_call_ms=<c>
predict_64_ms=<d> predict_64_off_ms=<e> predict_128_ms=<f> page_bytes=<g> weights_bytes=<h>``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.bench_page_minilm import serve
from scripts import chromium  # one way to start Chromium

ROOT = Path(__file__).resolve().parents[1]

PAGE = "chapters/induction_heads.html"
WEIGHTS = "_static/decoder-weights.js"
FIRST_GOAL_MS = 3000  # the first predict, from the start of the navigation
GOAL_MS = 100  # a later predict on 64 characters
TEXT_64 = "The return statement leaves the current function call, and then " * 2  # (sliced to n below)
# Before any script of the page: when the box first draws, and el.mha.predict called at the load event.
TIMING = """window.mhaTimes = {};
new MutationObserver((_, observer) => {
    if (!window.mhaTimes.draw && document.querySelector('.mha-decoder .md-token')) {
        window.mhaTimes.draw = performance.now();
        observer.disconnect();
    }
}).observe(document, {subtree: true, childList: true});
addEventListener('load', () => {
    const t0 = performance.now();
    document.querySelector('.mha-decoder').mha.predict(TEXT).then(() => {
        window.mhaTimes.predict = performance.now();
        window.mhaTimes.call = performance.now() - t0;
    });
});"""
LATER = """async ([text, off, repeats]) => {
    const api = document.querySelector('.mha-decoder').mha;
    const first = await api.predict(text, {off});  // warm-up
    const times = [];
    for (let i = 0; i < repeats; i++) {
        const t0 = performance.now();
        await api.predict(text, {off});
        times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return {n: first.tokens.length, median: times[Math.floor(times.length / 2)]};
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_site = Path(os.environ.get("MHA_SITE", ROOT / "_build" / "html"))
    parser.add_argument("--site", type=Path, default=default_site, help="the built book's html folder")
    parser.add_argument("--scheme", choices=("file", "http"), default="file")
    parser.add_argument("--repeats", type=int, default=21, help="timed runs per case (median)")
    args = parser.parse_args()
    if not (args.site / PAGE).is_file():
        raise SystemExit(f"no built chapter at {args.site / PAGE}: run `make book` (or pass --site)")
    httpd = None
    if args.scheme == "http":
        httpd, origin = serve(args.site)
        url = f"{origin}/{PAGE}"
    else:
        origin = "file://"
        url = (args.site / PAGE).resolve().as_uri()
    text = TEXT_64[:64]
    results = {}
    with sync_playwright() as p:
        browser = chromium.launch(p)
        tab = browser.new_context().new_page()
        tab.route(lambda u: not u.startswith((origin, "data:", "blob:")), lambda route: route.abort())
        tab.add_init_script(TIMING.replace("TEXT", repr(text)))
        tab.goto(url, wait_until="load")
        tab.wait_for_function("() => window.mhaTimes.predict && window.mhaTimes.draw", timeout=60_000)
        times = tab.evaluate("() => window.mhaTimes")
        print(
            f"first draw of the box:   {times['draw']:8.1f} ms after the navigation started  [{args.scheme}://]"
        )
        print(
            f"first predict (64 chars): {times['predict']:7.1f} ms after the navigation started (the call "
            f"{times['call']:.1f} ms; goal <= {FIRST_GOAL_MS} ms)"
        )
        results["first_draw_ms"] = times["draw"]
        results["first_predict_ms"] = times["predict"]
        results["first_predict_call_ms"] = times["call"]
        for name, n, off in (
            ("predict_64_ms", 64, []),
            ("predict_64_off_ms", 64, [[1, 0], [1, 1], [1, 2], [1, 3]]),
            ("predict_128_ms", 128, []),
        ):
            got = tab.evaluate(LATER, [(TEXT_64 * 2)[:n], off, args.repeats])
            if got["n"] != n:
                raise SystemExit(f"a text of {n} characters gave {got['n']} tokens")
            goal = f"  (goal <= {GOAL_MS} ms)" if n == 64 else ""
            heads = f", {len(off)} heads off" if off else ", all heads on"
            median = f"median {got['median']:7.1f} ms over {args.repeats} runs"
            print(f"predict, {n:3} chars{heads:17}: {median}{goal}")
            results[name] = got["median"]
        browser.close()
    if httpd is not None:
        httpd.shutdown()
    page_bytes, weights_bytes = (args.site / PAGE).stat().st_size, (args.site / WEIGHTS).stat().st_size
    print(
        f"sizes: page {page_bytes / 1e3:.0f} kB (goal < 2 MB), weights script {weights_bytes / 1e3:.0f} kB, "
        f"together {(page_bytes + weights_bytes) / 1e6:.2f} MB (goal <= 8 MB)"
    )
    results["page_bytes"], results["weights_bytes"] = page_bytes, weights_bytes
    print(" ".join(f"{k}={v:.1f}" for k, v in results.items()))


if __name__ == "__main__":
    main()
