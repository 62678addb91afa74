"""book.widgets.calculator: the live cost calculator sends cost_report's rows; its static front end."""

import dataclasses
import json

import pytest

from _ext.figure_roots import figure_roots
from book.widgets import CostCalculator, cost_calculator
from book.widgets.frontend import calculator_config
from mha.costs.configs import MODEL_CONFIGS
from mha.costs.counts import model_costs
from mha.costs.report import DTYPES, cost_report, cost_rows


def test_calculator_sends_the_rows_of_cost_report():
    calc = cost_calculator("Llama 3.1 8B", context=4096)
    assert isinstance(calc, CostCalculator)
    assert calc.settings == {"model": "Llama 3.1 8B", "context": 4096, "batch": 1, "dtype": "bfloat16"}
    assert all(MODEL_CONFIGS[c["name"]].kind == "decoder" for c in calc.config["configs"])
    for changes in ({"model": "Llama 2 70B"}, {"batch": 8}, {"dtype": "float32"}, {"context": 2**20}):
        calc.update(**changes)
        s = calc.settings
        text = cost_report(s["model"], s["context"], batch=s["batch"], dtype=s["dtype"])
        width = max(len(k) for k, _ in calc.rows)
        assert "\n".join(f"{k.ljust(width)}  {v}".rstrip() for k, v in calc.rows) == text
        assert calc.drawn["rows"] == [list(row) for row in calc.rows]
        costs = model_costs(
            MODEL_CONFIGS[s["model"]], s["context"], batch=s["batch"], dtype=DTYPES[s["dtype"]]
        )
        assert calc.drawn["numbers"] == {k: str(v) for k, v in dataclasses.asdict(costs).items()}
        assert calc.costs == costs
        assert calc.rows == cost_rows(s["model"], s["context"], batch=s["batch"], dtype=s["dtype"])
    calc.settings = {**calc.settings, "model": "GPT-2 small"}  # what the page sends
    assert calc.rows[0][1].startswith("GPT-2 small") and calc.report() == cost_report(
        "GPT-2 small", 2**20, batch=8, dtype="float32"
    )


def test_calculator_looks_the_model_up_once_per_change(monkeypatch):
    """The model's name becomes a configuration once, in the widget; the costs and rows take the config."""
    import book.widgets.calculator
    import mha.costs.counts
    import mha.costs.report

    calc, lookups = cost_calculator(), []
    for module in (book.widgets.calculator, mha.costs.report, mha.costs.counts):
        real = module.get_config

        def counting(model, *args, _real=real, **kwargs):
            if isinstance(model, str):
                lookups.append(model)
            return _real(model, *args, **kwargs)

        monkeypatch.setattr(module, "get_config", counting)
    calc.update(model="Gemma 3 27B")
    calc.update(context=1000)
    assert lookups == ["Gemma 3 27B", "Gemma 3 27B"]


def test_calculator_display_bundle_has_the_static_front_end():
    calc = cost_calculator("Mistral 7B", context=8192)
    bundle, _ = calc._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == calc.model_id
    page = bundle["text/html"]
    assert page.startswith('<div class="mha-calculator"><script type="application/json">')
    config = json.loads(figure_roots(page)[0].json)
    assert config == calculator_config(calc.settings)
    assert (
        bundle["text/plain"] == "CostCalculator(model='Mistral 7B', context=8192, batch=1, dtype='bfloat16')"
    )


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: cost_calculator("T5-base"), ValueError),
        (lambda: cost_calculator("GPT-5"), KeyError),
        (lambda: cost_calculator(context=0), ValueError),
        (lambda: cost_calculator(batch=2**13), ValueError),
        (lambda: cost_calculator().update(dtype="int3"), ValueError),
        (lambda: cost_calculator().update(layers=3), KeyError),
    ],
)
def test_calculator_rejects_bad_arguments(call, error):
    with pytest.raises(error):
        call()


def test_calculator_from_the_page_with_a_bad_value_goes_back():
    calc = cost_calculator()
    before = dict(calc.settings)
    with pytest.raises(ValueError, match="context must be an int"):
        calc.settings = {**before, "context": 0}
    assert calc.settings == before
