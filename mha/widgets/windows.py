"""The window explorer: a stack of local (sliding-window) and global layers, what each layer may attend to,
what each position has seen after it, and how many tokens the stack caches.

The page computes it (``mha/widgets/static/windows.js``, a port of
:func:`mha.compute.since_2017.layer_masks` and :func:`mha.compute.since_2017.receptive_fields`); this module
holds its choices, bounds and defaults and writes its root element (:func:`windows_config`,
:class:`WindowExplorer`). In a live kernel the same script is the widget's front end, and it still computes
in the page: the numbers are small integers, the same in both languages.
"""

from __future__ import annotations

from mha.widgets.frontend import FrontEndWidget, root_html, widget_css, widget_esm

BOUNDS = {"n": (2, 32), "window": (1, 32), "layers": (1, 8)}  # inclusive bounds of the number inputs
PERIODS = (0, 2, 3, 4, 6)  # one global layer in every this many (0: none); gpt-oss 2, Gemma 3 6
SETTINGS = ("n", "window", "layers", "global_period", "layer")


def check_window_settings(settings: dict) -> dict:
    """Return ``settings`` complete (``layer`` defaults to the last), or raise naming the bad one.

    Raises:
        KeyError: an unknown setting. TypeError: a value that is not an int. ValueError: out of bounds.
    """
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise KeyError(f"unknown settings {unknown}; the settings are {list(SETTINGS)}")
    s = {"n": 16, "window": 4, "layers": 6, "global_period": 3, **settings}
    s.setdefault("layer", s["layers"])
    for key, value in s.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{key} must be an int, got {type(value).__name__}")
    for key, (lo, hi) in BOUNDS.items():
        if not lo <= s[key] <= hi:
            raise ValueError(f"{key} must be in {lo}..{hi}, got {s[key]}")
    if s["global_period"] not in PERIODS:
        raise ValueError(
            f"global_period must be one of {PERIODS} (0: no global layer), got {s['global_period']}"
        )
    if not 1 <= s["layer"] <= s["layers"]:
        raise ValueError(f"layer must be in 1..layers={s['layers']}, got {s['layer']}")
    return s


def windows_config(**settings: int) -> dict:
    """The explorer's data: its first settings, the bounds of its inputs and the periods it offers."""
    return {
        "settings": check_window_settings(settings),
        "bounds": {k: list(v) for k, v in BOUNDS.items()},
        "periods": list(PERIODS),
    }


class WindowExplorer(FrontEndWidget):
    """Controls for tokens, window, layers and the global layers' period above two panels: the chosen
    layer's mask and what each position has seen after it, with the tokens the stack caches.

    Args:
        n, window, layers, global_period, layer: the first settings (see :data:`BOUNDS`, :data:`PERIODS`).
    """

    _esm = widget_esm("mountWindows")
    _css = widget_css()

    def __init__(self, **settings: int) -> None:
        config = windows_config(**settings)
        super().__init__()
        self.config = {k: v for k, v in config.items() if k != "settings"}
        self.settings = config["settings"]

    def static_html(self) -> str:
        """The explorer for pages without a kernel: the front end with its data inline."""
        return root_html(
            "mha-windows",
            {**self.config, "settings": dict(self.settings)},
            fallback="<p>The window explorer needs JavaScript.</p>",
        )

    def __repr__(self) -> str:
        return "WindowExplorer(" + ", ".join(f"{k}={v}" for k, v in self.settings.items()) + ")"


def window_explorer(**settings: int) -> WindowExplorer:
    """Return a :class:`WindowExplorer` with these first settings (``n``, ``window``, ``layers``,
    ``global_period``, ``layer``)."""
    return WindowExplorer(**settings)
