"""Draw ``docs/images/layers.png`` (the package's units in their layers, and who imports whom)
and ``docs/images/eager_layers.png`` (the same for the modules of the eager engine).

The layers and the import graph are the ones ``tests/test_import_circles.py`` checks, read from
the source (imports inside functions count), so the pictures show the package as it is::

    python docs/layers_picture.py
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "layers"
EAGER_OUT = ROOT / "docs" / "images" / "eager_layers"


def _checks():
    path = ROOT / "tests" / "test_import_circles.py"
    spec = importlib.util.spec_from_file_location("import_checks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def picture():
    """A ``graphviz.Digraph``: one row per layer (bottom layer at the bottom), an arrow from
    each unit to each unit it imports."""
    checks = _checks()
    edges = checks.unit_graph(checks.import_graph())
    labels = {"(package)": "tinygrad_edu\n(__init__)"}
    return _draw("layers", checks.LAYERS, edges, labels)


def eager_picture():
    """The modules of ``tinygrad_edu/eager/`` in their layers (``EAGER_LAYERS``: core, nodes,
    engine, dispatch, Tensor, the public functions), an arrow for each import between them."""
    checks = _checks()
    prefix = "tinygrad_edu.eager"
    short = {prefix: "(eager)"}
    edges: dict = {}
    for module, targets in checks.import_graph().items():
        if module == prefix or module.startswith(prefix + "."):
            a = short.get(module, module.removeprefix(prefix + "."))
            edges[a] = {short.get(t, t.removeprefix(prefix + ".")) for t in targets
                        if t == prefix or t.startswith(prefix + ".")}  # fmt: skip
    labels = {"(eager)": "eager\n(__init__)"}
    return _draw("eager_layers", checks.EAGER_LAYERS, edges, labels)


def _draw(name, layers, edges, labels):
    sys.path.insert(0, str(ROOT))
    from tinygrad_edu.viz.style import new_graph  # noqa: PLC0415

    g = new_graph(name, rankdir="TB")
    g.attr(ranksep="0.6", nodesep="0.25")
    for k, layer in enumerate(layers):
        with g.subgraph(name=f"layer{k}") as row:
            row.attr(rank="same")
            for unit in layer:
                row.node(unit, labels.get(unit, unit), shape="box", style="rounded,filled",
                         fillcolor="#dbeafe", color="#1e40af")  # fmt: skip
    for a in sorted(edges):
        for b in sorted(edges[a]):
            g.edge(a, b, color="#64748b", arrowsize="0.6")
    return g


if __name__ == "__main__":
    print(picture().render(outfile=f"{OUT}.png", format="png", cleanup=True))
    print(eager_picture().render(outfile=f"{EAGER_OUT}.png", format="png", cleanup=True))
