"""A stand-in for a Jupyter front end, for the browser tests of the widgets' ES modules.

`RENDER_LIVE` loads a widget's ES module (as anywidget does) in the page and renders it on a stand-in model
whose traitlets are plain values; the byte values of ``drawn`` (lists here, see :func:`live_payload`)
become DataViews, as ipywidgets delivers binary buffers. ``window[id].python(name, value)`` plays Python's
part: it sets a traitlet and fires its change event; ``window[id].saved`` holds what the page sent back.
"""

from __future__ import annotations

TO_DATAVIEWS = """d => d && Object.fromEntries(Object.entries(d).map(([k, v]) =>
    [k, Array.isArray(v) && k !== 'tokens' && k !== 'shape' && k !== 'rows'
        ? new DataView(Uint8Array.from(v).buffer) : v]))"""

RENDER_LIVE = f"""async ([esm, traits, id]) => {{
    const views = {TO_DATAVIEWS};
    traits.drawn = views(traits.drawn);
    const url = URL.createObjectURL(new Blob([esm], {{type: 'text/javascript'}}));
    const widget = (await import(url)).default;
    const handlers = {{}}, saved = [];
    const model = {{
        get: (k) => traits[k], set: (k, v) => {{ traits[k] = v; }},
        save_changes: () => {{ saved.push(JSON.parse(JSON.stringify(traits.settings))); }},
        on: (e, f) => {{ handlers[e] = f; }}, off: (e) => {{ delete handlers[e]; }},
    }};
    const el = document.createElement('div');
    el.id = id;
    document.body.append(el);
    const cleanup = widget.render({{model, el}});
    window[id] = {{traits, handlers, saved, cleanup, root: el.firstChild,
        python(name, value) {{
            traits[name] = name === 'drawn' ? views(value) : value;
            handlers['change:' + name]();
        }}}};
    return typeof cleanup;
}}"""


def live_payload(drawn: dict | None) -> dict | None:
    """A ``drawn`` traitlet for page.evaluate: bytes as lists of byte values (DataViews in the page)."""
    return None if drawn is None else {k: list(v) if isinstance(v, bytes) else v for k, v in drawn.items()}
