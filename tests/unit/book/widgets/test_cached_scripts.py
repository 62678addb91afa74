import pytest

from book.widgets.cached_scripts import cache_root, cached_scripts


def _writer(calls):
    def write(folder):
        calls.append(folder)
        (folder / "model.js").write_text("model", encoding="ascii")
        (folder / "parts").mkdir()
        (folder / "parts" / "0.js").write_text("part", encoding="ascii")

    return write


def test_the_scripts_are_built_once_then_copied_beside_each_target(tmp_path):
    calls = []
    for site in ("en", "zh"):
        target = cached_scripts(
            "m-v1", _writer(calls), tmp_path / site / "model.js", ("parts",), cache=tmp_path / "c"
        )
        assert target.read_text() == "model" and (target.parent / "parts" / "0.js").read_text() == "part"
    assert len(calls) == 1, "the second site copies the cache"
    assert [p.name for p in (tmp_path / "c").iterdir()] == ["m-v1"], "no staging folder is left"


def test_a_failed_build_leaves_no_cache_behind(tmp_path):
    def fails(folder):
        (folder / "model.js").write_text("half", encoding="ascii")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        cached_scripts("m-v1", fails, tmp_path / "site" / "model.js", cache=tmp_path / "c")
    assert list((tmp_path / "c").iterdir()) == []


def test_the_cache_is_the_argument_then_mha_cache_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("MHA_CACHE", str(tmp_path / "env"))
    assert cache_root(tmp_path / "arg") == tmp_path / "arg"
    assert cache_root() == tmp_path / "env"
    monkeypatch.delenv("MHA_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_root() == tmp_path / ".cache" / "mha"
