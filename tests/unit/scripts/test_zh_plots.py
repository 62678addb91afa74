"""scripts.zh_plots: which Chinese pictures are behind their English ones, and how zh_sync keeps the rest."""

import nbformat

from scripts import zh_plots, zh_sync


def _picture(png: str, record: dict | None = None) -> dict:
    output = nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})
    if record is not None:
        output.metadata[zh_plots.RECORD] = record
    return output


def test_zh_sync_keeps_a_chinese_picture_while_its_english_picture_is_the_recorded_one():
    english = nbformat.v4.new_code_cell("fig = plot()", id="c1", outputs=[_picture("RU4=")])
    drawn = {"en": zh_plots.picture_hash(english.outputs[0]), "texts": ["头 1"], "kept": []}
    chinese = nbformat.v4.new_code_cell("fig = plot()", id="c1", outputs=[_picture("Wkg=", drawn)])
    cell = nbformat.from_dict(dict(english))
    zh_sync.keep_pictures(cell, chinese)
    assert cell.outputs[0]["data"]["image/png"] == "Wkg=", "the Chinese picture of the current English one"
    changed = nbformat.v4.new_code_cell("fig = plot()", id="c1", outputs=[_picture("RU4y")])
    zh_sync.keep_pictures(changed, chinese)
    assert changed.outputs[0]["data"]["image/png"] == "RU4y", "the English picture changed: it is shown"
    behind = zh_plots.in_step(
        nbformat.v4.new_notebook(cells=[changed]), nbformat.v4.new_notebook(cells=[chinese])
    )
    assert behind == ["cell 0 (id c1): picture 1 is the English one or older"]
