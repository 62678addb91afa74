"""_ext/decoder_weights.py: the Sphinx extension that writes the decoder's weights into the built site."""

from __future__ import annotations

from types import SimpleNamespace

from book.decoder import page as decoder_page


def test_the_sphinx_extension_writes_the_script_after_an_html_build(tmp_path):
    from _ext import decoder_weights

    decoder_weights.write_weights(
        SimpleNamespace(builder=SimpleNamespace(format="html"), outdir=str(tmp_path)), None
    )
    target = tmp_path / "_static" / decoder_page.WEIGHTS_SCRIPT
    assert target.read_text(encoding="ascii") == decoder_page.weights_script()
    failed = tmp_path / "failed"
    html = SimpleNamespace(builder=SimpleNamespace(format="html"), outdir=str(failed))
    decoder_weights.write_weights(html, RuntimeError("failed build"))
    decoder_weights.write_weights(
        SimpleNamespace(builder=SimpleNamespace(format="latex"), outdir=str(failed)), None
    )
    assert not failed.exists()
