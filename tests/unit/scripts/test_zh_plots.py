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


def _box(spec: str, picture: bytes, fallback: str) -> dict:
    """A box's output: its data, then its fallback and its print picture (book.widgets.frontend's)."""
    from book.widgets.frontend import print_image

    image = print_image(picture, alt=fallback, class_name="mm-print")
    html = (
        f'<div class="mha-box"><script type="application/json">{spec}</script>'
        f'<div class="mm-fallback"><p>{fallback}</p></div>{image}</div>'
    )
    return nbformat.v4.new_output("display_data", data={"text/html": html, "text/plain": "Box()"})


def test_the_picture_inside_a_box_is_chinese_beside_the_box_data_as_zh_sync_translates_it():
    import io

    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    fig.suptitle("x")  # the texts are those the figure's PNG says it shows (book.figures._pyplot.png)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"figure_texts": '{"texts": ["头 1"], "kept": []}'})
    english = nbformat.v4.new_code_cell("box", id="c1", outputs=[_box('{"label":"Run"}', b"EN", "A box")])
    drawn = _box('{"label":"Run"}', buffer.getvalue(), "一个框")
    texts = zh_plots.drawn_texts(drawn)
    assert texts == {"texts": ["头 1"], "kept": [], "html": ["一个框", "一个框"]}, (
        "the PNG's, its alt, fallback"
    )
    drawn.metadata[zh_plots.RECORD] = {"en": zh_plots.picture_hash(english.outputs[0]), **texts}
    fresh = _box('{"label":"运行"}', b"EN", "A box")  # the English output, its data translated by zh_sync
    merged = zh_plots.with_picture(fresh, drawn)
    html = merged["data"]["text/html"]
    assert '{"label":"运行"}' in html and "一个框" in html and "A box" not in html
    chinese = nbformat.v4.new_code_cell("box", id="c1", outputs=[merged])
    assert zh_plots.pictures(chinese) == [0] and not zh_plots.in_step(
        nbformat.v4.new_notebook(cells=[english]), nbformat.v4.new_notebook(cells=[chinese])
    )
    cell = nbformat.from_dict(dict(english))
    cell.outputs = [fresh]
    zh_sync.keep_pictures(cell, chinese)
    assert cell.outputs[0]["data"]["text/html"] == html, (
        "zh_sync keeps it while the English picture is the same"
    )
