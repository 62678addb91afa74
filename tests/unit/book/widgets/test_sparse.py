"""book.widgets.sparse: the sparse explorer checks its settings and writes its root."""

import pytest


def test_sparse_explorer_checks_its_settings_and_writes_its_root():
    from book.widgets.frontend import FIGURES
    from book.widgets.sparse import check_sparse_settings, sparse_explorer
    from book.widgets.spec import SPARSE_DEFAULTS, sparse_spec

    assert ".mha-sparse" in FIGURES
    figure = sparse_explorer(sentence="a b c", top_k=2)
    assert figure.settings == {**SPARSE_DEFAULTS, "sentence": "a b c", "top_k": 2}
    assert figure.config == {"spec": sparse_spec()}
    page = figure.static_html()
    assert page.startswith('<div class="mha-sparse">') and '"top_k":2' in page and "needs JavaScript" in page
    assert check_sparse_settings({"top_k": None})["top_k"] is None  # every key: dense attention
    with pytest.raises(ValueError, match=r"top_k must be an int in 1\.\.n=3"):
        check_sparse_settings({"sentence": "a b c", "top_k": 4})
    with pytest.raises(ValueError, match="seed must be an int"):
        check_sparse_settings({"seed": -1})
    with pytest.raises(ValueError, match="sentence must have 1 to 16 words"):
        check_sparse_settings({"sentence": " "})
    with pytest.raises(ValueError, match="sentence must have 1 to 16 words"):
        check_sparse_settings({"sentence": " ".join(["w"] * 17), "top_k": 2})
    with pytest.raises(KeyError, match="unknown settings"):
        check_sparse_settings({"k": 2})
    with pytest.raises(TypeError, match="sentence must be a str"):
        check_sparse_settings({"sentence": 3})
