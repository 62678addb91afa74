"""The sparse-attention figure: a lightning indexer's scores for a sentence, and the keys each query keeps.

The page computes it (``book/widgets/static/ports/sparse.js``, a port of
:func:`book.compute.attention_2026.index_selection` and :func:`mha.costs.sparse.causal_pairs`); this module
writes its root element, with the spec that holds its controls, bounds, defaults and messages
(:func:`book.widgets.spec.sparse_spec`). In a live kernel the same script is the widget's front end, and it
still computes in the page (float64 in both languages; the choice of keys is tested equal).
"""

from __future__ import annotations

from book.compute.explorer import split_tokens
from book.widgets.frontend import ROOT_CLASSES, FrontEndWidget, root_html, widget_css, widget_esm
from book.widgets.spec import SPARSE_DEFAULTS, merge_settings, sparse_spec

__all__ = ["SparseExplorer", "check_sparse_settings", "sparse_explorer"]


def check_sparse_settings(settings: dict) -> dict:
    """Return ``settings`` complete, or raise naming the bad one: the rules of
    :func:`book.widgets.spec.merge_settings`, which the page's controls apply too, and a sentence of 1 to
    ``max_tokens`` words.

    Raises:
        KeyError: an unknown setting. TypeError: a wrong type. ValueError: out of bounds.
    """
    spec = sparse_spec()
    out = merge_settings(spec, dict(SPARSE_DEFAULTS), settings)
    n = len(split_tokens(out["sentence"]))
    if not 1 <= n <= spec["max_tokens"]:
        raise ValueError(f"sentence must have 1 to {spec['max_tokens']} words (split at spaces), got {n}")
    return {name: out[name] for name in SPARSE_DEFAULTS}  # the settings, not the page's memory of top_k


class SparseExplorer(FrontEndWidget):
    """Controls for a sentence, top-k and the indexer's seed above two panels: the index scores of every
    query-key pair and the keys each query keeps, with the pairs kept against dense attention's.

    Args:
        sentence, top_k, seed: the first settings (``top_k=None``: every key, dense attention).
    """

    _esm = widget_esm("mountSparse")
    _css = widget_css()

    def __init__(self, **settings: object) -> None:
        checked = check_sparse_settings(settings)
        super().__init__()
        self.config = {"spec": sparse_spec()}
        self.settings = checked

    def static_html(self) -> str:
        """The figure for pages without a kernel: the front end with its data inline."""
        return root_html(
            ROOT_CLASSES["mountSparse"],
            {**self.config, "settings": dict(self.settings)},
            fallback="<p>The sparse-attention figure needs JavaScript.</p>",
        )

    def __repr__(self) -> str:
        return "SparseExplorer(" + ", ".join(f"{k}={v!r}" for k, v in self.settings.items()) + ")"


def sparse_explorer(**settings: object) -> SparseExplorer:
    """Return a :class:`SparseExplorer` with these first settings (``sentence``, ``top_k``, ``seed``)."""
    return SparseExplorer(**settings)
