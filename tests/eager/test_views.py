"""Views against PyTorch: a view knows its base, replays its history when the base is changed
in place, and an in-place op through a view is recorded on the base as ``CopySlices``
(NOTE [Views and version counters] in ``eager/dispatch.py``).

Each program runs on both libraries; values, gradients (first and second) and the names of
the ``grad_fn`` chains must agree. PyTorch runs with view replay on, so that a view whose
base changed says ``SliceBackward0`` (the view op replayed) where it would by default say
``AsStridedBackward0``; the replay is what this engine does.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch  # noqa: E402  (installed by make test)

import tinygrad_edu as tg
from tests.compare.test_against_torch import TG, TORCH, _layout
from tests.opinfo import ROWS as CASES
from tests.opinfo import names_of
from tinygrad_edu.eager import dispatch
from tinygrad_edu.ops import REGISTRY

A = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, 0.5]])

# Node names that differ from PyTorch's for reasons outside views: ``zero_`` is ``fill_``
# with 0 (FillBackward0, PyTorch's ZeroBackward0); ``copy_`` is ``setitem`` at ``...``
# (CopySlices, PyTorch's CopyBackwards).
_OUR_NAMES = {"ZeroBackward0": "FillBackward0", "CopyBackwards": "CopySlices"}


@pytest.fixture(autouse=True)
def _torch_view_replay():
    torch._C._set_view_replay_enabled(True)
    yield
    torch._C._set_view_replay_enabled(False)


def _grad(L, out, inputs, create_graph=False):
    fn = torch.autograd.grad if L is torch else tg.grad
    return fn(out, inputs, allow_unused=True, create_graph=create_graph)


def _chain(t, depth=4) -> list:
    """The names along a ``grad_fn`` chain, each with its next_functions' names."""
    out, node = [], t.grad_fn
    while node is not None and depth:
        name = type(node).__name__ if hasattr(node, "next_functions") else None
        name = node.name() if hasattr(node, "sequence_nr") else _OUR_NAMES.get(name, name)
        nexts = [None if n is None else n.name() if hasattr(n, "sequence_nr")
                 else _OUR_NAMES.get(type(n).__name__, type(n).__name__)
                 for n, _ in node.next_functions]  # fmt: skip
        out.append((name, nexts))
        node, depth = node.next_functions[0][0] if node.next_functions else None, depth - 1
    return out


def _plain(value):
    if value is None:
        return None
    return np.array(value.detach().numpy(), copy=True)


def _compare(program):
    """Run ``program(L)`` -> dict of tensors/names/gradients on both; compare everything."""
    ours, theirs = program(tg), program(torch)
    assert ours.keys() == theirs.keys()
    for key in theirs:
        a, b = ours[key], theirs[key]
        if key.startswith("names"):
            assert a == b, f"{key}: {a} here, {b} in PyTorch"
        elif isinstance(b, tuple | list):
            assert len(a) == len(b), key
            for i, (x, y) in enumerate(zip(a, b)):
                assert (x is None) == (y is None), f"{key}[{i}]: {x} here, {y} in PyTorch"
                if y is not None:
                    np.testing.assert_allclose(_plain(x), _plain(y), rtol=1e-12, err_msg=key)
        else:
            np.testing.assert_allclose(_plain(a), _plain(b), rtol=1e-12, err_msg=key)


VIEWS = {
    "slice": lambda b: b[:, 1:],
    "select": lambda b: b[0],
    "select_dim1": lambda b: b.select(1, 2),
    "select_of_t": lambda b: b.t().select(0, -1),  # a view of a view
    "unsqueeze": lambda b: b.unsqueeze(0),
    "t": lambda b: b.t(),
    "T": lambda b: b.T,
    "mT": lambda b: b.mT,
    "transpose": lambda b: b.transpose(0, 1),
    "permute": lambda b: b.permute(1, 0),
    "view": lambda b: b.view(6),
    "reshape": lambda b: b.reshape(3, 2),
    "flatten": lambda b: b.flatten(),
    "squeeze": lambda b: b.unsqueeze(1).squeeze(1),  # a view of a view
    "chain": lambda b: b[:, 1:].t()[1:],
}


def _setitem(v, w):
    v[0] = 5.0 if w is None else w


INPLACE = {
    "mul_": lambda v, w: v.mul_(3.0 if w is None else w),
    "relu_": lambda v, w: v.relu_(),
    "add_": lambda v, w: v.add_(1.0 if w is None else w),
    "setitem": _setitem,
    "zero_": lambda v, w: v.zero_(),
    "copy_": lambda v, w: v.copy_(v.detach() * 0 + 2.0 if w is None else w),
    "exp_": lambda v, w: v.exp_(),  # saves its output
    "div_": lambda v, w: v.div_(1.5 if w is None else w),  # saves its inputs
}


def _program(view, inplace, where, other, base="clone"):
    def program(L):
        a = L.tensor(A, requires_grad=True)
        w = L.tensor(np.array(0.7), requires_grad=True) if other else None
        b = a.clone() if base == "clone" else L.tensor(A * 0.5)
        v = VIEWS[view](b)
        INPLACE[inplace](b if where == "base" else v, w)
        out = {"b": b, "v": v, "names_b": _chain(b), "names_v": _chain(v)}
        loss = (v * v * v).sum() + (b * b).sum()
        leaves = [t for t in (a, w) if t is not None]
        out["grads"] = _grad(L, loss, leaves)
        return out

    return program


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("inplace", INPLACE)
@pytest.mark.parametrize("where", ["base", "view"])
def test_inplace_on_the_base_or_through_the_view_matches_pytorch(view, inplace, where):
    _compare(_program(view, inplace, where, other=False))


@pytest.mark.parametrize("view", ["slice", "select", "t", "view", "chain"])
@pytest.mark.parametrize("inplace", ["mul_", "add_", "setitem", "copy_", "div_"])
def test_inplace_through_a_view_with_a_tensor_that_requires_grad(view, inplace):
    _compare(_program(view, inplace, "view", other=True))


@pytest.mark.parametrize("inplace", ["mul_", "add_", "setitem", "copy_"])
def test_inplace_through_a_view_of_a_base_that_does_not_require_grad(inplace):
    """The base joins the graph: CopySlices with no edge for the base's old value."""
    _compare(_program("slice", inplace, "view", other=True, base="plain"))


def test_the_issues_example():
    a = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a.clone()
    v = b[:2]
    b.mul_(3)
    (v * v).sum().backward()
    assert a.grad.tolist() == [18.0, 36.0, 0.0]  # was [6, 12, 0]: the old gradient path
    assert v.grad_fn.name() == "SliceBackward0"
    assert v.grad_fn.next_functions[0][0].name() == "MulBackward0"


def test_the_issues_other_example_row_setitem():
    def program(L):
        a = L.tensor(A, requires_grad=True)
        b = a * 1
        row = b[0]
        row[1] = 5
        loss = (b * b).sum() + (row * 3).sum()
        return {"b": b, "row": row, "names_b": _chain(b), "names_row": _chain(row),
                "grads": _grad(L, loss, [a])}  # fmt: skip

    _compare(program)


def test_two_views_of_one_base_and_double_inplace():
    def program(L):
        a = L.tensor(A, requires_grad=True)
        w = L.tensor(np.array(0.7), requires_grad=True)
        b = a * 2
        v1, v2 = b[0], b.t()[1]
        v1.mul_(w)
        v2.add_(w)  # v1 is stale now: it replays from the new base
        v1.mul_(v1 * 1)  # twice through one view, reading itself
        b.sin_()
        loss = (v1 * v2.sum()).sum() + (b * b).sum()
        return {"b": b, "v1": v1, "v2": v2, "names_b": _chain(b, 6), "names_v1": _chain(v1),
                "names_v2": _chain(v2), "grads": _grad(L, loss, [a, w])}  # fmt: skip

    _compare(program)


def test_a_view_of_a_view_changed_in_place():
    def program(L):
        a = L.tensor(A, requires_grad=True)
        b = a * 3
        v = b[:, 1:].t()
        e = v[1]
        e.mul_(e * 1)
        loss = (b * b).sum() + v.sum() * 2 + e.sum()
        return {"b": b, "v": v, "e": e, "names_b": _chain(b), "names_v": _chain(v),
                "names_e": _chain(e), "grads": _grad(L, loss, [a])}  # fmt: skip

    _compare(program)


def test_second_derivatives_through_copyslices():
    def program(L):
        a = L.tensor(A, requires_grad=True)
        w = L.tensor(np.array(0.7), requires_grad=True)
        b = a * a
        b[1:, :2].mul_(w * a[0, 0])
        b.t()[0].mul_(b.t()[1] * 1)
        loss = (b * b * b).sum()
        ga, gw = _grad(L, loss, [a, w], create_graph=True)
        second = _grad(L, (ga * ga).sum() + gw * gw, [a, w])
        return {"b": b, "names_b": _chain(b), "first": (ga, gw), "second": second}

    _compare(program)


def test_backward_twice_through_copyslices_needs_retain_graph():
    for L in (tg, torch):
        a = L.tensor(A, requires_grad=True)
        b = a * 1
        b[0].mul_(b[1] * 1)
        loss = (b * b).sum()
        loss.backward(retain_graph=True)
        first = a.grad.clone()
        loss.backward()
        np.testing.assert_allclose(a.grad.numpy(), 2 * first.numpy())
        with pytest.raises(RuntimeError, match="retain_graph=True"):
            loss.backward()


def test_copyslices_gradient_against_central_differences():
    def f(x):
        b = x * 1
        b[:, 1:].mul_(x[0, 0])
        b.t()[2].sin_()
        return (b * b).sum()

    x = tg.tensor(A, requires_grad=True)
    f(x).backward()
    eps, numeric = 1e-6, np.zeros_like(A)
    for i in np.ndindex(A.shape):
        d = np.zeros_like(A)
        d[i] = eps
        numeric[i] = (f(tg.tensor(A + d)).item() - f(tg.tensor(A - d)).item()) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


def _errors(L, make):
    try:
        make(L)
    except RuntimeError as e:
        return str(e)
    return None


_MULTI = "is a view and is being modified inplace. This view is the output of a function that"


@pytest.mark.parametrize("name, make, words", [
    ("view of a leaf", lambda L: L.tensor(A, requires_grad=True).t().relu_(),
     "a view of a leaf Variable that requires grad is being used in an in-place operation"),
    ("setitem through a view of a leaf", lambda L: _setitem(L.tensor(A, requires_grad=True)[0],
                                                            None),
     "a view of a leaf Variable that requires grad is being used in an in-place operation"),
    ("a view made a leaf that requires grad", lambda L: L.zeros(3)[:2].requires_grad_().mul_(2),
     "a view of a leaf Variable that requires grad is being used in an in-place operation"),
    ("split", lambda L: (L.tensor(A, requires_grad=True) * 1).split(1)[0].mul_(2),
     "Output 0 of Split is a view and is being modified inplace"),
    ("chunk, then a view", lambda L: (L.tensor(A, requires_grad=True) * 1).chunk(2)[1][0].add_(1),
     _MULTI),
    ("unbind", lambda L: _setitem((L.tensor(A, requires_grad=True) * 1).unbind(1)[2], None),
     _MULTI),
    ("expand", lambda L: (L.tensor(A[0], requires_grad=True) * 1).expand(2, 3).mul_(2),
     "more than one element of the written-to tensor refers to a single memory location"),
])  # fmt: skip
def test_refused_as_in_pytorch(name, make, words):
    ours, theirs = _errors(tg, make), _errors(torch, make)
    assert theirs is not None and words in theirs
    assert ours is not None and words in ours, f"{name}: {ours}"


def test_a_view_made_under_no_grad_is_refused_with_pytorchs_words():
    for L in (tg, torch):
        b = L.tensor(A, requires_grad=True) * 1
        with L.no_grad():
            v = b[0]
        with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is bein"):
            v.mul_(2)
        np.testing.assert_array_equal(b.detach().numpy(), A)  # nothing changed
        with L.no_grad():
            v.mul_(2)  # both inside no_grad: allowed
        assert b[0, 0].item() == 2.0


@pytest.mark.parametrize("change", ["with grad", "under no_grad", "base outside the graph"])
def test_a_view_made_under_no_grad_whose_base_changed_cannot_be_used_with_grad(change):
    words = "A view was created in no_grad mode and its base or another view of its base has"
    for L in (tg, torch):
        if change == "base outside the graph":
            b = L.zeros(2, 3, dtype=L.float64)
        else:
            b = L.tensor(A, requires_grad=True) * 1
        with L.no_grad():
            v = b[0]
        if change == "under no_grad":
            with L.no_grad():
                b.mul_(2)
        else:
            b.mul_(L.tensor(np.array(2.0), requires_grad=True))
        with pytest.raises(RuntimeError, match=words):
            v.grad_fn  # noqa: B018  (PyTorch raises also where v is used in an op; not here)
        with L.no_grad():
            assert (v * 2).tolist() == (A[0] * 4 if change != "base outside the graph" else
                                        A[0] * 0).tolist()  # fmt: skip


def test_a_view_made_under_no_grad_of_a_plain_tensor_changed_with_a_grad_value_is_refused():
    for L in (tg, torch):
        b = L.zeros(3, dtype=L.float64)
        with L.no_grad():
            v = b[:2]
        with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is bein"):
            v.mul_(L.tensor(np.array(2.0), requires_grad=True))
        v.mul_(2)  # nothing to record: allowed


def test_a_saved_value_changed_through_a_view_is_an_error_at_backward():
    for L in (tg, torch):
        a = L.tensor(A, requires_grad=True)
        b = a * 1
        y = (b * b).sum()  # saves b
        b[0].mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace|modified by an in-place"):
            y.backward()


def test_a_failed_inplace_through_a_view_changes_nothing():
    a = tg.tensor(A, requires_grad=True)
    b = a * 1
    v = b[0]
    fn, version = b.grad_fn, b._version
    with pytest.raises(tg.ShapeError):
        v.add_(tg.ones(2, 3))  # broadcasts to a bigger shape: refused
    assert b.grad_fn is fn and b._version == version
    np.testing.assert_array_equal(b.detach().numpy(), A)


def test_pieces_of_split_can_be_changed_where_nothing_is_recorded():
    for L in (tg, torch):
        b = L.tensor(A)
        b.split(1)[1].mul_(2)  # nothing requires grad
        x = L.tensor(A, requires_grad=True) * 1
        with L.no_grad():
            x.unbind(0)[0].zero_()
        assert b[1, 0].item() == -8.0 and x[0, 1].item() == 0.0


def test_plain_ops_on_views_keep_no_record_when_no_grad_is_involved():
    b = tg.tensor(A)
    v = b[0]
    v.mul_(2)
    assert not b.requires_grad and b.grad_fn is None and v.grad_fn is None
    assert b[0, 0].item() == 2.0


# -- which ops return views: declared on the op, checked against PyTorch ----------------------
# Ops with no public PyTorch counterpart to compare with, each with its reason.
NO_TORCH = {
    "avg_pool2d_grad": "an adjoint of avg_pool2d, used only by its derivative rule",
    "conv2d_input_grad": "an adjoint of conv2d, used only by its derivative rule",
    "conv2d_weight_grad": "an adjoint of conv2d, used only by its derivative rule",
    "embedding_grad": "an adjoint of embedding, used only by its derivative rule",
    "gather_grad": "an adjoint of gather, used only by its derivative rule",
    "getitem_grad": "an adjoint of getitem, used only by its derivative rule",
    "max_pool2d_grad": "an adjoint of max_pool2d, used only by its derivative rule",
    "max_pool2d_select": "a step of max_pool2d's derivative rule",
    "nll_loss_grad": "an adjoint of nll_loss, used only by its derivative rule",
    "nll_log_softmax_grad": "nll_loss(log_softmax)'s gradient in one op, put in by the "
    "symbolic fusion pass (tests/symbolic/test_fuse.py): always a new array",
    "relu_grad": "relu's derivative rule",
    "sum_to": "the reduction that undoes broadcasting; no PyTorch name",
    "softmax_cross_entropy": "CSE599W's fused loss; no PyTorch name",
    "lstm_layer": "nn.LSTM's kernel (PyTorch's is internal); its output is always new",
    "index_select_grad": "an adjoint of index_select, used only by its derivative rule",
    "masked_select_grad": "an adjoint of masked_select, used only by its derivative rule",
    "unfold_grad": "an adjoint of unfold, used only by its derivative rule",
    "inv": "its rows make the matrix inside the call (torch_torchops.py): always a new result",
    "det": "its rows make the matrix inside the call (torch_torchops.py): always a new result",
    "isclose": "its rows pass arrays, not tensors (torch_torchops.py): a new bool tensor",
    "multinomial": "random: draws new indices (tests/ops/test_random.py)",
    "random_fill": "random, in place only (normal_, uniform_ ...): it writes into its input",
    "sample": "random: draws new values from its input's parameters (tests/ops/test_random.py)",
    "fill_constant": "a factory: it has no input to share memory with",
    "gaussian_random": "a factory: it has no input to share memory with",
    "uniform_random": "a factory: it has no input to share memory with",
    "numel": "returns a Python number, not a tensor",
    "fill": "in place only (fill_, zero_): it writes into its input",
    "setitem": "in place only (x[index] = value): it writes into its input",
    "zeros_like": "the differential table compares only its shape and dtype (_shaped_only)",
    "ones_like": "the differential table compares only its shape and dtype (_shaped_only)",
    "masked_scatter_grad": "an adjoint of masked_scatter, used only by its derivative rule",
    "histogram_bin_edges": "a step of histogram (its bin_edges): always a new array",
    "entr": "torch.special only (tests/ops/test_missing_names2.py): always a new result",
    "i1": "torch.special only (tests/ops/test_missing_names2.py): always a new result",
}
# Ops whose public names are written by hand (not by the surface table): the names to run.
PUBLIC = {
    "conv2d": ("F.conv2d",), "max_pool2d": ("F.max_pool2d",), "avg_pool2d": ("F.avg_pool2d",),
    "pad": ("F.pad",), "batch_norm": ("F.batch_norm",), "layer_norm": ("F.layer_norm",),
    "embedding": ("F.embedding",), "one_hot": ("F.one_hot",), "nll_loss": ("F.nll_loss",),
    "clamp_tensor": ("tg.clamp", "Tensor.clamp"), "max_dim": ("Tensor.max", "tg.max"),
    "min_dim": ("Tensor.min", "tg.min"),
    "binary_cross_entropy": ("F.binary_cross_entropy",),
    "binary_cross_entropy_with_logits": ("F.binary_cross_entropy_with_logits",),
    "solve": ("tg.linalg.solve",),
}  # fmt: skip


def _cases_of(op_name):
    """(case, public name) pairs of the differential table that call ``op_name`` directly:
    its method and function names (not the in-place ones)."""
    names = set(PUBLIC.get(op_name) or names_of(op_name))
    names = {n for n in names if not n.endswith("_") or n.endswith("__")}
    names -= {n for n in names if n.startswith("Tensor.__i")}
    return [(case, n) for case in CASES for n in case.names if n in names]


def _shares(L, out, x) -> bool:
    if L is torch:
        return out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    return np.shares_memory(out._data, x._data)


def _call(case, lib, name, inputs, args, extra):
    param = inspect.signature(case.call).parameters.get("args")
    if param is not None and param.kind is not param.VAR_POSITIONAL:  # rows taking them by name
        return case.call(lib.module, name, *inputs, args=args, **extra)
    return case.call(lib.module, name, *inputs, *args, **extra)


def _sharing(op_name):
    """For each example of the op's rows: (PyTorch shares, ours shares, ours shares the
    version counter), with the tensor ``x`` the op got as input 0."""
    found = []
    for case, name in _cases_of(op_name):
        for example in case.examples:
            rng = np.random.default_rng(0)
            arrays = [spec.array(rng) for spec in example.specs]
            if not arrays:
                continue
            if any(a.size == 0 for a in arrays):
                continue  # nothing to share: an empty tensor has no memory of its own
            row = []
            for lib in (TORCH, TG):
                inputs = [_layout(lib.leaf(a, False), s) for a, s in zip(arrays, example.specs)]
                extra = {k: lib.convert(v) for k, v in example.extra.items() if k != "args"}
                args = lib.convert(tuple(example.extra.get("args", ())))
                try:
                    out = _call(case, lib, name, inputs, args, extra)
                except Exception:  # noqa: BLE001  (an example of an error: nothing to share)
                    row = None
                    break
                if isinstance(out, tuple | list):
                    out = out[0]
                if not hasattr(out, "shape") or not hasattr(out, "requires_grad"):
                    row = None
                    break
                if out is inputs[0] or out.numel() == 0:  # x.float() of a float32 x is x
                    row = None
                    break
                row.append((_shares(lib.module, out, inputs[0]), out, inputs[0]))
            if row is not None:
                (theirs, _, _), (ours, out, x) = row
                found.append((name, theirs, ours, out._counter is x._counter))
    return found


def check_view_declaration(op) -> list:
    """What is wrong with ``op``'s ``view`` declaration, compared with PyTorch (empty: all
    agree): each call's output shares memory with its input exactly when PyTorch's does, it
    shares the version counter exactly when it shares memory, and the op is declared a view
    exactly when some call of it returns one."""
    problems, any_view = [], False
    found = _sharing(op.name)
    if not found:
        return [f"{op.name}: no row in the per-op table (tests/opinfo) to run"]
    for name, theirs, ours, counter in found:
        any_view |= ours
        if ours != theirs:
            problems.append(f"{name}: shares memory here: {ours}, in PyTorch: {theirs}")
        if counter != ours:
            problems.append(f"{name}: shares memory {ours} but the version counter {counter}")
    if any_view != op.view:
        problems.append(f"{op.name}: declared view = {op.view}, but a view here: {any_view}")
    return problems


@pytest.mark.filterwarnings("ignore")  # the table's examples of edge cases warn (var of 1)
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_an_op_returns_a_view_exactly_when_pytorch_does(name):
    if name in NO_TORCH:
        assert not REGISTRY[name].view, f"{name} is declared a view but has no comparison"
        return
    problems = check_view_declaration(REGISTRY[name])
    assert not problems, "\n".join(problems)


def test_the_dispatchers_view_ops_come_from_the_declarations():
    assert dispatch._VIEW_OPS == {n for n, op in REGISTRY.items() if op.view}
    assert {"reshape", "getitem", "transpose", "broadcast_to"} <= dispatch._VIEW_OPS


@pytest.mark.parametrize("name, wrong", [("exp", True), ("transpose", False)])
def test_a_wrong_declaration_fails_the_check(name, wrong, monkeypatch):
    op = REGISTRY[name]
    assert not check_view_declaration(op)
    monkeypatch.setattr(type(op), "view", wrong)
    assert check_view_declaration(op)


def test_an_undeclared_op_whose_array_function_returns_a_view_fails_the_check(monkeypatch):
    """numpy's ``flip`` returns a view, PyTorch's copies: an op like it, undeclared, shares
    memory (and not the counter) where PyTorch does not."""
    op = REGISTRY["neg"]
    monkeypatch.setattr(type(op), "forward", lambda self, xp, x: xp.flip(x))
    problems = check_view_declaration(op)
    assert any("shares memory here: True, in PyTorch: False" in p for p in problems)
    assert any("version counter False" in p for p in problems)


@pytest.mark.parametrize("where", ["base", "view", "plain"])
def test_a_retained_gradient_follows_the_new_history_and_hooks_stay(where):
    """retain_grad() moves to the node an in-place op (or a view's replay) gives the tensor,
    as in PyTorch; a hook registered before stays on the old node and sees the old value's
    gradient."""

    def program(L):
        a = L.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
        b = a * 1
        v = b[:2]
        kept = b if where == "plain" else v
        kept.retain_grad()
        seen = []
        b.register_hook(lambda g: seen.append(g * 1))
        (b if where in ("base", "plain") else v).mul_(3)
        (v * v).sum().backward()
        return {"kept_grad": kept.grad, "a_grad": a.grad, "hooked": seen}

    _compare(program)


def test_a_view_of_a_tensor_outside_the_graph_joins_it_when_its_base_does():
    def program(L):
        z = L.zeros(2, 3, dtype=L.float64)
        u = z.t()[1:]
        w = L.tensor(np.array(2.0), requires_grad=True)
        z.add_(w)
        return {"z": z, "u": u, "names_u": _chain(u), "grads": _grad(L, (u * u).sum(), [w])}

    _compare(program)


# -- node names of the transposes, and select as a view ---------------------------------------
TRANSPOSES = {
    "x.t()": lambda L, x: x.t(),
    "torch.t(x)": lambda L, x: L.t(x),
    "x.T": lambda L, x: x.T,
    "x.mT": lambda L, x: x.mT,
    "x.transpose(0, 1)": lambda L, x: x.transpose(0, 1),
    "x.swapaxes(0, 1)": lambda L, x: x.swapaxes(0, 1),
    "x.permute(1, 0)": lambda L, x: x.permute(1, 0),
}


@pytest.mark.parametrize(("call", "shape"), [(c, (2, 3)) for c in TRANSPOSES]
                         + [(c, (3,)) for c in ("x.t()", "torch.t(x)", "x.T")])  # fmt: skip
def test_the_transposes_node_names_are_pytorchs(call, shape):
    names = []
    for L in (tg, torch):
        x = L.tensor(np.arange(6.0)[: int(np.prod(shape))].reshape(shape), requires_grad=True)
        with warnings.catch_warnings():  # PyTorch deprecates x.T of 1-D (warned once only)
            warnings.simplefilter("ignore", UserWarning)
            y = TRANSPOSES[call](L, x)
        names.append(y.grad_fn.name())
    assert names[0] == names[1], f"{call}: {names[0]} here, {names[1]} in PyTorch"


def test_t_and_transpose_of_three_dims_differ_as_in_pytorch():
    for L in (tg, torch):
        x = L.tensor(np.zeros((2, 3, 4)), requires_grad=True)
        assert x.mT.grad_fn.name() == "TransposeBackward0"
        assert x.permute(2, 0, 1).grad_fn.name() == "PermuteBackward0"
        with pytest.raises(RuntimeError if L is torch else ValueError, match="2"):
            x.t()


SELECTS = {
    "1-D x.select(0, 1)": ((4,), lambda L, b: b.select(0, 1)),
    "1-D torch.select(x, 0, -1)": ((4,), lambda L, b: L.select(b, 0, -1)),
    "2-D x.select(0, 1)": ((2, 3), lambda L, b: b.select(0, 1)),
    "2-D x.select(1, 2)": ((2, 3), lambda L, b: b.select(1, 2)),
    "2-D torch.select(x, -1, 0)": ((2, 3), lambda L, b: L.select(b, -1, 0)),
}


@pytest.mark.parametrize("case", SELECTS)
def test_select_is_a_view_in_every_case_as_in_pytorch(case):
    shape, select = SELECTS[case]
    found = {}
    for L in (tg, torch):
        a = L.tensor(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape), requires_grad=True)
        b = a * 1.0  # a non-leaf base, so an in-place change through the view is recorded
        v = select(L, b)
        assert v._is_view() and v._base is b, f"{case}: not a view of its input"
        assert _shares(L, v, b)
        name = v.grad_fn.name()
        version = b._version
        v.mul_(3.0)  # through the view: the base changes and both see one version counter
        assert b._version == v._version == version + 1
        loss = (b * b).sum() + (v * v * v).sum()
        (grad,) = _grad(L, loss, [a])
        found[L] = (name, _plain(b), _plain(v), _plain(grad))
    ours, theirs = found[tg], found[torch]
    assert ours[0] == theirs[0], f"{case}: {ours[0]} here, {theirs[0]} in PyTorch"
    for x, y in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(x, y, rtol=1e-12, err_msg=case)


def test_select_out_of_range_names_the_dim_and_size():
    with pytest.raises(IndexError, match=r"select: index 4 is out of range for dim 0 of size 4"):
        tg.arange(4.0).select(0, 4)
