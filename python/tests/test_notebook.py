"""The tutorial notebook (docs/tutorial-python.ipynb) runs: each code cell in order, in one namespace, as Jupyter
would (its asserts check the students' tutorial's worked numbers)."""
import json
import os


def test_tutorial_notebook_runs(source_dir):
    path = os.path.join(source_dir, "docs", "tutorial-python.ipynb")
    with open(path, encoding="utf-8") as f:
        notebook = json.load(f)
    namespace = {"__name__": "__main__"}
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert len(cells) >= 8
    for i, cell in enumerate(cells):
        source = "".join(cell["source"])
        exec(compile(source, f"{path}:cell {i}", "exec"), namespace)  # noqa: S102 - the repository's own notebook
