"""One naming scheme for drawings, the stepper and the lessons; pictures that fit 900 px."""

import re

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_edu.symbolic import Variable, gradients, optimize, tanh
from tinygrad_edu.viz.draw import MAX_WIDTH_PX, natural_width
from tinygrad_edu.viz.examples import seed, seed_inputs
from tinygrad_edu.viz.style import MAX_HEIGHT_PX, fit_scale, natural_size

from .conftest import needs_dot


def _seed_graph():
    A, B, C = (tg.tensor(v, requires_grad=True) for v in seed_inputs().values())
    D = (A + B) * C
    E = D @ (A + C)
    L = E.sum()
    return L, {"A": A, "B": B, "C": C, "D": D, "E": E, "L": L}


def test_node_names_follow_one_rule():
    L, names = _seed_graph()
    by_node = viz.node_names(L, names=names)
    got = sorted(by_node.values())
    assert got == ["AccumulateGrad (A)", "AccumulateGrad (B)", "AccumulateGrad (C)",
                   "AddBackward0 #1", "AddBackward0 #2", "MmBackward0 (E)", "MulBackward0 (D)",
                   "SumBackward0 (L)"]  # fmt: skip
    # numbered in the order the code made them: #1 is A + B, #2 is A + C
    add1 = next(n for n, k in by_node.items() if k == "AddBackward0 #1")
    add2 = next(n for n, k in by_node.items() if k == "AddBackward0 #2")
    assert add1.sequence_nr < add2.sequence_nr
    assert names["D"].grad_fn.next_functions[0][0] is add1


def test_stepper_drawing_and_captions_use_the_same_names():
    L, names = _seed_graph()
    expected = set(viz.node_names(L, names=names).values())
    stepper = viz.BackwardStepper.record(L, names=names)
    titles = {f.title for f in stepper.frames} - {"start", "GraphRoot", "done"}
    assert titles == expected
    caption = " ".join(stepper.caption(i) for i in range(len(stepper)))
    assert "AddBackward0 #2" in caption and "AddBackward0 2" not in caption
    src = viz.draw(L, names=names).source
    for name in expected:
        assert name in src, name


def test_symbolic_names_are_readable():
    t = Variable("t")
    f = tanh(t)
    f.name = "f"
    (d1,) = gradients(f, [t])
    (d2,) = gradients(d1, [t])
    data = viz.symbolic_graph([f, d1, d2], labels={d1: "f'", d2: "f''"})
    titles = [r.info.get("grad_of") or r.label for r in data.nodes if r.kind == "tensor"]
    assert not [t for t in titles if re.search(r"\w#\d+", t)], titles  # no op#seq names
    # each gradient names the output of its own gradients() call: no "y" that is not there
    grad_titles = {r.info["grad_of"] for r in data.nodes if r.info.get("grad_of")}
    assert "∂f/∂t" in grad_titles and "∂f'/∂t" in grad_titles
    assert not any("∂y" in g for g in grad_titles)
    src = viz.draw([f, d1, d2]).source
    assert "shape ?" not in src


def test_optimised_graph_names_and_labels():
    t = Variable("t")
    f = tanh(t)
    f.name = "f"
    (d1,) = gradients(f, [t])
    (d2,) = gradients(d1, [t])
    outs = optimize([f, d1, d2])
    labels = {outs[2]: "f''"}
    data = viz.symbolic_graph(outs, labels=labels)
    names = [r.label for r in data.nodes if r.kind == "tensor"]
    assert "(-f-f)" in names and "f''" in names
    assert "f''" in viz.draw(outs, labels=labels).source.replace("&#x27;", "'")


def test_matmul_edges_say_left_and_right():
    A, B = Variable("A", shape=(2, 2)), Variable("B", shape=(2, 2))
    roles = sorted(e.label for e in viz.symbolic_graph([A @ B]).edges if e.label)
    assert roles == ["left", "right"]


@needs_dot
def test_draw_both_picks_the_layout_that_shrinks_least():
    def wide(x):  # many boxes side by side, few rows: stacking shrinks it less
        return sum((x * float(k)).exp() for k in range(1, 9))

    for fn, inputs, stacks in ((seed, seed_inputs(), False), (wide, {"x": np.ones(3)}, True)):
        g = viz.draw_both(fn, **inputs)
        other = viz.draw_both(fn, stack=not stacks, **inputs)
        assert ("style=invis" in g.source) is stacks
        assert fit_scale(natural_size(g)) > fit_scale(natural_size(other))


@needs_dot
def test_a_tall_drawing_fits_the_900_box():
    x = Variable("x", shape=(3,))
    y = x
    for _ in range(30):  # a long chain, drawn uncollapsed: 30 rows
        y = (y * 2.0).exp()
    g = viz.draw(y, max_nodes=None)
    assert natural_size(g)[1] > MAX_HEIGHT_PX  # laid out taller ...
    svg = g.pipe(format="svg").decode()
    tag = re.search(r"<svg[^>]*>", svg).group(0)
    size = [float(re.search(rf'{a}="([\d.]+)pt"', tag).group(1)) / 0.75
            for a in ("width", "height")]
    assert max(size) <= MAX_HEIGHT_PX + 1  # ... and scaled to fit


@needs_dot
def test_every_drawing_fits_the_column():
    x = Variable("x", shape=(3,))
    wide = sum((x * float(k)).exp() for k in range(1, 14))  # many boxes side by side
    g = viz.draw(wide)
    assert natural_width(g) > MAX_WIDTH_PX  # laid out wider ...
    svg = g.pipe(format="svg").decode()
    width_pt = float(re.search(r'<svg[^>]*?width="([\d.]+)pt"', svg).group(1))
    assert width_pt / 0.75 <= MAX_WIDTH_PX + 1  # ... and scaled to fit
    assert np.isfinite(width_pt)


def _titles(g) -> set[str]:
    return set(re.findall(r"<B>([^<]*)</B>", g.source))


def test_gradient_labels_use_one_notation():
    from tinygrad_edu.symbolic import Program, cond, program_guard

    g = viz.draw_both(seed, **seed_inputs())
    titles = _titles(g)
    # the two terms of ∂E/∂C, each named after the use of C it comes through (C is used in
    # D = (A+B)⊙C and in A+C): one notation for both, no "partial adjoint of ∂E/∂C"
    assert {"∂E/∂C via D", "∂E/∂(A+C)", "∂E/∂C"} <= titles, titles
    assert not any("partial adjoint of" in t for t in titles), titles
    assert "partial adjoint · 2×2" in g.source  # the legend's words, under the title
    flow, startup = Program(), Program()
    with program_guard(flow, startup):
        z = Variable("z", shape=(), dtype="float64")
        c = cond(z > 0, lambda u: u * u, lambda u: -u, z)
        c.name = "c"
        (dc,) = gradients(c, [z])
    titles = _titles(viz.draw([c, dc]))
    # inside the gradient branches too, every gradient names what it differentiates
    assert not any(t.startswith("∂/") for t in titles), titles
    assert {"∂c/∂z", "∂c/∂z, term 1", "∂c/∂z, term 2"} <= titles, titles  # z * z: two terms
    assert not any(t.startswith(("gradient for", "partial of")) for t in titles), titles


def test_terms_of_a_sum_name_the_use_they_come_through():
    x, w = Variable("x", shape=(3,)), Variable("w", shape=(3,))
    y = (x * w + x.exp()).sum()
    y.name = "y"
    gx, gw = gradients(y, [x, w])
    titles = _titles(viz.draw([y, gx, gw], labels={gx: "∂y/∂x"}))
    assert {"∂y/∂x via (x*w)", "∂y/∂x via exp(x)"} <= titles, titles
