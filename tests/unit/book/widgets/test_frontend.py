"""book.widgets.frontend: the page code's files are found by name in one of the static folders, copied with
their subfolders, concatenated into a live widget's ES module, and a static figure's root carries its data
inline, safely."""

import base64
import json

import pytest
import torch

from book.widgets import frontend
from book.widgets.frontend import (
    PORTS,
    ROOT_CLASSES,
    SCRIPTS,
    STATIC_ROOTS,
    STYLESHEET,
    WIDGET_SCRIPTS,
    copy_static,
    root_html,
    static_file,
    static_path,
    tensor_json,
    widget_esm,
)


def names(root) -> set[str]:
    """Every file's name under a static folder, relative to it (``ports/random.js``)."""
    found, todo = set(), [(root, "")]
    while todo:
        folder, prefix = todo.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                todo.append((entry, f"{prefix}{entry.name}/"))
            else:
                found.add(prefix + entry.name)
    return found


def test_no_two_static_folders_hold_the_same_name_and_every_script_is_in_one():
    per_root = [names(root) for root in STATIC_ROOTS]
    clashes = {n for i, a in enumerate(per_root) for b in per_root[i + 1 :] for n in a & b}
    assert not clashes  # the site merges the folders into one _static/
    assert tuple(sorted(PORTS)) == PORTS and all(name.startswith("ports/") for name in PORTS)
    assert SCRIPTS[: len(PORTS)] == PORTS  # the ports load first
    for name in (*SCRIPTS, STYLESHEET):
        assert static_path(name).is_file(), name
    assert set(WIDGET_SCRIPTS) == set(ROOT_CLASSES) and all(
        set(s) <= set(SCRIPTS) for s in WIDGET_SCRIPTS.values()
    )


def test_a_name_in_no_static_folder_is_refused_naming_the_packages():
    with pytest.raises(
        FileNotFoundError, match=r"book\.widgets, book\.minilm, book\.decoder holds 'ports/no\.js'"
    ):
        static_path("ports/no.js")


def test_copy_static_keeps_the_subfolders_and_the_text(tmp_path):
    chosen = [PORTS[0], "core.js", STYLESHEET]
    copy_static(tmp_path, chosen)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        chosen
    )
    for name in chosen:
        assert (tmp_path / name).read_text(encoding="utf-8") == static_file(name)


def test_the_widget_module_is_its_scripts_in_order_then_the_adapter():
    esm = widget_esm("mountWindows")
    scripts = [static_file(name) for name in WIDGET_SCRIPTS["mountWindows"]]
    assert esm == "\n".join([*scripts, 'export default globalThis.mhaFrontEnd.anywidget("mountWindows");\n'])
    own = widget_esm("mountMiniLM", export="globalThis.mhaMiniLM.anywidget")
    assert own.endswith("\nexport default globalThis.mhaMiniLM.anywidget;\n")
    with pytest.raises(ValueError, match="mount must be one of"):
        widget_esm("mountSomething")


def test_a_root_carries_its_data_inline_and_no_text_can_end_its_script():
    data = {"sentence": "</script><script>alert(1)</script>", "n": 3}
    page = root_html('mha-x" onclick="y', data, fallback="<p>needs JavaScript</p>")
    assert page.startswith('<div class="mha-x&quot; onclick=&quot;y"><script type="application/json">')
    inline = page.split('type="application/json">', 1)[1].split("</script>", 1)[0]
    assert json.loads(inline) == data  # the one </script> is the block's own end
    assert page.endswith("</script><noscript><p>needs JavaScript</p></noscript></div>")
    assert "<noscript>" not in root_html("mha-x", {})


def test_a_tensor_goes_to_the_page_as_float32_little_endian_base64():
    t = torch.tensor([[1.5, -2.0], [0.25, 3.0]], dtype=torch.float64)
    sent = tensor_json(t)
    assert sent["dtype"] == "float32" and sent["shape"] == [2, 2]
    back = torch.frombuffer(bytearray(base64.b64decode(sent["data"])), dtype=torch.float32).view(2, 2)
    assert torch.equal(back, t.float()) and frontend.inline_json([1]) == "[1]"
