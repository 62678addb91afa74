"""mha.costs.releases: every model's release date with its source, and the groups the chapters compare."""

import re

import pytest

from mha.costs import (
    EARLIER_MODELS,
    LATER_MODELS,
    MODEL_CONFIGS,
    RELEASE_CUT,
    RELEASES,
    models_released,
)

DATE = re.compile(r"\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?")


def test_every_model_has_a_release_with_a_source():
    assert set(RELEASES) == set(MODEL_CONFIGS)
    for name, c in MODEL_CONFIGS.items():
        release = c.released
        assert release is RELEASES[name]
        assert release.source.strip(), name
        if release.date is None:  # a date not confirmed says so
            assert "UNVERIFIED" in release.source, name
        else:
            assert DATE.fullmatch(release.date), (name, release.date)


def test_each_source_names_a_primary_publication():
    """An arXiv paper or the maker's post, card or report, with its date written out."""
    for name, release in RELEASES.items():
        assert "arXiv" in release.source or "https://" in release.source, name
        if release.date is not None:
            assert release.date[:4] in release.source, name  # the year, as the source states it


def test_the_groups_split_the_models_at_the_cut_date():
    assert RELEASE_CUT == "2025-07-01"
    dated = [n for n, r in RELEASES.items() if r.date is not None]
    assert set(EARLIER_MODELS) | set(LATER_MODELS) == set(dated)
    assert not set(EARLIER_MODELS) & set(LATER_MODELS)
    assert all(RELEASES[n].date < RELEASE_CUT for n in EARLIER_MODELS)
    assert all(RELEASES[n].date >= RELEASE_CUT for n in LATER_MODELS)
    assert list(EARLIER_MODELS) == [n for n in MODEL_CONFIGS if n in EARLIER_MODELS]  # the table's order


def test_models_released_together_fall_in_one_group():
    """Issue 45, error 9: the edition list split Llama 4 Scout from Maverick and put gpt-oss early."""
    for pair in (("Llama 4 Scout", "Llama 4 Maverick"), ("gpt-oss-20b", "gpt-oss-120b")):
        assert RELEASES[pair[0]].date == RELEASES[pair[1]].date
    assert {"Llama 4 Scout", "Llama 4 Maverick"} <= set(EARLIER_MODELS)
    assert {"gpt-oss-20b", "gpt-oss-120b"} <= set(LATER_MODELS)
    assert RELEASES["gpt-oss-20b"].date == "2025-08-05"
    assert RELEASES["Llama 4 Maverick"].date == "2025-04-05"


def test_models_released_takes_either_bound_or_both():
    assert models_released(since="2026-01-01", before="2026-12-31") == (
        "Qwen3.5-397B-A17B",
        "DeepSeek-V4-Flash",
        "DeepSeek-V4-Pro",
        "GLM-5",
        "Gemma 4 31B",
        "Gemma 4 E2B",
    )
    assert models_released(before="2018-01-01") == ("Transformer base", "Transformer big")
    with pytest.raises(ValueError, match="before, since"):
        models_released()
