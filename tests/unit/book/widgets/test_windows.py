"""book.widgets.windows: the window explorer checks its settings by the spec's rules (the layer shown
defaults to the last) and writes its root with the spec and the settings inline."""

import json

import pytest

from book.widgets.frontend import FIGURES
from book.widgets.spec import WINDOW_DEFAULTS, windows_spec
from book.widgets.windows import check_window_settings, window_explorer, windows_config


def test_the_window_explorer_writes_its_root_with_its_spec_and_settings():
    assert ".mha-windows" in FIGURES
    figure = window_explorer(n=12, window=3)
    assert figure.settings == {**WINDOW_DEFAULTS, "n": 12, "window": 3, "layer": WINDOW_DEFAULTS["layers"]}
    assert figure.config == {"spec": windows_spec()}
    page = figure.static_html()
    assert page.startswith('<div class="mha-windows"><script type="application/json">')
    data = json.loads(page.split(">", 2)[2].split("</script>", 1)[0])
    assert data == {"spec": windows_spec(), "settings": figure.settings}
    assert "needs JavaScript" in page
    assert repr(figure) == "WindowExplorer(n=12, window=3, layers=6, global_period=3, layer=6)"
    assert windows_config(layers=2) == {
        "spec": windows_spec(),
        "settings": {**WINDOW_DEFAULTS, "layers": 2, "layer": 2},
    }


def test_the_layer_shown_defaults_to_the_last_of_the_layers_given():
    assert check_window_settings({"layers": 3})["layer"] == 3
    assert check_window_settings({"layers": 3, "layer": 1})["layer"] == 1


@pytest.mark.parametrize(
    ("settings", "error", "words"),
    [
        ({"n": 1}, ValueError, r"n must be an int in 2\.\.32, got 1"),
        ({"layers": 3, "layer": 4}, ValueError, r"layer must be an int in 1\.\.3, got 4"),
        ({"global_period": 5}, ValueError, "global_period must be one of 0, 2, 3, 4, 6, got 5"),
        ({"n": True}, TypeError, "n must be an int, got bool"),
        ({"window": 2.0}, TypeError, "window must be an int, got float"),
        ({"k": 1}, KeyError, r"unknown settings \['k'\]"),
    ],
)
def test_a_bad_setting_is_named(settings, error, words):
    with pytest.raises(error, match=words):
        check_window_settings(settings)
