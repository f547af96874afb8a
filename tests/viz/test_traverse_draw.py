import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_edu.symbolic import Executor, Variable, gradients
from tinygrad_edu.viz.examples import seed, seed_inputs

from .conftest import needs_dot, reference_seed_grads


def _edges(src):
    return re.findall(r"^\s*(\w+) -> (\w+)", src, flags=re.M)


def _node_ids(src):
    return re.findall(r"^\s*(\w+) \[", src, flags=re.M)


# -- symbolic form --------------------------------------------------------------------------
def test_symbolic_seed_records(seed_symbolic):
    E, grads, vs, _ = seed_symbolic
    data = viz.symbolic_graph([E])
    tensors = [n for n in data.nodes if n.kind == "tensor"]
    ops = [n for n in data.nodes if n.kind == "op"]
    # A, B, C, A+B, D, A+C, E: 7 tensors; add, mul, add, matmul: 4 junctions
    assert sorted(n.label for n in tensors) == sorted(["A", "B", "C", "(A+B)", "D", "(A+C)", "E"])
    assert sorted(n.info["op"] for n in ops) == ["add", "add", "matmul", "mul"]
    # every binary op: 2 edges in, 1 out
    assert len(data.edges) == 3 * len(ops)
    mm = next(n for n in ops if n.info["op"] == "matmul")
    roles = sorted(e.label for e in data.edges if e.dst == mm.id)
    assert roles == ["left", "right"]
    assert data.outputs == [data.id_of(E)]


def test_symbolic_seed_dot_with_gradients(seed_symbolic):
    E, grads, vs, feed = seed_symbolic
    dot = viz.draw_symbolic([E, *grads], feed=feed)
    src = dot.source
    # two adjoint sums: A and C are each used twice
    assert src.count("Σ partial adjoints · ") == 2
    assert "∂E/∂A" in src and "∂E/∂C" in src and "∂E/∂D" in src
    assert "dashed" in src  # gradient nodes are dashed
    # values shown: A's gradient value as computed by an Executor
    dA = Executor([grads[0]]).run(feed)[0]
    assert np.allclose(dA, reference_seed_grads(seed_inputs())["A"], atol=1e-5)
    for line in viz.format_array(dA):
        assert line in src.replace("&#x27;", "'")


def test_symbolic_fan_out_two_edges():
    a = Variable("a", shape=(3,))
    src = viz.draw_symbolic(a * a, legend=False).source
    a_id = next(
        i for i, lab in re.findall(r"^\s*(\w+) \[label=<.*?<B>(.*?)</B>", src, re.M) if lab == "a"
    )
    assert _edges(src).count((a_id, "op0")) == 2


def test_symbolic_higher_order_marks_gradient_of_gradient():
    x = Variable("x", shape=())
    y = x * x * x
    (dx,) = gradients(y, [x])
    (ddx,) = gradients(dx, [x])
    data = viz.symbolic_graph([ddx])
    grads = [n for n in data.nodes if n.kind == "tensor" and n.info["gradient"]]
    fwd = [n for n in data.nodes if n.kind == "tensor" and not n.info["gradient"]]
    assert len(grads) > len(fwd) >= 3  # x, x*x, x*x*x at least
    assert data.node(data.outputs[0]).ref is ddx
    src = viz.draw_symbolic(ddx).source
    assert src.count("->") == len(data.edges)


def test_symbolic_labels_for_results():
    E_parts = seed_inputs()
    vs = {k: Variable(k, shape=v.shape) for k, v in E_parts.items()}
    E = seed(**vs)
    dA, dB, dC = gradients(E, list(vs.values()))
    src = viz.draw_symbolic([E, dA, dB, dC], labels={dB: "∂E/∂B"}).source
    assert "∂E/∂(A+B) = ∂E/∂B" in src


def test_symbolic_empty_and_wrong_type():
    with pytest.raises(ValueError, match="no nodes"):
        viz.draw_symbolic([])
    with pytest.raises(TypeError, match="Node, an eager Tensor or a PyTorch tensor"):
        viz.draw(3.0)


# -- eager form -----------------------------------------------------------------------------
def test_eager_seed_records(seed_eager):
    E, leaves = seed_eager
    data = viz.eager_graph(E)
    names = [n.label for n in data.nodes if n.kind == "backward"]
    assert sorted(names) == ["AddBackward0", "AddBackward0", "MmBackward0", "MulBackward0"]
    acc = [n for n in data.nodes if n.kind == "accumulate"]
    leaf = [n for n in data.nodes if n.kind == "leaf"]
    assert len(acc) == len(leaf) == 3 and sorted(n.label for n in leaf) == ["A", "B", "C"]
    # every next_functions entry is an edge, +1 output edge, +1 edge per leaf
    n_next = sum(len(n.ref.next_functions) for n in data.nodes if n.kind == "backward")
    assert len(data.edges) == n_next + 1 + 3
    labels = sorted(e.label for e in data.edges if e.kind == "backward")
    assert labels == ["input 0"] * 4 + ["input 1"] * 4


def test_eager_seed_dot(seed_eager):
    E, leaves = seed_eager
    E.backward(tg.ones_like(E))
    src = viz.draw(E).source  # dispatches to draw_eager
    assert src.count("MmBackward0") >= 1 and src.count("AccumulateGrad") == 3 + 1  # +legend
    assert ".grad" in src
    for line in viz.format_array(leaves["A"].grad):
        assert line in src.replace("&#x27;", "'")
    ref = reference_seed_grads(seed_inputs())
    assert np.allclose(leaves["A"].grad.numpy(), ref["A"], atol=1e-5)
    assert "penwidth=2" in src  # the output is highlighted


def test_eager_names_mapping_and_saved():
    w = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = tg.tensor([[1.0], [1.0]])
    y = (w @ x).exp().sum()
    src = viz.draw_eager(y, params={"weight": w}, show_saved=True).source
    assert "<B>weight</B>" in src
    assert "saved input 1: 2×1" in src  # matmul keeps x for w's gradient
    assert "saved output: 2×1" in src  # exp keeps its output


def test_eager_fan_out_two_edges():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    data = viz.eager_graph(a * a)
    mul = next(n for n in data.nodes if n.label == "MulBackward0")
    acc = next(n for n in data.nodes if n.kind == "accumulate")
    assert [(e.src, e.dst, e.label) for e in data.edges if e.src == mul.id] == [
        (mul.id, acc.id, "input 0"),
        (mul.id, acc.id, "input 1"),
    ]


def test_eager_create_graph_highlight():
    x = tg.tensor(2.0, requires_grad=True)
    x.name = "x"
    y = x * x * x
    (dx,) = tg.grad(y, [x], create_graph=True)
    data = viz.eager_graph([y, dx])  # several outputs: detected automatically
    after = [n for n in data.nodes if n.info.get("after")]
    before = [n for n in data.nodes if n.kind == "backward" and not n.info.get("after")]
    assert after and before
    seq_y = max(n.ref.sequence_nr for n in before)
    assert all(n.ref.sequence_nr > seq_y for n in after)
    assert "recorded by backward" in viz.draw_eager([y, dx]).source
    # explicitly: nothing after the very last node
    last = max(n.ref.sequence_nr for n in data.nodes if n.kind in ("backward", "accumulate"))
    assert not any(
        n.info.get("after") for n in viz.eager_graph([y, dx], highlight_after=last).nodes
    )


def test_eager_multi_output():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    u, v = (a * 2).sum(), a.exp().sum()
    data = viz.eager_graph([u, v])
    assert [n.label for n in data.nodes if n.kind == "output"] == ["output 0", "output 1"]
    assert len([n for n in data.nodes if n.kind == "accumulate"]) == 1  # a shared


def test_eager_leaf_error_message():
    a = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="has no grad_fn.*requires_grad=True"):
        viz.draw(a)
    with tg.no_grad():
        b = a * 2
    with pytest.raises(ValueError, match="no_grad"):
        viz.draw_eager(b)


# -- large graphs ---------------------------------------------------------------------------
def test_collapse_long_chain_both_forms():
    x = tg.tensor([0.1], requires_grad=True)
    y = x
    for _ in range(50):
        y = y.tanh()
    full = viz.eager_graph(y.sum())
    small = viz.collapse(full, 20)
    assert len(full.nodes) == 54 and len(small.nodes) < 10
    assert any("TanhBackward0 ×" in n.label for n in small.nodes)
    xs = Variable("x", shape=(1,))
    z = xs
    for _ in range(50):
        z = z.exp()
    sym = viz.collapse(viz.symbolic_graph([z.sum()]), 20)
    assert any(n.label == "exp ×50" for n in sym.nodes)


def test_elision_when_still_too_big():
    x = Variable("x", shape=(2,))
    terms = [x * float(k) for k in range(30)]
    y = terms[0]
    for t in terms[1:]:
        y = y + t
    data = viz.collapse(viz.symbolic_graph([y]), 25)
    assert len(data.nodes) == 25
    el = data.node("elided")
    assert el.info["hidden"] > 0
    src = viz.draw_symbolic(y, max_nodes=25).source
    assert "more nodes" in src


# -- determinism ----------------------------------------------------------------------------
def test_same_dot_twice_and_across_builds():
    def build_both():
        return viz.draw_both(seed, **seed_inputs()).source

    def build_sym():
        vs = {k: Variable(k, shape=(2, 2)) for k in "ABC"}
        E = seed(**vs)
        return viz.draw_symbolic([E, *gradients(E, list(vs.values()))]).source

    def build_eager():
        leaves = {k: tg.tensor(v, requires_grad=True) for k, v in seed_inputs().items()}
        return viz.draw_eager(seed(**leaves), names=leaves, show_saved=True).source

    for build in (build_both, build_sym, build_eager):
        first = build()
        Variable("unrelated") * 2  # shift the global counters between builds
        tg.tensor(1.0, requires_grad=True) * 2
        assert build() == first


def test_draw_both_structure():
    dot = viz.draw_both(seed, **seed_inputs())
    src = dot.source
    assert "cluster_symbolic" in src and "cluster_eager" in src
    ids = _node_ids(src)
    assert len(ids) == len(set(ids))
    assert any(i.startswith("s_") for i in ids) and any(i.startswith("e_") for i in ids)
    for name in "ABC":
        assert f"<B>{name}</B>" in src and f"∂E/∂{name}" in src


def test_doctests_of_viz_modules():
    import doctest
    import importlib

    for name in ("draw", "style", "symbolic_form", "eager_form", "run_engines", "examples",
                 "stepper", "stepper.record", "traverse", "records", "blocks"):  # fmt: skip
        mod = importlib.import_module(f"tinygrad_edu.viz.{name}")
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, mod.__name__


@needs_dot
def test_svg_parses_and_png_renders(tmp_path, seed_eager):
    from PIL import Image

    E, _ = seed_eager
    dot = viz.draw(E)
    png = viz.render(dot, tmp_path / "e.png")
    svg = viz.render(dot, tmp_path / "e", format="svg")
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    with Image.open(png) as im:
        assert im.width > 100 and im.height > 100
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert not (tmp_path / "e.gv").exists()
