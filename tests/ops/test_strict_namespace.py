"""Every op's forward kernel and raw derivative rule, run again on ``array_api_strict``.

CuPy must run the same kernels as numpy; the strict namespace rejects numpy-only habits
(dtype mixing, Python scalars where arrays are due, implicit flat indexing), so a kernel that
passes here uses only the Array API standard.
"""

import array_api_strict as xp
import numpy as np
import pytest

from tests.opinfo import OPS
from tinygrad_edu.ops import RAW, REGISTRY, get_op

# op name -> (inputs, attrs): the table's forward-kernel example of each op
EXAMPLES = {name: info.kernel_example for name, info in OPS.items() if info.kernel_example}


def _strict(value):
    if isinstance(value, np.ndarray):
        return xp.asarray(value)
    if isinstance(value, tuple):
        return tuple(_strict(v) for v in value)
    return value


def _close(strict_value, numpy_value, what):
    got = np.asarray(strict_value) if not isinstance(strict_value, float) else strict_value
    np.testing.assert_allclose(got, numpy_value, rtol=1e-6, atol=1e-6, err_msg=what)


def test_every_registered_op_has_an_example():
    assert sorted(REGISTRY) == sorted(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_forward_and_vjp_on_strict_namespace(name):
    op = get_op(name)
    inputs, attrs = EXAMPLES[name]
    sinputs, sattrs = _strict(inputs), {k: _strict(v) for k, v in attrs.items()}
    out = op.forward(np, *inputs, **attrs)
    sout = op.forward(xp, *sinputs, **sattrs)
    _close(sout, out, f"{name} forward")
    if not op.differentiable:
        return
    g = np.random.default_rng(1).standard_normal(np.shape(out))
    shapes = tuple(tuple(x.shape) for x in inputs)
    needs = tuple(np.issubdtype(x.dtype, np.floating) for x in inputs)
    grads = op.vjp(RAW, g.astype(out.dtype), inputs, out, shapes, needs, **attrs)
    sgrads = op.vjp(RAW, xp.asarray(g.astype(out.dtype)), sinputs, sout, shapes, needs, **sattrs)
    for i, (expect, got) in enumerate(zip(grads, sgrads)):
        assert (expect is None) == (got is None), f"{name}: gradient {i}"
        if expect is not None:
            _close(got, expect, f"{name} gradient {i}")
