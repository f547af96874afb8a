"""Draw ``docs/images/layers.png``: the package's units in their layers, and who imports whom.

The layers and the import graph are the ones ``tests/test_import_circles.py`` checks, read from
the source (imports inside functions count), so the picture shows the package as it is::

    python docs/layers_picture.py
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "layers"


def _checks():
    path = ROOT / "tests" / "test_import_circles.py"
    spec = importlib.util.spec_from_file_location("import_checks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def picture():
    """A ``graphviz.Digraph``: one row per layer (bottom layer at the bottom), an arrow from
    each unit to each unit it imports."""
    sys.path.insert(0, str(ROOT))
    from tinygrad_edu.viz.style import new_graph  # noqa: PLC0415

    checks = _checks()
    edges = checks.unit_graph(checks.import_graph())
    g = new_graph("layers", rankdir="TB")
    g.attr(ranksep="0.6", nodesep="0.25")
    for k, layer in enumerate(checks.LAYERS):
        with g.subgraph(name=f"layer{k}") as row:
            row.attr(rank="same")
            for unit in layer:
                label = "tinygrad_edu\n(__init__)" if unit == "(package)" else unit
                row.node(unit, label, shape="box", style="rounded,filled", fillcolor="#dbeafe",
                         color="#1e40af")  # fmt: skip
    for a in sorted(edges):
        for b in sorted(edges[a]):
            g.edge(a, b, color="#64748b", arrowsize="0.6")
    return g


if __name__ == "__main__":
    print(picture().render(outfile=f"{OUT}.png", format="png", cleanup=True))
