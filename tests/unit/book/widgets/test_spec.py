"""book.widgets.spec: the one specification the front ends read their choices, bounds and messages from, and
its rules' port, ports/settings.js, equal to them in mini-racer."""

import json

import torch

from book.compute.explorer import (
    MASKS,
    build_mask,
)
from book.widgets.explorer import HeadExplorer
from book.widgets.spec import choices, explorer_spec, fill, merge_settings, next_valid, stepper_spec
from tests.port_cases import merge_cases


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


# -- ports/settings.js: book.widgets.spec's rules ------------------------------------------------------------


def _python_merge(spec, state, changes, fixed):
    try:
        return {"state": merge_settings(spec, state, changes, fixed=fixed)}
    except (ValueError, TypeError) as error:
        return {"error": str(error)}
    except KeyError:
        return {"error": "unknown"}


def test_settings_merge_equals_python(ports):
    """mergeSettings is merge_settings: the same new settings, or the same message, for every case."""
    cases = merge_cases()
    got = ports.run(
        """cases => cases.map(([spec, state, changes, fixed]) => {
            try { return {state: mhaFrontEnd.mergeSettings(spec, state, changes, fixed)}; }
            catch (e) { return {error: e.message.startsWith("unknown settings") ? "unknown" : e.message}; }
        })""",
        [list(c) for c in cases],
    )
    expected = [_python_merge(*c) for c in cases]
    assert got == expected
    assert sum("error" in e for e in expected) >= 15 and sum("state" in e for e in expected) >= 15


def test_settings_follow_notes_equal_python(ports):
    """followNotes is follow_notes: what the page says about a setting that followed another, for every
    change the rules accept; a divisor and a layer that had to change, and a valid length below the one
    chosen, say so."""
    from book.widgets.spec import follow_notes

    cases = []
    for spec, state, changes, fixed in merge_cases():
        result = _python_merge(spec, state, changes, fixed)
        if "state" in result:
            cases.append((spec, state, result["state"], changes))
    got = ports.run(
        "cases => cases.map(([spec, before, after, changes]) =>"
        " mhaFrontEnd.followNotes(spec, before, after, changes))",
        [list(c) for c in cases],
    )
    expected = [follow_notes(*c) for c in cases]
    assert got == expected
    said = " ".join(text for notes in expected for text in notes.values())
    assert "The heads h changed from 16 to 8: 16 does not divide d_model = 8." in said
    assert "The show layer changed from 6 to 3: layers is now 3." in said
    assert "The valid length is 1 while the sentence has 1 token; it goes back to 8 when" in said
    assert sum(bool(notes) for notes in expected) >= 8 and sum(not notes for notes in expected) >= 15


def test_settings_valid_length_follows_the_sentence(ports):
    """Typed word by word, or through a sentence the page refuses, the valid length comes back to the value
    chosen: the page and Python take the same steps."""
    spec = explorer_spec()
    state = merge_settings(spec, spec["defaults"], {"mask": "padding", "valid_length": 8})
    steps = [
        {"sentence": ""},
        {"sentence": "a"},
        {"sentence": "a b c"},
        {"sentence": " ".join("abcdefghijkl")},
    ]
    got = ports.run(
        "(spec, state, steps) => steps.map(s =>"
        " (state = mhaFrontEnd.mergeSettings(spec, state, s)).valid_length)",
        spec,
        state,
        steps,
    )
    expected = []
    for step in steps:
        state = merge_settings(spec, state, step)
        expected.append(state["valid_length"])
    assert got == expected == [8, 1, 3, 8]


def test_settings_choices_and_next_valid_equal_python(ports):
    spec = explorer_spec()
    h = next(c for c in spec["controls"] if c["name"] == "h")
    got = ports.run("(h, ds) => ds.map(d => mhaFrontEnd.choicesOf(h, {d_model: d}))", h, [8, 12, 24, 64, 7])
    assert got == [choices(spec, h, {"d_model": d}) for d in (8, 12, 24, 64, 7)]
    got = ports.run("() => [[1, 2, 4], [3, 6]].map(v => mhaFrontEnd.nextValid(v, 5))")
    assert got == [next_valid([1, 2, 4], 5), next_valid([3, 6], 5)] == [4, 3]
    got = ports.run(
        "(t, v) => mhaFrontEnd.format(t, v)", "{a} and {b}: {c}", {"a": [1, "x"], "b": None, "c": 2.5}
    )
    from book.widgets.spec import fill

    assert got == fill("{a} and {b}: {c}", a=[1, "x"], b=None, c=2.5)


def test_settings_explorer_choices_equal_python(ports):
    """What the explorer's menus offer, fresh or with a trained model (its own d_model and h)."""
    from book.widgets.spec import explorer_choices

    spec = explorer_spec(trained=True)
    cases = [
        ({**spec["defaults"], "source": "fresh", "d_model": d}, trained)
        for d in (8, 12, 48)
        for trained in (None, {"d_model": 24, "h": 3}, {"d_model": 20, "h": 20}, {"d_model": 64, "h": 16})
    ]
    cases += [({**state, "source": "trained"}, trained) for state, trained in cases if trained]
    got = ports.run(
        "(spec, cases) => cases.map(([s, t]) => mhaFrontEnd.explorerChoices(spec, s, t))", spec, cases
    )
    assert got == [explorer_choices(spec, state, trained) for state, trained in cases]


PLURAL_CASES = [
    ("its {k} best {k|key|keys}", {"k": 1}),
    ("its {k} best {k|key|keys}", {"k": 4}),
    ("{n} {n|token|tokens}, {k} {k|word is|words are} new", {"n": 1, "k": 0}),
    ("{n} {n|token|tokens}, {k} {k|word is|words are} new", {"n": 12, "k": 1}),
    ("{k} 个头", {"k": 1}),  # Chinese needs no plural and uses none
    ("{other|a|b} stays", {"k": 1}),  # a field not given stays as written
]


def test_fill_chooses_singular_or_plural_as_the_page_does(ports):
    """One place chooses a plural ({name|one|many}): spec.fill in Python, format in ports/settings.js."""
    assert fill(*PLURAL_CASES[0][:1], **PLURAL_CASES[0][1]) == "its 1 best key"
    assert fill(PLURAL_CASES[3][0], **PLURAL_CASES[3][1]) == "12 tokens, 1 word is new"
    assert fill(PLURAL_CASES[2][0], **PLURAL_CASES[2][1]) == "1 token, 0 words are new"
    cases = [list(c) for c in PLURAL_CASES]
    got = ports.run("cases => cases.map(([t, v]) => mhaFrontEnd.format(t, v))", cases)
    assert got == [fill(t, **v) for t, v in PLURAL_CASES]


def test_no_figure_message_hedges_a_plural():
    """No "(s)": every spec's English messages choose with {name|one|many} instead."""
    from book.decoder.model import MESSAGES as DECODER
    from book.minilm.page import MESSAGES as MINILM
    from book.widgets.spec import sparse_spec

    texts = [*DECODER.values(), *MINILM.values(), *json.dumps(sparse_spec()).split('"')]
    assert not [t for t in texts if "(s)" in t]
