"""The window explorer: a stack of local (sliding-window) and global layers, what each layer may attend to,
what each position has seen after it, and how many tokens the stack caches.

The page computes it (``book/widgets/static/ports/windows.js``, a port of
:func:`book.compute.since_2017.layer_masks` and :func:`book.compute.since_2017.receptive_fields`); this module
writes its root element, with the spec that holds its choices, bounds, defaults and messages
(:func:`book.widgets.spec.windows_spec`) (:func:`windows_config`,
:class:`WindowExplorer`). In a live kernel the same script is the widget's front end, and it still computes
in the page: the numbers are small integers, the same in both languages.
"""

from __future__ import annotations

from book.widgets.frontend import ROOT_CLASSES, FrontEndWidget, root_html, widget_css, widget_esm
from book.widgets.spec import (
    PERIODS,
    WINDOW_BOUNDS,
    WINDOW_DEFAULTS,
    merge_settings,
    setting_names,
    windows_spec,
)

BOUNDS = WINDOW_BOUNDS  # inclusive bounds of the number inputs (book.widgets.spec)
SETTINGS = setting_names(windows_spec())  # n, window, layers, global_period, layer
__all__ = ["BOUNDS", "PERIODS", "SETTINGS", "WindowExplorer", "check_window_settings", "window_explorer"]


def check_window_settings(settings: dict) -> dict:
    """Return ``settings`` complete (``layer`` defaults to the last), or raise naming the bad one: the rules
    of :func:`book.widgets.spec.merge_settings`, which the page's controls apply too.

    Raises:
        KeyError: an unknown setting. TypeError: a value that is not an int. ValueError: out of bounds.
    """
    for key, value in settings.items():
        if key in SETTINGS and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"{key} must be an int, got {type(value).__name__}")
    start = {**WINDOW_DEFAULTS, "layer": settings.get("layers", WINDOW_DEFAULTS["layers"])}
    return merge_settings(windows_spec(), start, settings)


def windows_config(**settings: int) -> dict:
    """The explorer's data: its spec (:func:`book.widgets.spec.windows_spec`) and first settings."""
    return {"spec": windows_spec(), "settings": check_window_settings(settings)}


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
            ROOT_CLASSES["mountWindows"],
            {**self.config, "settings": dict(self.settings)},
            fallback="<p>The window explorer needs JavaScript.</p>",
        )

    def __repr__(self) -> str:
        return "WindowExplorer(" + ", ".join(f"{k}={v}" for k, v in self.settings.items()) + ")"


def window_explorer(**settings: int) -> WindowExplorer:
    """Return a :class:`WindowExplorer` with these first settings (``n``, ``window``, ``layers``,
    ``global_period``, ``layer``)."""
    return WindowExplorer(**settings)
