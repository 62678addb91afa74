"""The ports of book/*/static/ports/ in a JavaScript engine without a browser, for their unit tests.

A port is tested equal to its Python twin in the twin's test file (``ports/costs.js`` in
tests/unit/mha/costs/test_report.py, ``ports/random.js`` in tests/unit/book/compute/test_portable_random.py,
...; CONTRIBUTING.md's table of ports lists them, and each port's header names its file). Those files share
the engine: :class:`Ports`, mini-racer (V8 from PyPI: no DOM, no TextEncoder, no atob, as a port must expect)
with every port loaded as the page loads them, and the ``ports`` fixture of tests/unit/conftest.py (one such
engine per test file). The inputs they check on are tests/port_cases.py's, which the browser tests use too.
"""

from __future__ import annotations

import json

from book.widgets.frontend import PORTS, static_file

# A port's result comes back through JSON: typed arrays as arrays, BigInts as decimal strings.
JSON_OUT = """(f) => (...args) => JSON.stringify(f(...args), (key, value) =>
    typeof value === "bigint" ? value.toString() : ArrayBuffer.isView(value) ? Array.from(value) : value)"""


class Ports:
    """The ports in one V8 context: ``run(js_function, *args)`` calls a function given as source text.

    ``scripts``: what the context runs first; every port, in the page's order, unless given."""

    def __init__(self, scripts: list[str] | None = None) -> None:
        from py_mini_racer import MiniRacer  # on first use: a test file that only imports this needs no V8

        self.js = MiniRacer()
        self.engine = set(self.js.eval("Object.keys(globalThis)"))  # the engine's own (setTimeout, ...)
        for script in [static_file(name) for name in PORTS] if scripts is None else scripts:
            self.js.eval(script)
        self.added = set(self.js.eval("Object.keys(globalThis)")) - self.engine
        self.ns = set(self.js.eval("Object.keys(globalThis.mhaFrontEnd)"))
        self.js.eval(f"globalThis.__json = {JSON_OUT};")

    def run(self, function: str, *args: object) -> object:
        self.js.eval(f"globalThis.__test = __json({function});")
        return json.loads(self.js.call("__test", *args))
