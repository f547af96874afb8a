"""Shared by the notebook generator scripts: collect markdown and code cells, write the
notebook. Run a generator, then execute the notebook in place:

    .venv/bin/python notebooks/_build/make_NN.py
    .venv/bin/jupyter nbconvert --to notebook --execute --inplace notebooks/NN_*.ipynb
"""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOKS = Path(__file__).resolve().parent.parent


class Lesson:
    """The cells of one lesson, in order."""

    def __init__(self):
        self.cells = []

    def md(self, text: str) -> None:
        self.cells.append(new_markdown_cell(text.strip("\n")))

    def code(self, text: str) -> None:
        self.cells.append(new_code_cell(text.strip("\n")))

    def write(self, name: str) -> Path:
        nb = new_notebook(cells=self.cells)
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}  # fmt: skip
        nb.metadata["language_info"] = {"name": "python"}
        path = NOTEBOOKS / name
        nbformat.write(nb, path)
        return path
