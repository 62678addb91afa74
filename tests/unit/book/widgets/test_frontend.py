"""book.widgets.frontend: the page code's files are found by name in one of the static folders, copied with
their subfolders, concatenated into a live widget's ES module, and a static figure's root carries its data
inline, safely. And the ports (book/*/static/ports/) load alone, in mini-racer, with no page; ports/bytes.js
reads the byte formats Python writes (tensor_json's, the widgets' and the pages' weights) as Python does."""

import base64
import json
import random

import numpy as np
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
from tests import ROOT
from tests.port_cases import UTF8_TEXTS


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
        FileNotFoundError,
        match=r"book\.widgets, book\.minilm, book\.decoder, book\.smollm2 holds 'ports/no\.js'",
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


# -- the ports (ports/*.js), each tested equal to its Python twin in the twin's test file (tests/ports.py) ---


def test_every_port_names_its_python_twin_and_has_its_row():
    """A port's header names its Python twin, and CONTRIBUTING.md's table of ports has its row."""
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for name in PORTS:
        header = static_file(name).split("*/", 1)[0]
        assert "Python twin" in header and "PORT of" in header, name
        assert f"| `{name}` |" in contributing, f"CONTRIBUTING.md's table of ports has no row for {name}"


def test_the_ports_need_no_page(ports):
    """Loaded alone, the ports define their functions and no global but the namespace: they need no page."""
    assert ports.added == {"mhaFrontEnd"}
    assert {
        "utf8Bytes",
        "float16s",
        "linear",
        "scaledDotProductAttention",
        "uniform",
        "explorerWeights",
        "mergeSettings",
        "costs",
        "windowsCompute",
        "sparseCompute",
        "miniLM",
        "miniLMWorker",
    } <= ports.ns


# -- ports/bytes.js: the byte formats Python writes ----------------------------------------------------------


def test_bytes_utf8_is_python_s_encode(ports):
    assert ports.run("ts => ts.map(mhaFrontEnd.utf8Bytes)", UTF8_TEXTS) == [
        list(t.encode("utf-8")) for t in UTF8_TEXTS
    ]


def test_bytes_base64_and_float32_are_python_s(ports):
    rng = random.Random(0)
    blobs = [bytes(rng.randrange(256) for _ in range(n)) for n in (*range(10), 1000)]
    texts = [base64.b64encode(b).decode("ascii") for b in blobs]
    assert ports.run("ts => ts.map(mhaFrontEnd.base64Bytes)", texts) == [list(b) for b in blobs]
    values = np.array([0.0, -0.0, 1.5, -2.25e-8, 3.4e38, 1 / 3], dtype="<f4")
    got = ports.run(
        "t => mhaFrontEnd.float32s(mhaFrontEnd.base64Bytes(t))", base64.b64encode(values.tobytes()).decode()
    )
    assert got == values.astype(np.float64).tolist()
    wrong = [
        "ab!d",
        "QUJD" * 5 + "QU.D",
        "QUJDRA!",
        "QUJDRAé=",
        "QUJD\u4e2dEQ==",
        "QUJDR",
    ]  # the last is cut short
    errors = ports.run(
        "ts => ts.map(t => { try { mhaFrontEnd.base64Bytes(t); } catch (e) { return e.name; } })", wrong
    )
    assert errors == ["RangeError"] * len(wrong)


def test_bytes_float16_is_numpy_s(ports):
    """Every float16 bit pattern, little-endian, as numpy reads it (infinities and NaN sent as text)."""
    bits = np.arange(2**16, dtype="<u2")
    values = bits.view("<f2").astype(np.float64)
    run = "t => Array.from(mhaFrontEnd.float16s(mhaFrontEnd.base64Bytes(t)), String)"
    got = np.array([float(v) for v in ports.run(run, base64.b64encode(bits.tobytes()).decode())])
    assert np.array_equal(got, values, equal_nan=True)
