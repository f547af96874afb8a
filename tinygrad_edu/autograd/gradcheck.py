r"""``tg.autograd.gradcheck`` and ``gradgradcheck``: the eager engine's derivatives against
finite differences, with PyTorch's signatures.

``gradcheck(func, inputs)`` builds, for every output $o$ and every input $i$ that requires
grad, the Jacobian $J_{oi}$ twice: numerically, one column per input element by central
differences in float64,

$$\partial y / \partial x_k \approx
  \big(f(x + \epsilon e_k) - f(x - \epsilon e_k)\big) / 2\epsilon,$$

and analytically, one row per output element by a backward pass with a one-hot
``grad_outputs``. They agree when $|a - n| \le \mathrm{atol} + \mathrm{rtol}\,|n|$ everywhere
(``allclose``). ``fast_mode=True`` compares one number per pair instead, $v^\top J u$ with fixed
random $u$ and $v$: one backward and two evaluations per input, the check PyTorch calls fast.

``gradgradcheck`` checks second derivatives as PyTorch does: it runs ``gradcheck`` on the
function $(x, v) \mapsto \nabla_x (v^\top f(x))$, computed with ``create_graph=True``.

Use float64 inputs: with float32, rounding error ($\approx 10^{-7}/\epsilon$) swamps the check.
Float32 inputs are converted to float64 (with a warning; PyTorch warns and checks them as they
are). Complex inputs are refused: the eager engine differentiates real tensors only.

>>> import numpy as np
>>> import tinygrad_edu as tg
>>> x = tg.tensor(np.array([[0.5, -1.0], [2.0, 0.1]]), requires_grad=True)
>>> tg.autograd.gradcheck(lambda t: (t * t).exp(), (x,))
True
>>> tg.autograd.gradgradcheck(lambda t: t.tanh().sum(), (x,))
True
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from ..eager import Tensor, grad, tensor
from ..finite_diff import GradcheckError, random_projection

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


def _refuse(what: str, **flags) -> None:
    """NotImplementedError for a PyTorch option whose non-default value would change the answer."""
    for name, value in flags.items():
        if value:
            raise NotImplementedError(
                f"{what}: {name}=True is not supported (the eager engine has no "
                f"{_NOT_HERE[name]}); leave it at its default"
            )


_NOT_HERE = {
    "check_batched_grad": "vmap to batch gradients over",
    "check_batched_forward_grad": "vmap or forward-mode AD",
    "check_forward_ad": "forward-mode AD",
    "check_fwd_over_rev": "forward-mode AD",
    "masked": "sparse tensors to mask",
}


def _prepare(inputs, what):
    """The inputs as a list, the positions that require grad, and their float64 values."""
    if isinstance(inputs, Tensor):
        inputs = [inputs]
    inputs = list(inputs)
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor) and "complex" in str(x.dtype):
            raise TypeError(
                f"{what}: input {i} is {x.dtype} of shape {tuple(x.shape)}; the eager engine "
                "differentiates real tensors only: check its real and imaginary parts as two "
                "float64 inputs"
            )
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError(f"{what}: no input requires grad; create at least one with "
                         "tg.tensor(array, requires_grad=True)")
    points = []
    for i in diff:
        x = inputs[i]
        if "float64" not in str(x.dtype):
            warnings.warn(
                f"{what}: input {i} is {x.dtype}; converting it to float64 because finite "
                "differences in single precision are too noisy to check (pass float64 tensors, "
                "e.g. tg.tensor(np.array(..., dtype=np.float64)), to silence this)",
                UserWarning,
                stacklevel=3,
            )
        points.append(np.array(x.detach().numpy(), dtype=np.float64))
    return inputs, diff, points


def _call(func, inputs, diff, values, requires_grad, what):
    """``func`` on fresh float64 leaves holding ``values`` at the positions ``diff``: its
    outputs as a tuple of Tensors, and the leaves."""
    args, leaves = list(inputs), []
    for i, v in zip(diff, values):
        t = tensor(v, requires_grad=requires_grad, device=inputs[i].device)
        t.name = inputs[i].name
        args[i] = t
        leaves.append(t)
    out = func(*args)
    outs = (out,) if isinstance(out, Tensor) else None
    if isinstance(out, tuple | list):
        outs = tuple(out)
    if outs is None or not all(isinstance(o, Tensor) for o in outs):
        raise TypeError(f"{what}: func must return a Tensor or a tuple of Tensors, got "
                        f"{type(out).__name__}")  # fmt: skip
    return outs, leaves


def _is_float(t) -> bool:
    return "float" in str(t.dtype)


def _numpy(g, like) -> np.ndarray:
    return np.zeros_like(like) if g is None else np.asarray(g.detach().numpy(), np.float64)


def _vjp(out, leaves, v) -> list:
    """``v^T J`` of ``out`` for each leaf (None where it does not depend on the leaf)."""
    if not out.requires_grad:
        return [None] * len(leaves)
    return list(grad(out, leaves, grad_outputs=tensor(v, device=out.device), retain_graph=True,
                     allow_unused=True))  # fmt: skip


def _numerical(func, inputs, diff, points, eps, what) -> list:
    """``J[o][i]``: the central-difference Jacobian, shape (input elements, output elements)."""

    def evaluate(values):
        # with grad on, as PyTorch: gradgradcheck's func differentiates inside
        outs, _ = _call(func, inputs, diff, values, True, what)
        return [np.asarray(o.detach().numpy(), np.float64).reshape(-1) for o in outs]

    base = evaluate(points)
    jac = [[np.zeros((p.size, b.size)) for p in points] for b in base]
    for i, p in enumerate(points):
        flat = p.reshape(-1)  # a view: writes move the point
        for k in range(flat.size):
            old = flat[k]
            flat[k] = old + eps
            plus = evaluate(points)
            flat[k] = old - eps
            minus = evaluate(points)
            flat[k] = old
            for o in range(len(base)):
                jac[o][i][k] = (plus[o] - minus[o]) / (2 * eps)
    return jac


def _analytical(outs, leaves, points, nondet_tol, check_grad_dtypes, what) -> list:
    """``J[o][i]`` from one backward per output element; each backward runs twice, and the
    two must agree within ``nondet_tol`` (a backward that is not reentrant fails)."""
    jac = [[np.zeros((p.size, o.numel())) for p in points] for o in outs]
    for o, out in enumerate(outs):
        if not _is_float(out):
            continue
        for j in range(out.numel()):
            onehot = np.zeros(out.numel())
            onehot[j] = 1.0
            onehot = onehot.reshape(tuple(out.shape))
            grads, again = _vjp(out, leaves, onehot), _vjp(out, leaves, onehot)
            for i, (g, h, p) in enumerate(zip(grads, again, points)):
                if check_grad_dtypes and g is not None and g.dtype != leaves[i].dtype:
                    raise GradcheckError(f"{what}: the gradient for input {i} is {g.dtype}, the "
                                         f"input {leaves[i].dtype}", input_index=i)  # fmt: skip
                a, b = _numpy(g, p), _numpy(h, p)
                if np.abs(a - b).max(initial=0.0) > nondet_tol:
                    raise GradcheckError(
                        f"{what}: backward is not reentrant: two backward passes for output {o} "
                        f"gave gradients for input {i} that differ by "
                        f"{np.abs(a - b).max():.3g} > nondet_tol={nondet_tol}",
                        output_index=o, input_index=i)  # fmt: skip
                jac[o][i][:, j] = a.reshape(-1)
    return jac


def _compare(numerical, analytical, inputs, diff, atol, rtol, what, note="") -> None:
    """GradcheckError at the first (output, input) pair whose Jacobians differ."""
    for o, (n_row, a_row) in enumerate(zip(numerical, analytical)):
        for k, (n, a) in enumerate(zip(n_row, a_row)):
            excess = np.abs(a - n) - (atol + rtol * np.abs(n))
            excess = np.where(np.isnan(a) | np.isnan(n), np.inf, excess)
            if a.size == 0 or excess.max() <= 0:
                continue
            worst = tuple(int(w) for w in np.unravel_index(int(np.argmax(excess)), a.shape))
            av, nv = float(a[worst]), float(n[worst])
            err = abs(av - nv)
            rel = err / max(abs(nv), 1e-12)
            i, name = diff[k], inputs[diff[k]].name
            label = f"input {i}" + (f" ({name!r})" if name else "")
            raise GradcheckError(
                f"{what}: Jacobian mismatch for output {o} with respect to {label},\n"
                f"numerical:{np.array2string(n, precision=6)}\n"
                f"analytical:{np.array2string(a, precision=6)}\n"
                f"worst at Jacobian index {worst}: numerical {nv:.8g}, analytical {av:.8g}, "
                f"abs error {err:.3g}, rel error {rel:.3g} (atol={atol}, rtol={rtol}){note}",
                output_index=o, input_index=i, input_name=name, index=worst, analytic=av,
                numeric=nv, abs_error=err, rel_error=rel,
            )  # fmt: skip


def _fast(func, inputs, diff, points, eps, what):
    """``v^T J u`` per (output, input), numerically and analytically, as 1x1 Jacobians."""
    us = [random_projection(p.shape, 1 + k) for k, p in enumerate(points)]
    outs, leaves = _call(func, inputs, diff, points, True, what)
    vs = [random_projection(tuple(o.shape), 100 + o_) for o_, o in enumerate(outs)]
    analytical = [[np.array([[float((_numpy(g, p) * u).sum())]])
                   for g, p, u in zip(_vjp(out, leaves, v), points, us)]
                  if _is_float(out) else [np.zeros((1, 1)) for _ in points]
                  for out, v in zip(outs, vs)]  # fmt: skip

    def projected(values):
        outs, _ = _call(func, inputs, diff, values, True, what)
        return [float((np.asarray(o.detach().numpy(), np.float64) * v).sum())
                for o, v in zip(outs, vs)]  # fmt: skip

    numerical = [[np.zeros((1, 1)) for _ in points] for _ in outs]
    for k, (p, u) in enumerate(zip(points, us)):
        plus = projected([q + eps * u if q is p else q for q in points])
        minus = projected([q - eps * u if q is p else q for q in points])
        for o in range(len(outs)):
            numerical[o][k][0, 0] = (plus[o] - minus[o]) / (2 * eps)
    return numerical, analytical


def gradcheck(
    func: Callable,
    inputs,
    *,
    eps: float = 1e-06,
    atol: float = 1e-05,
    rtol: float = 0.001,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    r"""Check the eager engine's first derivatives of ``func`` against central differences,
    as ``torch.autograd.gradcheck`` does.

    Args:
        func: maps the inputs (as positional arguments) to a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors (other arguments pass through as they are).
            Tensors with ``requires_grad`` are checked; use float64.
        eps: the finite-difference step $\epsilon$.
        atol, rtol: an element fails when $|a - n| > \mathrm{atol} + \mathrm{rtol}\,|n|$.
        raise_exception: on a mismatch raise :class:`GradcheckError` (default) or return False.
        nondet_tol: how far two backward passes with the same input may differ (every row of
            the Jacobian is computed twice).
        check_grad_dtypes: also require each gradient's dtype to be its input's.
        fast_mode: compare $v^\top J u$ for fixed random $u$, $v$ instead of whole Jacobians.
        check_undefined_grad: accepted, not run: PyTorch also calls backward with undefined
            output gradients; a Function here receives zeros unless it turns
            ``ctx.set_materialize_grads(False)``, and either value leaves the answer as it is.
        check_backward_ad: the check itself; False (with ``check_forward_ad=False``) leaves
            nothing to check and is an error, as in PyTorch.
        check_batched_grad, check_batched_forward_grad, check_forward_ad, masked: the engine has
            no vmap, forward-mode AD or sparse tensors; the defaults are accepted, True raises
            NotImplementedError.

    Returns:
        True when the derivatives agree.

    Raises:
        GradcheckError: (a RuntimeError) naming the output and input index and showing the
            numerical and analytical Jacobians, with the worst element.

    >>> import numpy as np
    >>> import tinygrad_edu as tg
    >>> a = tg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    >>> gradcheck(lambda t: t ** 3, (a,))
    True
    """
    what = "gradcheck"
    _refuse(what, check_batched_grad=check_batched_grad, masked=masked,
            check_batched_forward_grad=check_batched_forward_grad,
            check_forward_ad=check_forward_ad)  # fmt: skip
    if not check_backward_ad:
        raise ValueError(f"{what}: check_forward_ad and check_backward_ad are both False, which "
                         "leaves nothing to check; set check_backward_ad=True")  # fmt: skip
    inputs, diff, points = _prepare(inputs, what)
    try:
        if fast_mode:
            numerical, analytical = _fast(func, inputs, diff, points, eps, what)
            note = "\n(fast mode compares v^T J u; run with fast_mode=False for whole Jacobians)"
        else:
            outs, leaves = _call(func, inputs, diff, points, True, what)
            analytical = _analytical(outs, leaves, points, nondet_tol, check_grad_dtypes, what)
            numerical = _numerical(func, inputs, diff, points, eps, what)
            note = ""
        _compare(numerical, analytical, inputs, diff, atol, rtol, what, note)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(
    func: Callable,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-06,
    atol: float = 1e-05,
    rtol: float = 0.001,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    r"""Check second derivatives, as ``torch.autograd.gradgradcheck`` does: :func:`gradcheck`
    of $(x, v) \mapsto \nabla_x (v^\top f(x))$, the gradients computed with
    ``create_graph=True``.

    Args:
        grad_outputs: the $v$, one per output (Tensors); None draws fixed random float64 ones
            that require grad, so the check covers the second derivative's dependence on
            them as well.
        gen_non_contig_grad_outputs: accepted; the engine's tensors have no memory layout
            that could make it matter.
        check_rev_over_rev: the check itself (False with ``check_fwd_over_rev=False`` is an
            error, as in PyTorch); ``check_fwd_over_rev=True`` raises NotImplementedError.

    The other arguments as in :func:`gradcheck`. A report names the input of the gradient
    function: inputs first, then the ``grad_outputs``.

    >>> import numpy as np
    >>> import tinygrad_edu as tg
    >>> a = tg.tensor(np.array([0.3, -0.7]), requires_grad=True)
    >>> gradgradcheck(lambda t: (t * t * t).sum(), (a,))
    True
    """
    what = "gradgradcheck"
    _refuse(what, check_fwd_over_rev=check_fwd_over_rev, check_batched_grad=check_batched_grad,
            masked=masked)  # fmt: skip
    if not check_rev_over_rev:
        raise ValueError(f"{what}: check_fwd_over_rev and check_rev_over_rev are both False, "
                         "which leaves nothing to check; set check_rev_over_rev=True")  # fmt: skip
    inputs, diff, points = _prepare(inputs, what)
    if grad_outputs is None:
        outs, _ = _call(func, inputs, diff, points, True, what)
        grad_outputs = [tensor(random_projection(tuple(o.shape), 7 + k), requires_grad=True,
                               device=o.device) for k, o in enumerate(outs)]  # fmt: skip
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    grad_outputs = list(grad_outputs)
    n_in = len(inputs)

    def first_derivatives(*args):
        xs, vs = list(args[:n_in]), args[n_in:]
        outs, _ = _call(func, xs, [], [], True, what)
        pairs = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
        leaves = [xs[i] for i in diff]
        if not pairs:
            return tuple(x.detach() * 0.0 for x in leaves)
        gs = grad([o for o, _ in pairs], leaves, grad_outputs=[v for _, v in pairs],
                  create_graph=True, allow_unused=True)  # fmt: skip
        # an input the outputs do not depend on: a zero gradient, still a function of nothing
        return tuple(x.detach() * 0.0 if g is None else g for g, x in zip(gs, leaves))

    float_inputs = [tensor(p, requires_grad=True, device=inputs[i].device) for i, p in
                    zip(diff, points)]  # fmt: skip
    for t, i in zip(float_inputs, diff):
        t.name = inputs[i].name
    args = list(inputs)
    for t, i in zip(float_inputs, diff):
        args[i] = t
    return gradcheck(first_derivatives, (*args, *grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)  # fmt: skip
