"""Drawing PyTorch's own grad_fn graphs in our op-as-node style (viz.draw(torch_tensor))."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
import torch

import tinygrad_edu as tg  # noqa: E402
from tinygrad_edu import viz  # noqa: E402
from tinygrad_edu.viz.draw import FORMS  # noqa: E402
from tinygrad_edu.viz.examples import seed, seed_inputs  # noqa: E402

from .conftest import needs_dot  # noqa: E402
from .torch_cases import CASES, cnn_case, mlp_case, seed_case, walk  # noqa: E402


def _kinds(data, kind):
    return [n for n in data.nodes if n.kind == kind]


def _src(dot):
    return dot.source.replace("&#x27;", "'")


@pytest.mark.parametrize("case", sorted(CASES))
def test_records_match_pytorchs_graph(case):
    """Every node, edge, edge label and leaf of PyTorch's graph is drawn, each once."""
    out, leaves = CASES[case]()
    nodes, edges = walk(out.grad_fn)
    data = viz.eager_graph(out, names=leaves)
    drawn = _kinds(data, "backward") + _kinds(data, "accumulate")
    assert Counter(n.label for n in drawn) == Counter(type(n).__name__ for n in nodes)
    assert {id(n.ref.node) for n in drawn} == {id(n) for n in nodes}
    accs = [n for n in nodes if type(n).__name__ == "AccumulateGrad"]
    leaf_recs = _kinds(data, "leaf")
    assert len(leaf_recs) == len(accs)
    by_name = {r.label: r for r in leaf_recs}
    assert set(by_name) == set(leaves)  # every leaf named from the mapping
    for name, t in leaves.items():
        assert by_name[name].ref.tensor is t
        assert by_name[name].info["shape"] == tuple(t.shape)
        assert by_name[name].info["dtype"] == "float32"
    backward_edges = [e for e in data.edges if e.kind == "backward"]
    assert len(backward_edges) == len(edges)
    # labels: "input i" by position in next_functions (None entries keep their position)
    want = Counter()
    for node in nodes:
        nf = node.next_functions
        for pos, (nxt, nr) in enumerate(nf):
            if nxt is not None and len(nf) > 1:
                want[f"input {pos}" + (f" → out {nr}" if nr else "")] += 1
            elif nxt is not None:
                want[None] += 1
    assert Counter(e.label for e in backward_edges) == want
    assert len([e for e in data.edges if e.kind == "accumulate"]) == len(accs)
    assert len([e for e in data.edges if e.kind == "output"]) == 1
    out_rec = data.node(data.outputs[0])
    assert out_rec.info["shape"] == () and out_rec.info["grad_fn"].node is out.grad_fn


def test_seed_same_structure_as_our_engine(seed_eager):
    """The seed example drawn from PyTorch and from our engine: the same boxes and arrows."""
    E_ours, ours_leaves = seed_eager
    torch_leaves = {k: torch.tensor(v, requires_grad=True) for k, v in seed_inputs().items()}
    E_torch = seed(**torch_leaves)
    ours = viz.eager_graph(E_ours, names=ours_leaves)
    theirs = viz.eager_graph(E_torch, names={**torch_leaves, "E": E_torch})

    def structure(data):
        labels = {n.id: n.label for n in data.nodes}  # the same names: PyTorch's
        edges = Counter((labels[e.src], labels[e.dst], e.label) for e in data.edges)
        return Counter(labels.values()), edges

    assert structure(ours) == structure(theirs)
    assert sum(structure(theirs)[1].values()) == 4 * 2 + 3 + 1  # next edges, leaves, output
    assert theirs.node(theirs.outputs[0]).info["grad_fn"].node is E_torch.grad_fn


def test_seed_drawing_shows_grads_and_saved_values():
    out, leaves = seed_case()
    out.backward(retain_graph=True)
    src = _src(viz.draw(out, names=leaves, show_saved=True))
    for name, t in leaves.items():
        assert f"<B>{name}</B>" in src
        for line in viz.format_array(t.grad.numpy()):  # .grad as computed by PyTorch
            assert line in src
    # MulBackward0 saved both factors (PyTorch's names: self, other); C is the 'other'
    assert "saved self: 2×2" in src and "saved other: 2×2" in src
    for line in viz.format_array(leaves["C"].detach().numpy()):
        assert line in src
    assert "saved alpha = 1" in src  # AddBackward0 keeps its scalar factor
    assert "saved mat2: 2×2" in src  # MmBackward0 keeps both matrices
    assert "saved values freed" not in src
    # drawn from PyTorch's node, the same colours as ours
    assert src.count('fillcolor="#dcfce7"') == 3  # AccumulateGrad green
    assert "penwidth=2" in src  # the output highlighted


def test_freed_saved_values_are_marked():
    out, leaves = seed_case()
    out.backward()  # frees the saved tensors
    src = _src(viz.draw(out, names=leaves, show_saved=True))
    assert src.count("saved values freed (retain_graph=False)") == 2  # MulBackward0, MmBackward0
    assert "keeps shape of self: 2×2" in src  # sizes stay readable


def test_mlp_drawing():
    loss, params = mlp_case()
    loss.backward(retain_graph=True)
    dot = viz.draw(loss, params=params, names={"loss": loss})
    src = _src(dot)
    assert "<B>loss</B>" in src and "grad_fn=NllLossBackward0" in src
    for name in ("0.weight", "0.bias", "2.weight", "2.bias"):
        assert f"<B>{name}</B>" in src
    data = viz.eager_graph(loss, {**params, "loss": loss})
    names = Counter(n.label for n in data.nodes if n.kind in ("backward", "accumulate"))
    assert names["AddmmBackward0"] == 2 and names["TBackward0"] == 2
    assert names["AccumulateGrad"] == 4 and sum(names.values()) == 11
    # the first Linear's input needs no gradient: its AddmmBackward0 has edges 0 and 2 only
    first = [
        n for n in data.nodes if n.label == "AddmmBackward0" and n.ref.next_functions[1][0] is None
    ]
    assert len(first) == 1
    labels = sorted(e.label for e in data.edges if e.src == first[0].id)
    assert labels == ["input 0", "input 2"]
    # PyTorch's int64 ignore_index shows with its sign
    assert "saved ignore_index = -100" in _src(viz.draw(loss, show_saved=True))


def test_cnn_drawing():
    loss, params = cnn_case()
    data = viz.eager_graph(loss, params)
    conv = next(n for n in data.nodes if n.label == "ConvolutionBackward0")
    out_edges = [e for e in data.edges if e.src == conv.id]
    assert sorted(e.label for e in out_edges) == ["input 1", "input 2"]  # no edge for the image
    targets = {data.node(e.dst).kind for e in out_edges}
    assert targets == {"accumulate"}
    leaf = {r.label: r.info["shape"] for r in _kinds(data, "leaf")}
    assert leaf == {"0.weight": (4, 1, 3, 3), "0.bias": (4,), "4.weight": (10, 64), "4.bias": (10,)}
    assert len(_kinds(data, "backward")) == 8 and len(_kinds(data, "accumulate")) == 4
    src = _src(viz.draw(loss, params=params, show_saved=True))
    assert "saved weight: 4×1×3×3" in src and "saved stride = (1, 1)" in src
    assert "MaxPool2DWithIndicesBackward0" in src and "saved result1: 2×4×4×4" in src


def test_custom_function_and_view_nodes():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x.view(2, 1)).sum()
    data = viz.eager_graph(y, {"x": x})
    assert [n.label for n in data.nodes if n.kind == "backward"] == [
        "SumBackward0",
        "CubeBackward",
        "ViewBackward0",
    ]


def test_same_dot_every_time():
    def build():
        out, leaves = CASES["split"]()
        return viz.draw(out, names=leaves, show_saved=True).source

    first = build()
    torch.ones(1, requires_grad=True) * 2  # shift PyTorch's sequence numbers
    assert build() == first


def test_deep_chain_is_walked_iteratively_and_collapsed():
    x = torch.tensor([0.1], requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0001
    full = viz.eager_graph(y.sum())
    assert len(full.nodes) == 3000 + 4  # output, SumBackward0, 3000 MulBackward0, acc, leaf
    small = viz.collapse(full, 20)
    assert any(n.label == "MulBackward0 ×3000" for n in small.nodes)
    assert "MulBackward0 ×3000" in viz.draw(y.sum()).source


def test_errors_name_the_problem():
    leaf = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"has no grad_fn.*requires_grad=True"):
        viz.draw(leaf)
    with torch.no_grad():
        y = leaf * 2
    with pytest.raises(ValueError, match=r"torch\.no_grad\(\)"):
        viz.draw(y)
    ours = tg.tensor([1.0], requires_grad=True) * 2
    with pytest.raises(TypeError, match="mix PyTorch tensors"):
        viz.draw_eager([ours, leaf * 2])
    with pytest.raises(TypeError, match="one kind"):
        viz.draw([ours, leaf * 2])


def test_multi_output_and_highlight():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    u, v = (a * 2).sum(), a.exp().sum()
    data = viz.eager_graph([u, v])
    assert [n.label for n in data.nodes if n.kind == "output"] == ["output 0", "output 1"]
    assert len(_kinds(data, "accumulate")) == 1  # a is shared
    # v's nodes were made after u's: marked, but never an AccumulateGrad (2**64 - 1)
    after = {n.label for n in data.nodes if n.info.get("after")}
    assert after == {"SumBackward0", "ExpBackward0"}


def test_draw_both_with_pytorch():
    ins = seed_inputs()
    dot = viz.draw_both(seed, forms=("eager", "torch"), **ins)
    src = _src(dot)
    assert "cluster_eager" in src and "cluster_torch" in src and "cluster_symbolic" not in src
    assert "PyTorch: its grad_fn graph" in src and "MmBackward0" in src
    ids = re.findall(r"^\s*(\w+) \[", dot.source, flags=re.M)
    assert len(ids) == len(set(ids)) and any(i.startswith("p_") for i in ids)
    # both panels show the same gradients: PyTorch's equal ours
    leaves = {k: torch.tensor(v, requires_grad=True) for k, v in ins.items()}
    seed(**leaves).sum().backward()
    for t in leaves.values():
        for line in viz.format_array(t.grad.numpy()):
            assert src.count(line) >= 2
    three = viz.draw_both(seed, forms=("symbolic", "eager", "torch"), **ins).source
    assert all(f"cluster_{f}" in three for f in FORMS)
    assert "<B>E</B>" in three.split("cluster_torch")[1]  # the output keeps its name
    with pytest.raises(ValueError, match="forms="):
        viz.draw_both(seed, forms=("eager", "tf"), **ins)
    with pytest.raises(ValueError, match="forms="):
        viz.draw_both(seed, forms=(), **ins)


@needs_dot
@pytest.mark.parametrize("case", ["seed", "mlp", "cnn"])
def test_png_renders(tmp_path, case):
    from PIL import Image

    out, leaves = CASES[case]()
    out.backward(retain_graph=True)
    png = viz.render(viz.draw(out, params=leaves), tmp_path / case)
    with Image.open(png) as im:
        assert im.width > 200 and im.height > 300
        # not blank: the boxes' fill colours are there
        colours = {c for _, c in im.convert("RGB").getcolors(1 << 20)}
    assert (0xDC, 0xFC, 0xE7) in colours  # AccumulateGrad green
    assert (0xE0, 0xE7, 0xFF) in colours  # backward op blue


def test_leaf_grad_values_come_from_pytorch():
    out, leaves = seed_case()
    out.backward(retain_graph=True)
    data = viz.eager_graph(out, leaves)
    for r in _kinds(data, "leaf"):
        np.testing.assert_array_equal(r.ref.grad, leaves[r.label].grad.numpy())


def test_doctests_of_the_pytorch_modules():
    import doctest
    import importlib

    for name in ("torch_graph", "order"):
        mod = importlib.import_module(f"tinygrad_edu.viz.{name}")
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, mod.__name__
