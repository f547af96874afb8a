"""The ``out=`` keyword of the ``tg.`` functions, against PyTorch: the result lands in ``out``
(same object, values seen through its views), dtypes cast by PyTorch's rule, resizing with
its warning, and PyTorch's errors (autograd, casting, (values, indices) pairs)."""

import warnings

import numpy as np
import pytest
import torch

import tinygrad_edu as tg

X = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.5]], dtype=np.float32)


@pytest.mark.parametrize("name,args", [
    ("exp", ()), ("add", (2.0,)), ("mul", (X,)), ("sum", (1,)), ("clamp", (-0.5, 1.0)),
    ("matmul", (X.T,)), ("sqrt", ()), ("tanh", ()), ("maximum", (X * 0,)),
])  # fmt: skip
def test_out_receives_the_result_like_torch(name, args):
    def run(lib):
        x = lib.tensor(np.abs(X) if name == "sqrt" else X)
        extra = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        out = lib.empty(0)
        res = getattr(lib, name)(x, *extra, out=out)
        assert res is out
        return out.numpy()

    np.testing.assert_allclose(run(tg), run(torch), rtol=1e-6)


def test_out_of_the_same_shape_is_written_in_place():
    out = tg.zeros(2, 3)
    view = out[0]
    version = out._version
    tg.exp(tg.tensor(X), out=out)
    np.testing.assert_allclose(view.numpy(), np.exp(X[0]), rtol=1e-6)
    assert out._version == version + 1


def test_resizing_warns_as_torch():
    out = tg.zeros(5)
    with pytest.warns(UserWarning, match="was resized"):
        tg.exp(tg.tensor(X), out=out)
    assert out.shape == (2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.exp(tg.tensor(X), out=tg.empty(0))  # an empty out is resized silently


def test_dtype_rules_equal_torchs():
    for src, dst in [("int64", "float32"), ("float64", "float32"), ("float32", "int64"),
                     ("bool", "int64"), ("int64", "bool")]:  # fmt: skip
        def run(lib, src=src, dst=dst):
            a = lib.tensor(np.array([1, 0, 2]).astype(src))
            out = lib.zeros(3, dtype=getattr(lib, dst))
            try:
                lib.add(a, a, out=out) if src != "bool" else lib.logical_or(a, a, out=out)
            except RuntimeError as e:
                return "can't be cast" in str(e)
            return out.numpy().tolist()

        assert run(tg) == run(torch), (src, dst)


def test_autograd_refuses_out_with_grad():
    x = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tg.exp(x, out=tg.empty(1))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        torch.exp(torch.tensor([1.0], requires_grad=True), out=torch.empty(1))
    with tg.no_grad():
        out = tg.empty(1)
        tg.exp(x, out=out)
    assert out.grad_fn is None and out.item() == pytest.approx(np.e)


def test_values_indices_out_and_bad_out():
    v, i = tg.empty(0), tg.empty(0, dtype=tg.int64)
    res = tg.max(tg.tensor(X), 1, out=(v, i))
    assert res.values is v and res.indices is i and i.tolist() == [2, 0]
    with pytest.raises(TypeError, match="tuple of 2 tensors"):
        tg.max(tg.tensor(X), 1, out=v)
    with pytest.raises(TypeError, match="must be Tensor"):
        tg.exp(tg.tensor(X), out=np.zeros((2, 3)))
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        tg.split(tg.tensor(X), 1, out=v)
    with pytest.raises(RuntimeError, match="device"):
        tg.exp(tg.tensor(X), out=tg.empty(0, device="sim:1"))
