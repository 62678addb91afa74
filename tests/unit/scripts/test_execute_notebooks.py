"""scripts/execute_notebooks.py: which notebooks it runs, and how: in place, in the portable environment,
without widget state or timings (the kernel itself is replaced by a stand-in: a real run takes minutes)."""

import nbformat

from scripts import execute_notebooks


def test_no_argument_runs_every_chapter_in_name_order_and_arguments_run_those(monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(execute_notebooks, "execute", lambda path: ran.append(path) or 1.25)
    execute_notebooks.main([])
    assert ran == sorted(execute_notebooks.CHAPTERS.glob("*.ipynb")) and len(ran) > 5
    ran.clear()
    execute_notebooks.main(["b.ipynb", "a.ipynb"])
    assert [p.name for p in ran] == ["b.ipynb", "a.ipynb"]
    assert capsys.readouterr().out.endswith("b.ipynb: executed in 1.2 s\na.ipynb: executed in 1.2 s\n")


def test_a_notebook_runs_in_place_in_the_portable_environment(monkeypatch, tmp_path):
    seen = {}

    class Client:  # nbclient.NotebookClient's part that execute uses
        def __init__(self, nb, **options):
            seen["options"], self.nb = options, nb

        def execute(self, env):
            seen["env"] = env
            self.nb.cells[0].outputs = [nbformat.v4.new_output("stream", text="ran\n")]

    monkeypatch.setattr(execute_notebooks, "NotebookClient", Client)
    cell = nbformat.v4.new_code_cell("print('ran')", metadata={"execution": {"iopub.execute_input": "t"}})
    path = tmp_path / "c.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell], metadata={"widgets": {"state": {}}}), path)
    assert execute_notebooks.execute(path) >= 0
    assert seen["env"].items() >= execute_notebooks.PORTABLE.items()
    assert seen["options"]["store_widget_state"] is False and seen["options"]["record_timing"] is False
    assert seen["options"]["resources"] == {"metadata": {"path": str(tmp_path)}}
    written = nbformat.read(path, as_version=4)
    assert written.cells[0].outputs[0].text == "ran\n" and "execution" not in written.cells[0].metadata
    assert "widgets" not in written.metadata
    assert written.metadata["mha"] == {"executed_with": execute_notebooks.PORTABLE}
