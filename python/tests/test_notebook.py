"""Lab 1's notebook (labs/01-small-models-at-once/lab.ipynb) runs from top to bottom with nbclient, in
this interpreter, and ends with the lab's verdict line after the run's answer."""
import json
import os
import re
import sys

import pytest

nbformat = pytest.importorskip("nbformat", reason="executing the lab's notebook needs nbformat")
nbclient = pytest.importorskip("nbclient", reason="executing the lab's notebook needs nbclient")
pytest.importorskip("ipykernel", reason="executing the lab's notebook needs ipykernel (its kernel)")
pytest.importorskip("matplotlib", reason="the lab's notebook draws its figure with matplotlib")

LAB = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "labs", "01-small-models-at-once"))


@pytest.fixture
def this_interpreter_as_python3(tmp_path, monkeypatch):
    """Makes the kernel "python3" this interpreter, the one with multifit installed. Jupyter takes the
    first kernel spec of that name on its path, and a user's own (~/.local/share/jupyter/kernels) comes
    before this environment's, so it may start another Python; a spec in a folder put first on
    JUPYTER_PATH, naming sys.executable, wins over both."""
    spec = tmp_path / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (the tests' interpreter)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("JUPYTER_PATH")])))


def _text(cell):
    return "".join(output.get("text", "") for output in cell.outputs if output.output_type == "stream")


def test_lab_notebook_runs_to_its_verdict(this_interpreter_as_python3):
    notebook = nbformat.read(os.path.join(LAB, "lab.ipynb"), as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": LAB}})  # run in the lab's folder
    client.execute()  # raises CellExecutionError where a cell raised

    cells = {cell.get("id"): cell for cell in notebook.cells}
    answer = _text(cells["answer"])
    # the answer's second half is per model for streams and processes, per pack for packed
    assert re.search(r"(sooner than serial|serial finished first).*; each (model trained|pack took)", answer), answer
    verdict = _text(cells["verdict"])
    assert re.search(r"^(held|did not hold on this machine): streams finished the 32 tiny models in", verdict,
                     re.MULTILINE), verdict
