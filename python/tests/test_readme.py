"""The README's Python example runs as printed (from the repository's root, as it says)."""
import os
import re
import runpy

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_the_readmes_example_runs(tmp_path, monkeypatch, capsys):
    readme = open(os.path.join(ROOT, "README.md")).read()
    block = re.search(r"<!-- python-example -->\s*```python\n(.*?)```", readme, re.S)
    assert block, "README.md has no python-example block"
    script = tmp_path / "example.py"
    script.write_text(block.group(1))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(script))
    out = capsys.readouterr().out
    assert re.search("sooner than serial|serial finished first", out) and "Epoch 2/2" in out
