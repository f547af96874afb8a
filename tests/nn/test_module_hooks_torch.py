"""Module hooks and module errors against PyTorch: full backward hooks (what they see, what
they replace, inputs that do not require grad), the legacy ``register_backward_hook``, and
PyTorch's errors for buffers, forward hooks and list inputs."""

import warnings

import numpy as np
import pytest
import torch

import tinygrad_edu as tg

LIBS = [pytest.param(tg, id="tg"), pytest.param(torch, id="torch")]
X = np.array([[1.0, -2.0, 3.0], [0.5, 1.0, -1.0]])


def _np(t):
    return None if t is None else np.asarray(t.detach().numpy())


def _full_hooks(lib, x_grad, y_grad):
    seen, rec = [], []

    class Spy(lib.nn.Module):
        def forward(self, x, s, y):
            seen.append((x.requires_grad, y.requires_grad))
            return x * s + y * y

    m = Spy()
    m.register_full_backward_hook(lambda mod, gi, go: rec.append(([_np(g) for g in gi],
                                                                  [_np(g) for g in go])))
    x = lib.tensor(X, requires_grad=x_grad)
    y = lib.tensor(X * 2, requires_grad=y_grad)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = m(x, 3.0, y)
        (out * out).sum().backward() if out.requires_grad else None
    return seen, rec, [c.category for c in w], _np(x.grad), _np(y.grad)


def _same(a, b):
    if isinstance(a, list | tuple):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    elif a is None or b is None:
        assert a is b
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    else:
        assert a == b


@pytest.mark.parametrize("x_grad,y_grad", [(True, False), (True, True), (False, False)])
def test_full_backward_hook_sees_what_torchs_sees(x_grad, y_grad):
    ours, ref = _full_hooks(tg, x_grad, y_grad), _full_hooks(torch, x_grad, y_grad)
    _same(ours, ref)


def test_no_input_requires_grad_warns_and_allows_only_none():
    for lib in (tg, torch):
        lin = lib.nn.Linear(2, 2)
        rec = []
        lin.register_full_backward_hook(lambda mod, gi, go, rec=rec: rec.append(gi))
        with pytest.warns(UserWarning, match="Full backward hook is firing when gradients"):
            lin(lib.ones(1, 2)).sum().backward()
        assert rec == [(None,)]
        lin2 = lib.nn.Linear(2, 2)
        lin2.register_full_backward_hook(lambda mod, gi, go, lib=lib: (lib.ones(1, 2),))
        with pytest.raises(RuntimeError, match="should always return None or None for all"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lin2(lib.ones(1, 2)).sum().backward()


def _replace(lib):
    m = lib.nn.Tanh()
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10,))
    x = lib.tensor(X, requires_grad=True)
    (m(x) ** 2).sum().backward()
    return _np(x.grad)


def test_hooks_returning_tuples_replace_the_gradients():
    np.testing.assert_allclose(_replace(tg), _replace(torch), rtol=1e-12)


def _legacy(lib, make, leaf):
    m = make(lib)
    x0 = lib.tensor(X, requires_grad=True)
    x = x0 if leaf else x0 * 1
    rec = []

    def hook(mod, gi, go):
        rec.append(([_np(g) for g in gi], [_np(g) for g in go]))
        return tuple(None if g is None else g * 2 for g in gi)

    m.register_backward_hook(hook)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = m(x)
    (y * y).sum().backward()
    return rec, _np(x0.grad), [c.category for c in w]


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("make", [lambda lib: lib.nn.ReLU(), lambda lib: lib.nn.Tanh(),
                                  lambda lib: lib.nn.Sigmoid()], ids=["relu", "tanh", "sigmoid"])
def test_legacy_backward_hook_on_one_op_modules_matches_torch(make, leaf):
    ours, ref = _legacy(tg, make, leaf), _legacy(torch, make, leaf)
    _same(ours[:2], ref[:2])
    assert ours[2] == ref[2]  # FutureWarning for a leaf input (its AccumulateGrad), as torch


@pytest.mark.parametrize("lib", LIBS)
def test_legacy_and_full_hooks_do_not_mix(lib):
    m = lib.nn.ReLU()
    m.register_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        m.register_full_backward_hook(lambda *a: None)
    m2 = lib.nn.ReLU()
    m2.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        m2.register_backward_hook(lambda *a: None)


# -- errors --------------------------------------------------------------------------------
def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


def _with_buffer(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("running_mean", lib.zeros(2))
            self.x = 1

    return M()


def test_buffer_errors_match_torch():
    for fn, exc in [(lambda m, lib: setattr(m, "running_mean", 3), TypeError),
                    (lambda m, lib: m.register_buffer("x", lib.zeros(1)), KeyError),
                    (lambda m, lib: m.register_buffer("forward", lib.zeros(1)), KeyError),
                    (lambda m, lib: m.register_buffer("y", 3), TypeError)]:  # fmt: skip
        ours = _error(lambda fn=fn: fn(_with_buffer(tg), tg))
        ref = _error(lambda fn=fn: fn(_with_buffer(torch), torch))
        assert ours[0] is ref[0] is exc
        if exc is KeyError:
            assert ours[1] == ref[1]
        else:  # PyTorch names torch.Tensor, we name Tensor
            assert ours[1].split("(")[0] == ref[1].split("(")[0]
    m = _with_buffer(tg)
    m.running_mean = tg.ones(2)  # a tensor (or None) still replaces it
    assert m.running_mean.tolist() == [1.0, 1.0] and "running_mean" in m.state_dict()


def test_forward_hook_returning_a_handle_is_a_clear_error():
    lin = tg.nn.Linear(2, 2)
    handles = []
    lin.register_forward_hook(lambda mod, args, out: handles[0])
    handles.append(lin.register_forward_pre_hook(lambda mod, args: None))
    with pytest.raises(TypeError, match="returned a hook handle.*replaces the module's output"):
        lin(tg.ones(1, 2))
    # anything else replaces the output, as in PyTorch
    for lib in (tg, torch):
        relu = lib.nn.ReLU()
        relu.register_forward_hook(lambda mod, args, out: "replaced")
        assert relu(lib.ones(2)) == "replaced"


@pytest.mark.parametrize("make", [lambda lib: lib.nn.Linear(2, 3), lambda lib: lib.nn.ReLU(),
                                  lambda lib: lib.nn.Sequential(lib.nn.Linear(2, 3))],
                         ids=["linear", "relu", "sequential"])  # fmt: skip
def test_a_python_list_input_is_a_type_error(make):
    ours, ref = _error(lambda: make(tg)([1.0, 2.0])), _error(lambda: make(torch)([1.0, 2.0]))
    assert ours[0] is ref[0] is TypeError
    assert "tg.tensor(" in ours[1] and ("Linear" in ours[1] or "ReLU" in ours[1])
    assert tg.nn.Identity()([1.0]) == torch.nn.Identity()([1.0])  # Identity passes anything


@pytest.mark.parametrize("cls", ["Sequential", "ModuleList"])
def test_index_out_of_range_as_torch(cls):
    for lib in (tg, torch):
        mods = [lib.nn.ReLU(), lib.nn.ReLU()]
        c = lib.nn.Sequential(*mods) if cls == "Sequential" else lib.nn.ModuleList(mods)
        with pytest.raises(IndexError, match="index 5 is out of range"):
            c[5]
