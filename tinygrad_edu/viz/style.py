"""How drawings look, and writing them out: colours, fonts, box and legend labels, a new
Graphviz graph, and rendering it to a file with Graphviz's ``dot``.

Every drawing module (:mod:`.symbolic_form`, :mod:`.eager_form`, the stepper, the memory plan
...) takes its look from here, so one change of colour or font changes them all.

>>> box_label("x", "2×3  float32").startswith("<<TABLE")
True
"""

from __future__ import annotations

import html
import os
import re
import shutil

import numpy as np  # display only: arrays are formatted as text

__all__ = [
    "FONT", "MONO", "MAX_WIDTH_PX", "MAX_HEIGHT_PX", "DEFAULT_MAX_NODES", "COLORS", "EDGE_COLORS",
    "SYMBOLIC_LEGEND", "EAGER_LEGEND", "INSTALL_HINT", "DotNotFoundError", "graphviz_module",
    "esc", "to_numpy", "format_array", "shape_text", "join_parts", "box_label", "legend_table",
    "new_graph", "finish", "same_rank", "natural_width", "natural_size", "fit_scale",
    "check_dot", "render",
]  # fmt: skip

FONT = "Helvetica,Arial,sans-serif"
# NOTE [Pictures fit a 900 px column]: every drawing is laid out at its natural size and, when
# wider or taller than this, scaled down to fit a 900x900 box, a laptop's window (Graphviz's
# ``size``: 72 points an inch, a browser's CSS pixel is 0.75 point). Layouts that would shrink
# much (two forms side by side) stack instead; long graphs collapse (``max_nodes``).
MAX_WIDTH_PX = 900
MAX_HEIGHT_PX = 900
_SIZE = f"{MAX_WIDTH_PX * 0.75 / 72:.3f},{MAX_HEIGHT_PX * 0.75 / 72:.3f}"
MONO = "DejaVu Sans Mono,Menlo,Consolas,monospace"
DEFAULT_MAX_NODES = 80

# fill, border
COLORS = {
    "tensor": ("#dbeafe", "#1e40af"),
    "variable": ("#bfdbfe", "#1e3a8a"),
    "constant": ("#f1f5f9", "#64748b"),
    "gradient": ("#ffedd5", "#c2410c"),
    "adjoint_sum": ("#fde68a", "#b45309"),
    "backward": ("#e0e7ff", "#3730a3"),
    "accumulate": ("#dcfce7", "#15803d"),
    "leaf": ("#bfdbfe", "#1e3a8a"),
    "output": ("#fef08a", "#a16207"),
    "after": ("#fed7aa", "#c2410c"),
    "elision": ("#f8fafc", "#94a3b8"),
    "module": ("#ede9fe", "#6d28d9"),
    "cluster": ("#f8fafc", "#8b5cf6"),
}
EDGE_COLORS = {
    "forward": "#334155",
    "gradient": "#c2410c",
    "backward": "#3730a3",
    "accumulate": "#15803d",
    "output": "#a16207",
    "block": "#7c3aed",
}

INSTALL_HINT = (
    "Graphviz's `dot` program is needed to render drawings and was not found on PATH. "
    "Install it: `apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS), "
    "or `conda install graphviz`. The DOT text is still available as `graph.source`."
)


class DotNotFoundError(RuntimeError):
    """Graphviz's ``dot`` executable is missing; the message says how to install it."""


def graphviz_module():
    try:
        import graphviz  # noqa: PLC0415
    except ImportError:
        raise ImportError(
            'drawing needs the `graphviz` Python package: pip install "tinygrad_edu[viz]" '
            "(and Graphviz's `dot` program: apt-get/brew/conda install graphviz)"
        ) from None
    return graphviz


# -- text -----------------------------------------------------------------------------------
def esc(text) -> str:
    return html.escape(str(text), quote=True)


def to_numpy(value):
    from ..backend import to_device  # noqa: PLC0415

    data = getattr(value, "_data", value) if not isinstance(value, np.ndarray) else value
    if hasattr(data, "shape") and not isinstance(data, np.ndarray):
        data = to_device(data, "cpu")
    return np.asarray(data)


def format_array(value, max_elements: int = 9) -> list[str]:
    """Lines of text for a small array (rounded to 3 significant digits), or a summary.

    >>> format_array(np.array([[1.0, 2.5], [0.0, -1.0]]))
    ['[[ 1.   2.5]', ' [ 0.  -1. ]]']
    >>> format_array(np.arange(100.0))
    ['mean 49.5, range [0, 99]']
    """
    a = to_numpy(value)
    if a.size == 0:
        return ["(empty)"]
    if a.size <= max_elements and a.ndim <= 2:
        if a.ndim == 0:
            return [f"{float(a):.4g}"]
        text = np.array2string(
            a.astype(np.float64), precision=3, suppress_small=True, separator=" ", max_line_width=60
        )
        return text.splitlines()
    return [f"mean {float(a.mean()):.3g}, range [{float(a.min()):.3g}, {float(a.max()):.3g}]"]


def shape_text(shape, dtype=None) -> str | None:
    """``2×3  float32``; an unknown shape is left out (None when nothing is known)."""
    parts = []
    if shape is not None:
        parts.append("×".join(str(d) for d in shape) if len(shape) else "scalar")
    if dtype:
        parts.append(str(dtype))
    return "  ".join(parts) or None


def join_parts(*parts) -> str | None:
    """The parts that are not empty, joined by `` · `` (None when all are empty)."""
    return " · ".join(p for p in parts if p) or None


def box_label(title, sub=None, rows=(), title_size=14, bold=True) -> str:
    """An HTML-like label: a bold title, a small grey line, then monospace rows."""
    t = esc(title)
    parts = [
        f'<TR><TD><FONT POINT-SIZE="{title_size}">{f"<B>{t}</B>" if bold else t}</FONT></TD></TR>'
    ]
    if sub:
        parts.append(f'<TR><TD><FONT POINT-SIZE="10" COLOR="#475569">{esc(sub)}</FONT></TD></TR>')
    for caption, lines, color in rows:
        if caption:
            parts.append(
                f'<TR><TD><FONT POINT-SIZE="10" COLOR="{color}">{esc(caption)}</FONT></TD></TR>'
            )
        for line in lines:
            parts.append(
                f'<TR><TD><FONT FACE="{MONO}" POINT-SIZE="10" COLOR="{color}">'
                f"{esc(line)}</FONT></TD></TR>"
            )
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
        + "".join(parts)
        + "</TABLE>>"
    )


def legend_table(items, title=None) -> str:
    """An HTML-like table of colour swatches and their meaning."""
    cells = []
    for text, (fill, border) in items:
        cells.append(
            f'<TD BGCOLOR="{fill}" COLOR="{border}" BORDER="1" WIDTH="18"> </TD>'
            f'<TD ALIGN="LEFT"><FONT POINT-SIZE="11">{esc(text)}</FONT></TD>'
        )
    head = (
        (
            f'<TR><TD COLSPAN="{2 * len(cells)}"><FONT POINT-SIZE="16"><B>{esc(title)}</B>'
            "</FONT></TD></TR>"
        )
        if title
        else ""
    )
    return (
        '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="4">'
        + head
        + "<TR>"
        + "".join(cells)
        + "</TR></TABLE>>"
    )


SYMBOLIC_LEGEND = [
    ("input Variable", COLORS["variable"]),
    ("tensor (forward)", COLORS["tensor"]),
    ("gradient node", COLORS["gradient"]),
    ("Σ partial adjoints", COLORS["adjoint_sum"]),
    ("○ op: arrows in = its inputs", ("#ffffff", "#334155")),
]
EAGER_LEGEND = [
    ("output", COLORS["output"]),
    ("backward op", COLORS["backward"]),
    ("AccumulateGrad", COLORS["accumulate"]),
    ("leaf tensor (.grad)", COLORS["leaf"]),
]


def new_graph(name="G", rankdir="TB"):
    gv = graphviz_module()
    g = gv.Digraph(name)
    g.attr(rankdir=rankdir, fontname=FONT, nodesep="0.3", ranksep="0.35", newrank="true")
    g.graph_attr["size"] = _SIZE  # NOTE [Pictures fit a 900 px column]
    g.attr("node", fontname=FONT, fontsize="12", margin="0.08,0.04")
    g.attr("edge", fontname=FONT, fontsize="10", arrowsize="0.7")
    return g


def finish(g, legend_label, title):
    if legend_label:
        g.attr(label=legend_label, labelloc="t", labeljust="c")
    elif title:
        g.attr(label=title, labelloc="t", fontsize="16")


def same_rank(g, ids) -> None:
    """Put ``ids`` on one row (the inputs of a drawing line up)."""
    if len(ids) > 1:
        with g.subgraph() as s:
            s.attr(rank="same")
            for i in ids:
                s.node(i)


def natural_size(g) -> tuple[float, float]:
    """The width and height in CSS pixels that ``g`` has before it is scaled to fit (one
    ``dot`` run)."""
    unsized = g.copy()
    unsized.graph_attr.pop("size", None)
    svg = unsized.pipe(format="svg").decode("utf-8")
    tag = re.search(r"<svg[^>]*>", svg)
    size = [re.search(rf'{a}="([\d.]+)pt"', tag.group(0)) if tag else None
            for a in ("width", "height")]  # fmt: skip
    return tuple(float(m.group(1)) / 0.75 if m else 0.0 for m in size)


def natural_width(g) -> float:
    """The width in CSS pixels that ``g`` has before it is scaled to fit (one ``dot`` run)."""
    return natural_size(g)[0]


def fit_scale(size) -> float:
    """How much a picture of ``size`` (w, h in px) shrinks to fit the box (1: not at all)."""
    return min(1.0, MAX_WIDTH_PX / max(size[0], 1e-9), MAX_HEIGHT_PX / max(size[1], 1e-9))


# -- rendering ------------------------------------------------------------------------------
def check_dot() -> str:
    """The path of Graphviz's ``dot``; raises :class:`DotNotFoundError` with install help."""
    path = shutil.which("dot")
    if path is None:
        raise DotNotFoundError(INSTALL_HINT)
    return path


def render(graph, path, format: str = "png") -> str:  # noqa: A002 (graphviz's own name)
    """Write ``graph`` to ``path`` (the extension is added if missing); returns the file path.

    Checks for Graphviz's ``dot`` first, so a missing install is a clear error, not a blank
    image. ``format`` is any Graphviz output format: ``"png"``, ``"svg"``, ``"pdf"``.
    """
    check_dot()
    path = os.fspath(path)
    stem = path[: -len(format) - 1] if path.endswith("." + format) else path
    return graph.render(outfile=f"{stem}.{format}", format=format, cleanup=True)
