"""How fast the page's port of the book's decoder predicts, in an embedded V8 (mini-racer), against Python.

Usage:
    python benchmarks/bench_decoder_port.py [--tokens 64] [--repeats 7] [--inner 5]

Loads ``book/decoder/static/ports/decoder.js`` with the weights script the build writes
(:func:`book.decoder.page.weights_script`) into mini-racer and times ``decoderPredict`` on a text of
``--tokens`` characters (all heads on), the median of ``--repeats`` timings of ``--inner`` calls each, timed
inside V8 (``Date.now()``; mini-racer has no ``performance``), so the transfer of the result to Python is not
counted. Python's :func:`book.decoder.model.predict` on the same text is timed beside it. Before timing, the
script checks that the two agree within 2e-3.

The page's goal is at most 100 ms per ``predict`` at 64 tokens in Chromium; mini-racer's V8 is the same
engine without a page around it. The last line is machine-readable:
``port_<n>_ms=<x> python_<n>_ms=<y> ratio_port_python=<z>``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from py_mini_racer import MiniRacer

from benchmarks import _timing
from book.decoder.model import predict
from book.decoder.page import CALLBACK, weights_script
from book.widgets.frontend import static_path

PORT = static_path("ports/decoder.js")
TEXT = "Induction heads copy: qZ#8@kLm!2 then qZ#8@kLm!2 again, and the rest is ordinary English text."


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=64, help="characters of the text (default: 64)")
    parser.add_argument("--repeats", type=int, default=7, help="timings, of which the median (default: 7)")
    parser.add_argument("--inner", type=int, default=5, help="calls per timing (default: 5)")
    args = parser.parse_args(argv)
    text = (TEXT * (args.tokens // len(TEXT) + 1))[: args.tokens]

    torch.set_num_threads(1)
    ctx = MiniRacer()
    ctx.eval(PORT.read_text(encoding="utf-8"))
    ctx.eval(f"globalThis.{CALLBACK} = (data) => {{ globalThis.model = mhaFrontEnd.decoderModel(data); }};")
    start = time.perf_counter()
    ctx.eval(weights_script())
    load_ms = (time.perf_counter() - start) * 1e3

    ours = json.loads(ctx.eval(f"JSON.stringify(mhaFrontEnd.decoderPredict(model, {json.dumps(text)}))"))
    python = predict(text)
    attention = (
        (torch.tensor(ours["attention"], dtype=torch.float64) - python["attention"].double()).abs().max()
    )
    probability = max(
        abs(p - q)
        for mine, theirs in zip(ours["top"], python["top"], strict=True)
        for (_, p), (_, q) in zip(mine, theirs, strict=True)
    )
    assert attention <= 2e-3 and probability <= 2e-3, (float(attention), probability)

    timer = f"""(() => {{
        const t0 = Date.now();
        for (let i = 0; i < {args.inner}; i++) mhaFrontEnd.decoderPredict(model, {json.dumps(text)});
        return (Date.now() - t0) / {args.inner};
    }})()"""
    ctx.eval(timer)  # warm-up: V8 compiles the hot loops
    port_ms = statistics.median(float(ctx.eval(timer)) for _ in range(args.repeats))
    python_s = _timing.interleaved_medians(
        {"python": lambda: predict(text)}, repeats=args.repeats, inner=args.inner
    )
    python_ms = python_s["python"] * 1e3
    n = len(ours["tokens"])
    print(
        f"weights script decoded in {load_ms:.0f} ms; largest differences to Python: attention "
        f"{float(attention):.1e}, probabilities {probability:.1e}"
    )
    print(f"{'port':>8}: median {port_ms:8.2f} ms per predict on {n} tokens (mini-racer, timed inside V8)")
    print(
        f"port_{n}_ms={port_ms:.2f} python_{n}_ms={python_ms:.2f} ratio_port_python={port_ms / python_ms:.2f}"
    )


if __name__ == "__main__":
    main()
