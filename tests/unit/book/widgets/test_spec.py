"""book.widgets.spec: the one specification the front ends read their choices, bounds and messages from."""

import json

import torch

from book.compute.explorer import (
    MASKS,
    build_mask,
)
from book.widgets.explorer import HeadExplorer
from book.widgets.spec import explorer_spec, stepper_spec


def _all_specs() -> list[dict]:
    from book.decoder.box import box_spec as decoder_box_spec
    from book.decoder.model import MESSAGES as DECODER_MESSAGES
    from book.minilm.page import box_spec
    from book.widgets.spec import calculator_spec, sparse_spec, windows_spec
    from mha.costs.report import calculator_data

    return [
        explorer_spec(),
        explorer_spec(trained=True),
        windows_spec(),
        sparse_spec(),
        calculator_spec([c["name"] for c in calculator_data()]),
        stepper_spec(),
        box_spec([["cls"] * 12] * 6),
        decoder_box_spec({(0, 1): "previous token", (1, 0): "induction"}),
        {"messages": DECODER_MESSAGES},  # the decoder's, which come with its weights to the port
    ]


def _messages(spec: dict) -> list[str]:
    """A spec's message templates, the labels and templates of the calculator's rows and of the explorer's
    shapes."""
    out = []
    for value in spec["messages"].values():
        out.extend(value.values() if isinstance(value, dict) else [value])
    for label, template in spec.get("rows", {}).values():
        out.extend([label, template])
    for label, template in spec.get("shapes", []):  # the explorer's table of shapes
        out.extend([*(p if isinstance(p, str) else p[1] for p in label), template])
    return out


def test_no_script_declares_a_mask_name_or_a_message_of_python():
    """Every mask name, message template and calculator row (each literal piece between its {fields}) is
    defined in Python only: no page script, ports included, spells one, nor its comments."""
    import re

    from book.widgets.frontend import SCRIPTS, static_file

    scripts = {name: static_file(name) for name in SCRIPTS}
    figures = {
        "explorer.js",
        "windows.js",
        "sparse.js",
        "calculator.js",
        "minilm.js",
        "decoderbox.js",
    }
    figures |= {"ports/explorer.js", "ports/sparse.js", "ports/decoder.js"}
    assert {"core.js", "controller.js", *figures} <= set(scripts)
    pieces = set()
    for spec in _all_specs():
        for template in _messages(spec):
            pieces.update(p.strip() for p in re.split(r"\{\w+\}", template) if len(p.strip()) >= 12)
    found = []
    for name, text in scripts.items():
        for mask in MASKS:  # as a word, not part of a longer name nor CSS (`padding: 0`, `display: none`)
            if re.search(rf"(?<![\w-])(?<!: ){re.escape(mask)}(?![\w-]|\s*:)", text):
                found.append((name, mask))
        found.extend((name, piece) for piece in pieces if piece in text)
    assert found == []


def test_what_the_spec_says_each_mask_hides_is_what_build_mask_hides():
    """The page draws a mask from the spec's words (no_later: a query sees no later key; cut: no key at or
    after valid_length); they must say what build_mask builds. Every spec is JSON as it is."""
    explorer = _all_specs()[0]
    for m in explorer["masks"]:
        mask = build_mask(m["name"], 5, 3)
        full = (
            torch.ones(5, 5, dtype=torch.bool)
            if mask is None
            else torch.broadcast_to(mask, (1, 1, 5, 5))[0, 0]
        )
        assert bool(m["no_later"]) == (not full[0, 1].item()) and bool(m["cut"]) == (not full[4, 3].item())
    json.dumps(_all_specs())


def test_explorer_and_page_share_one_message_per_case():
    from book.widgets.spec import STILL

    explorer = HeadExplorer()
    explorer.update(sentence="")
    assert explorer.message == explorer.spec["messages"]["no_tokens"] + STILL
