"""The lanes of the tests, the markers that follow from them, and the fixtures every lane shares.

A test's lane is the folder it sits in, and its marker (the markers are declared in pyproject.toml):

* ``tests/unit/`` (``unit``): the package, its JavaScript ports and the scripts' functions, in Python: no
  browser, no built book, no notebook run. A unit test may not ask for the browser or be marked ``site``.
* ``tests/book/`` (``book``): the chapters' sources, and (marked ``site``) the built site's files, the
  student edition and the PDF.
* ``tests/browser/`` (``browser``): headless Chromium: the figures on a page of their own, the built pages,
  the decks, JupyterLab.

Markers that follow from what a test uses are set here too, so that no test can forget one: a test that asks
for the ``browser`` fixture is ``browser`` (the student PDF is printed in the book lane), one that asks for
``minilm``, ``smollm2`` or ``smollm2_reference`` is ``pretrained``, and the root's conftest.py marks nbval's
cells ``notebook``. ``site`` (needs the
built book, or builds a deck or an edition) and ``slow`` (seconds for another reason: training, a
subprocess, every setting of a figure) are set by hand.

``make check`` runs ``tests/unit`` and ``tests/book`` without ``site``, ``slow`` and ``pretrained``; ``make
test`` runs everything. Only the ``minilm`` fixture may load all-MiniLM-L6-v2, and only a ``pretrained`` test
may open SmolLM2's file: a test that does either otherwise fails (which ``make check``, where no
``pretrained`` test runs, always sees).
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path
from unittest import mock

import pytest
import torch
from _pytest.nodeid import NodeId

from scripts import chromium
from tests.built_site import SITE

# A helper module's asserts report what they compared, as a test's own do (pytest rewrites only test_*.py and
# conftest.py by itself): check_drawn, which a unit and a browser test share.
pytest.register_assert_rewrite("tests.minilm_cases")

LANES = ("unit", "book", "browser")
TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which names each test's group
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.suffix == ".ipynb":
            continue
        _lane_markers(item)
    _groups_heavy_first(config, items)


def _lane_markers(item) -> None:
    parts = item.path.relative_to(TESTS).parts if item.path.is_relative_to(TESTS) else ()
    lane = parts[0] if len(parts) > 1 else None
    if lane not in LANES:
        lanes = "|".join(LANES)
        raise pytest.UsageError(f"{item.path}: a test file sits in its lane's folder, tests/{lanes}/")
    item.add_marker(lane)
    names = getattr(item, "fixturenames", ())
    if "browser" in names:
        item.add_marker(pytest.mark.browser)
    if {"minilm", "smollm2", "smollm2_reference"} & set(names):
        item.add_marker(pytest.mark.pretrained)
    if lane == "unit" and ("browser" in names or item.get_closest_marker("site")):
        raise pytest.UsageError(f"{item.nodeid}: a unit test needs no browser and no built book")


# -- two workers kept busy ---------------------------------------------------------------------------------
#
# `make test` runs `--dist loadgroup`: the tests of one xdist group run on one worker, in order. Each test is
# in one group: its own `xdist_group` mark if it has one, else a notebook's cells (one kernel), a page's
# checks (the tests with a `page` parameter that ask for `visits`: the page is visited once), or its module
# (its module-scoped fixtures are set up once). The groups go out heaviest first (the seconds below, from the
# summary a make test run prints; every other group counts one), so that no long group starts last: the two
# workers finish close together.
GROUP_SECONDS = {
    "smollm2_page": 137,  # tests/browser/test_site_smollm2_run.py: SmolLM2 loaded in the page, load 5
    "tests/browser/test_slides.py": 106,
    "tests/book/test_editions.py": 59,
    "page:en:chapters/typical_configs": 37,
    "page:en:chapters/the_math": 36,
    "tests/browser/test_site_minilm.py": 36,
    "tests/browser/test_site_decoder.py": 29,
    "tests/browser/test_site_smollm2.py": 20,  # its page twice (English, print) and the Chinese page once
    "smollm2": 25,  # tests/unit/mha/pretrained/test_smollm2.py: its two models loaded once, and its tests
    "page:en:chapters/step_by_step": 22,
    "tests/browser/test_frontend_promises.py": 20,
    "tests/browser/test_jupyterlab.py": 18,
    "tests/browser/test_site.py": 18,
    "page:en:chapters/attention_since_2017": 18,
    "page:en:chapters/appendix_toy_heads": 16,
    "tests/unit/mha/pretrained/test_minilm.py": 15,  # all-MiniLM-L6-v2 against transformers and its port
    "page:zh:chapters/the_math": 14,
    "page:zh:chapters/attention_since_2017": 14,
    "tests/browser/test_site_screens.py": 12,
    "page:en:chapters/attention_2025_2026": 12,
    "page:en:chapters/induction_heads": 12,
    "tests/browser/test_site_2025_2026.py": 11,
    "page:zh:chapters/typical_configs": 11,
}
PAGE_SECONDS = 4.0  # a page's visits, without the figures' own tests


def group_of(item) -> str:
    """The xdist group of ``item`` (see above)."""
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return str(mark.args[0] if mark.args else mark.kwargs["name"])
    if item.path.suffix == ".ipynb":
        return f"notebook:{item.path.stem}"
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "page" in params and "visits" in getattr(item, "fixturenames", ()):
        from tests.browser.visits import page_group

        return page_group(params.get("lang", "en"), params["page"])
    return item.path.relative_to(TESTS.parent).as_posix()


def _seconds(group: str) -> float:
    return GROUP_SECONDS.get(group, PAGE_SECONDS if group.startswith("page:") else 1.0)


def _groups_heavy_first(config, items) -> None:
    groups: dict[str, list] = {}
    for item in items:
        name = group_of(item)
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(name))
        groups.setdefault(name, []).append(item)
        if getattr(config.option, "loadgroup", False):  # an xdist worker of `--dist loadgroup`
            # xdist's scheduler reads a test's group from its id, "<nodeid>@<group>"; xdist 3.8 writes
            # that id into `item._nodeid`, which pytest 9 no longer reads (its ids are structured), so
            # it is written here, where pytest 9 keeps it.
            item._id = NodeId.parse(f"{item.nodeid}@{name}")
    ordered = sorted(groups, key=lambda g: -_seconds(g))  # stable: collection order among equals
    items[:] = [item for name in ordered for item in groups[name]]


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # Two workers on two cores: one thread each. Two threads each made four threads on two cores, which
        # spin while they wait for one another (make check: 163 s, and 52 s with one thread each). The
        # notebooks' kernels keep the machine's threads (their outputs must not depend on them), and wait
        # for one another without spinning.
        torch.set_num_threads(1)
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture(autouse=True)
def _deterministic():
    torch.manual_seed(0)
    yield


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium (scripts/chromium.py), one for the whole run; each test opens its own pages."""
    if chromium.CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it): apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = chromium.launch(p)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def built_site() -> Path:
    """The built book (``make book``; ``MHA_SITE``: another build), or a failure that says to build it."""
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site in {SITE}: run `make book` (make test does it first)")
    return SITE


# -- all-MiniLM-L6-v2: through the `minilm` fixture only ---------------------------------------------------


@pytest.fixture(scope="session")
def minilm():
    """all-MiniLM-L6-v2 (:func:`mha.pretrained.load_minilm`): asking for it marks a test ``pretrained``."""
    from mha.pretrained import load_minilm

    return load_minilm()


# -- SmolLM2-135M-Instruct on mha, and transformers' Llama from the same file ------------------------------


@pytest.fixture(scope="session")
def smollm2():
    """SmolLM2-135M-Instruct (:func:`mha.pretrained.smollm2.load_smollm2`): asking for it marks a test
    ``pretrained``."""
    from mha.pretrained.smollm2 import load_smollm2

    return load_smollm2()


@pytest.fixture(scope="session")
def smollm2_reference():
    """``(model, tokenizer)``: transformers' ``LlamaForCausalLM`` (float32, eager attention, so that it
    returns its weights) and its tokenizer, both loaded from the same GGUF file; marks a test
    ``pretrained``."""
    transformers = pytest.importorskip("transformers")
    import gguf

    from mha.pretrained.smollm2 import gguf_path

    path = gguf_path()
    # transformers parses the file's metadata three times (the configuration, the weights, the tokenizer:
    # 2.4 s each) and builds gguf's table of tensor names once per module of the model (397 times, 4.8 s);
    # while it loads, both are made once (read-only objects, what transformers would build again each time).
    readers, read = {}, gguf.GGUFReader

    def reader(file, *args, **kwargs):
        key = (str(file), args, tuple(sorted(kwargs.items())))
        if key not in readers:
            readers[key] = read(file, *args, **kwargs)
        return readers[key]

    names = functools.cache(gguf.get_tensor_name_map)
    with mock.patch.object(gguf, "GGUFReader", reader), mock.patch.object(gguf, "get_tensor_name_map", names):
        model = transformers.LlamaForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, torch_dtype=torch.float32, attn_implementation="eager"
        )
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return model.eval(), tokenizer


# -- only a pretrained test loads a model -----------------------------------------------------------------


def _refuse_the_model(*_):
    raise RuntimeError(
        "this test loads a pretrained model (all-MiniLM-L6-v2, or SmolLM2's file) but is not `pretrained`: "
        "ask for the `minilm`, `smollm2` or `smollm2_reference` fixture (tests/conftest.py), or mark it; "
        "make check runs no pretrained model"
    )


@contextlib.contextmanager
def _pretrained(item):
    """Loading all-MiniLM-L6-v2 (which reads the installed package's version first) or opening SmolLM2's
    file fails unless ``item`` is ``pretrained``; around a test's set-up too, where module fixtures run."""
    if item.get_closest_marker("pretrained") is not None:
        yield
        return
    from mha.pretrained import minilm, smollm2

    real = minilm.model_version, smollm2.read_gguf
    minilm.model_version = smollm2.read_gguf = _refuse_the_model
    try:
        yield
    finally:
        minilm.model_version, smollm2.read_gguf = real


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    with _pretrained(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with _pretrained(item):
        return (yield)
