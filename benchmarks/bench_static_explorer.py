"""How long the static site's head explorer takes to recompute and redraw, in headless Chromium.

Usage:
    python -m benchmarks.bench_static_explorer [--updates 200]

On the built site there is no kernel: the explorer's JavaScript (``book/widgets/static/``) computes the
weights of a fresh layer in the page and draws them on a canvas. The benchmark opens the built chapter
``_build/html/chapters/the_math.html`` if it holds an explorer, else a minimal page with the same scripts,
and times ``el.mha.update(settings)`` inside the page with ``performance.now()``: the port of
``explorer_weights`` (token vectors, positions, the projections, softmax per head) and the synchronous
canvas drawing, at the largest sizes the explorer offers: d_model = 64, h = 16, 16 tokens. Every update
changes the seed (new weights, so no cache helps) and the mask cycles through the four kinds.

A second line times the same updates followed by a one-pixel ``getImageData``, which makes the browser
finish rasterising the canvas, an upper bound on what a reader waits for.

The last line is machine-readable: ``median_ms=<x> p95_ms=<y>`` for ``update`` alone.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from book.widgets.frontend import STYLESHEET, WIDGET_SCRIPTS, copy_static, explorer_config, root_html
from scripts import chromium  # one way to start Chromium

ROOT = Path(__file__).resolve().parents[1]
BUILT = ROOT / "_build" / "html" / "chapters" / "the_math.html"
SCRIPTS = WIDGET_SCRIPTS["mountExplorer"]
SENTENCE = "the quick brown fox jumps over the lazy dog and then the cat sat on mat"  # 16 tokens
MEASURE = """([updates, flush]) => {
    const el = document.querySelector('.mha-explorer');
    const masks = ['none', 'causal', 'padding', 'causal + padding'];
    const times = [];
    for (let i = 0; i < updates; i++) {
        const settings = {d_model: 64, h: 16, sentence: SENTENCE, mask: masks[i % 4], valid_length: 12,
                          seed: 1000 + i};
        const t0 = performance.now();
        el.mha.update(settings);
        if (el.mha.message) throw new Error(el.mha.message);
        if (flush) el.mha.canvas.getContext('2d').getImageData(0, 0, 1, 1);
        times.push(performance.now() - t0);
    }
    return times;
}""".replace("SENTENCE", repr(SENTENCE))


def minimal_page(directory: Path) -> Path:
    """A page with the explorer's scripts (classic tags) and its settings inline."""
    copy_static(directory, (*SCRIPTS, STYLESHEET))
    tags = "".join(f'<script src="{name}"></script>' for name in SCRIPTS)
    page = directory / "index.html"
    page.write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="stylesheet" href="mha.css">'
        f'{tags}</head><body style="max-width:980px">'
        f"{root_html('mha-explorer', explorer_config({'d_model': 64, 'h': 16}))}</body></html>",
        encoding="utf-8",
    )
    return page


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=200, help="timed updates (after 20 warm-up ones)")
    args = parser.parse_args()
    if chromium.CHROMIUM is None:
        raise SystemExit("needs Chromium (e.g. /usr/bin/chromium)")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        built = BUILT.exists() and "mha-explorer" in BUILT.read_text(encoding="utf-8")
        page_path = BUILT if built else minimal_page(Path(tmp))
        browser = chromium.launch(p)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
        page.goto(page_path.as_uri())
        page.wait_for_function(
            "document.querySelector('.mha-explorer') && document.querySelector('.mha-explorer').mha"
        )
        page.evaluate(MEASURE, [20, False])  # warm-up: the JIT compiles the hot loops
        times = page.evaluate(MEASURE, [args.updates, False])
        flushed = page.evaluate(MEASURE, [args.updates, True])
        browser.close()
    print(f"page: {page_path.relative_to(ROOT) if built else 'minimal page with the explorer scripts'}")
    print(f"{args.updates} updates at d_model=64, h=16, 16 tokens, new seed each, masks in turn")
    median, p95 = summary(flushed)
    print(f"update + rasterise:  median {median:.2f} ms, p95 {p95:.2f} ms, max {max(flushed):.2f} ms")
    median, p95 = summary(times)
    print(f"update (compute + draw): median {median:.2f} ms, p95 {p95:.2f} ms, max {max(times):.2f} ms")
    print(f"median_ms={median:.2f} p95_ms={p95:.2f}")


if __name__ == "__main__":
    main()
