r"""Random numbers shaped like a tensor, with PyTorch's names: the in-place fills
``normal_``, ``uniform_``, ``bernoulli_``, ``exponential_``, ``log_normal_``, ``cauchy_``,
``geometric_``, ``random_`` (one op, ``random_fill``), and ``bernoulli``, ``poisson``,
``normal`` and ``multinomial`` (sampling from the values of a tensor). None of them is
differentiable (their values do not move smoothly with their inputs); they run on the eager
engine only.

The numbers come from the library's one seeded generator (``tg.manual_seed``), drawn on the
CPU and moved to the tensor's device, so a seed gives the same numbers on every device. The
eager engine hands the generator over at import (:func:`use_generator`): the op library never
imports the layer above it.

>>> import tinygrad_edu as tg
>>> _ = tg.manual_seed(0)
>>> w = tg.empty(2, 3).normal_(0.0, 0.02)
>>> w.shape, bool((w.abs() < 0.2).all())
((2, 3), True)
>>> tg.multinomial(tg.tensor([0.0, 1.0, 0.0]), 2, replacement=True)
tensor([1, 1])
"""

from __future__ import annotations

import numpy as _np  # the generator draws on the CPU (a seed gives one stream everywhere)

from .base import NO_ONNX_RANDOM, Op, ShapeError, register
from .promotion import category
from .surface import declare

__all__ = ["RandomFill", "Multinomial", "Sample", "use_generator", "generator_of"]

_SOURCE = [lambda: _np.random.default_rng()]


def use_generator(fn) -> None:
    """Draw from ``fn()`` (called each time: ``manual_seed`` replaces the generator)."""
    _SOURCE[0] = fn


def generator_of(generator=None) -> _np.random.Generator:
    """The numpy generator to draw from: the library's, or the one a ``generator=`` argument
    carries (a numpy ``Generator``, or an object holding one as ``.rng``)."""
    if generator is None:
        return _SOURCE[0]()
    if isinstance(generator, _np.random.Generator):
        return generator
    rng = getattr(generator, "rng", None)
    if isinstance(rng, _np.random.Generator):
        return rng
    raise TypeError(f"generator must be None or a random generator, got "
                    f"{type(generator).__name__}")  # fmt: skip


def _on(xp, values, like):
    """CPU samples as an array of ``like``'s namespace and dtype."""
    arr = xp.asarray(values)
    return xp.astype(arr, like.dtype) if arr.dtype != like.dtype else arr


def _host(x):
    """A numpy copy of ``x`` (from any device)."""
    if isinstance(x, _np.ndarray):
        return x
    get = getattr(x, "get", None)  # CuPy
    return get() if get is not None else _np.asarray(x)


_DRAWS = {
    "normal": lambda rng, shape, mean=0.0, std=1.0: rng.normal(mean, std, shape),
    "uniform": lambda rng, shape, low=0.0, high=1.0: rng.uniform(low, high, shape),
    "bernoulli": lambda rng, shape, p=0.5: rng.random(shape) < p,
    "exponential": lambda rng, shape, lambd=1.0: rng.exponential(1.0 / lambd, shape),
    "log_normal": lambda rng, shape, mean=1.0, std=2.0: rng.lognormal(mean, std, shape),
    "cauchy": lambda rng, shape, median=0.0, sigma=1.0: median + sigma * rng.standard_cauchy(
        shape),
    "geometric": lambda rng, shape, p=0.5: rng.geometric(p, shape),
    "integers": lambda rng, shape, low=0, high=None: rng.integers(low, high, shape),
}  # fmt: skip


def _check(dist, params):
    """PyTorch's checks of a distribution's parameters, with its exception classes."""
    def bad(what):
        shown = "random" if dist == "integers" else dist  # the public name: random_
        raise RuntimeError(f"{shown}_: {what} (got {params})")

    if dist == "normal" and params.get("std", 1.0) < 0:
        bad("std must be non-negative")
    if dist == "uniform" and params.get("low", 0.0) > params.get("high", 1.0):
        bad("expects from <= to")
    if dist in ("bernoulli", "geometric") and not 0 <= params.get("p", 0.5) <= 1:
        bad("p must be in [0, 1]")
    if dist == "geometric" and params.get("p", 0.5) == 0:
        bad("p must be positive")
    if dist == "exponential" and params.get("lambd", 1.0) <= 0:
        bad("lambd must be positive")
    if dist == "log_normal" and params.get("std", 2.0) <= 0:
        bad("std must be positive")
    if dist == "integers" and params.get("high") is not None and \
            params["low"] >= params["high"]:  # fmt: skip
        bad("expects from < to")


@register
class RandomFill(Op):
    """An array like ``x`` (its shape and dtype) of samples of ``dist`` with ``params``
    (``normal``: mean, std; ``uniform``: low, high; ``bernoulli``: p; ``exponential``:
    lambd; ...). ``x``'s values are not read. Not differentiable."""

    name, differentiable = "random_fill", False
    onnx = NO_ONNX_RANDOM

    def forward(self, xp, x, dist="normal", params=(), generator=None):
        params = dict(params)
        _check(dist, params)
        if dist in ("normal", "uniform", "exponential", "log_normal", "cauchy") and category(
                x.dtype) != 2:  # fmt: skip
            raise RuntimeError(f"{dist}_: the tensor is {x.dtype}; {dist} samples need a "
                               "floating tensor (convert first, e.g. x.float())")  # fmt: skip
        if dist == "integers" and params.get("high") is None:  # random_(): the dtype's range
            top = 2**24 if x.dtype == xp.float32 else 2**53 if category(x.dtype) == 2 else (
                2 if category(x.dtype) == 0 else int(xp.iinfo(x.dtype).max) + 1)  # fmt: skip
            params["high"] = top
        values = _DRAWS[dist](generator_of(generator), tuple(x.shape), **params)
        return _on(xp, values, x)


@register
class Sample(Op):
    """Samples whose parameters are the values of ``x``: ``bernoulli`` (0/1 with probability
    ``x``), ``poisson`` (rate ``x``), ``normal`` (mean ``x``, standard deviation ``std``, a
    second input or a number). Not differentiable."""

    name, arity, differentiable = "sample", -1, False
    onnx = NO_ONNX_RANDOM

    def forward(self, xp, x, std=None, dist="bernoulli", p=None, generator=None):
        rng = generator_of(generator)
        values = _host(x)
        if dist == "bernoulli":
            prob = values if p is None else p
            if _np.any((_np.asarray(prob) < 0) | (_np.asarray(prob) > 1)):
                raise RuntimeError("bernoulli: the probabilities must be in [0, 1]")
            return _on(xp, rng.random(values.shape) < prob, x)
        if dist == "poisson":
            if _np.any(values < 0):
                raise RuntimeError("poisson: the rates must be non-negative")
            return _on(xp, rng.poisson(values), x)
        sd = _host(std) if hasattr(std, "shape") else std
        if _np.any(_np.asarray(sd) < 0):
            raise RuntimeError("normal: std must be non-negative")
        return _on(xp, rng.normal(values, sd, _np.broadcast_shapes(values.shape,
                                                                     _np.shape(sd))), x)


@register
class Multinomial(Op):
    r"""``num_samples`` category indices per row of ``x`` (non-negative weights, normalised
    per row), with or without ``replacement``; int64. Not differentiable."""

    name, differentiable = "multinomial", False
    onnx = NO_ONNX_RANDOM

    def forward(self, xp, x, num_samples=1, replacement=False, generator=None):
        self.shape(x.shape, num_samples, replacement)
        w = _host(x).astype(_np.float64)
        if not _np.all(_np.isfinite(w)) or _np.any(w < 0):
            raise RuntimeError("multinomial: the weights must be finite and non-negative; got "
                               "a negative, inf or nan value")  # fmt: skip
        rows = w.reshape(-1, w.shape[-1])
        totals = rows.sum(axis=1)
        if _np.any(totals <= 0):
            raise RuntimeError("multinomial: a row of weights sums to 0; give each row at least "
                               "one positive weight")  # fmt: skip
        if not replacement and _np.any((rows > 0).sum(axis=1) < num_samples):
            raise RuntimeError(f"multinomial: cannot draw {num_samples} samples without "
                               "replacement from a row with fewer nonzero weights")
        rng = generator_of(generator)
        out = _np.stack([rng.choice(len(r), num_samples, replace=replacement, p=r / r.sum())
                         for r in rows]) if len(rows) else _np.zeros((0, num_samples))  # fmt: skip
        out = out.reshape(tuple(w.shape[:-1]) + (num_samples,)).astype(_np.int64)
        return xp.asarray(out)

    def shape(self, shape, num_samples=1, replacement=False):
        if len(shape) not in (1, 2):
            raise ShapeError(f"multinomial: the weights must be 1-D or 2-D (a batch of rows), "
                             f"got shape {tuple(shape)}")  # fmt: skip
        if num_samples <= 0:
            raise RuntimeError(f"multinomial: num_samples must be positive, got {num_samples}")
        if not replacement and num_samples > shape[-1]:
            raise RuntimeError(f"multinomial: cannot draw {num_samples} samples without "
                               f"replacement from {shape[-1]} categories; pass "
                               "replacement=True")  # fmt: skip
        return tuple(shape[:-1]) + (num_samples,)


# -- public surfaces -------------------------------------------------------------------------
def _fill(dist, names, defaults):
    """An in-place fill ``x.<dist>_(*params, generator=None)`` with PyTorch's parameter
    names."""

    def template(op, apply):
        def fill(input, *args, generator=None, **kw):
            if len(args) > len(names):
                raise TypeError(f"{dist}_: takes at most {len(names)} parameters "
                                f"({', '.join(names)}), got {len(args)}")  # fmt: skip
            values = dict(zip(names, defaults))
            values.update(zip(names, args))
            for key, value in kw.items():
                if key not in names:
                    raise TypeError(f"{dist}_: unexpected argument {key!r}; it takes "
                                    f"{', '.join(names)}")  # fmt: skip
                values[key] = value
            missing = [k for k, v in values.items() if v is _REQUIRED]
            if missing:
                raise TypeError(f"{dist}_: missing the argument {missing[0]!r}")
            params = _PARAMS[dist](values)
            return apply(op, input, dist=_DIST.get(dist, dist), params=tuple(params.items()),
                         generator=generator)  # fmt: skip

        return fill

    return template


# PyTorch's parameter names -> the sampler's
_PARAMS = {
    "normal": lambda v: {"mean": float(v["mean"]), "std": float(v["std"])},
    "uniform": lambda v: {"low": float(v["from"]), "high": float(v["to"])},
    "bernoulli": lambda v: {"p": float(v["p"])},
    "exponential": lambda v: {"lambd": float(v["lambd"])},
    "log_normal": lambda v: {"mean": float(v["mean"]), "std": float(v["std"])},
    "cauchy": lambda v: {"median": float(v["median"]), "sigma": float(v["sigma"])},
    "geometric": lambda v: {"p": float(v["p"])},
    "random": lambda v: ({"low": 0, "high": v["from"]} if v["to"] is None and v["from"] is not
                         None else {"low": v["from"] or 0, "high": v["to"]}),
}  # fmt: skip
_DIST = {"random": "integers"}
_REQUIRED = object()  # a parameter without a default
_FILLS = [
    ("normal", ("mean", "std"), (0.0, 1.0)),
    ("uniform", ("from", "to"), (0.0, 1.0)),
    ("bernoulli", ("p",), (0.5,)),
    ("exponential", ("lambd",), (1.0,)),
    ("log_normal", ("mean", "std"), (1.0, 2.0)),
    ("cauchy", ("median", "sigma"), (0.0, 1.0)),
    ("geometric", ("p",), (_REQUIRED,)),
    ("random", ("from", "to"), (None, None)),
]


def _bernoulli(op, apply):
    def bernoulli(input, p=None, *, generator=None):
        return apply(op, input, dist="bernoulli", p=p, generator=generator)

    return bernoulli


def _poisson(op, apply):
    def poisson(input, generator=None):
        return apply(op, input, dist="poisson", generator=generator)

    return poisson


def _normal(op, apply):
    """``normal(mean, std=1.0, *, generator=None)``: samples with tensor means (and tensor or
    number standard deviations)."""

    def normal(mean, std=1.0, *, generator=None):
        if not hasattr(mean, "shape"):
            if not hasattr(std, "shape"):
                raise TypeError("normal: give mean or std as a tensor (for numbers and a size, "
                                "use tg.randn(size) * std + mean)")  # fmt: skip
            return apply(op, std * 0 + mean, std, dist="normal", generator=generator)
        if hasattr(std, "shape"):
            return apply(op, mean, std, dist="normal", generator=generator)
        return apply(op, mean, dist="normal", std=std, generator=generator)

    return normal


def _multinomial(op, apply):
    def multinomial(input, num_samples, replacement=False, *, generator=None):
        return apply(op, input, num_samples=num_samples, replacement=replacement,
                     generator=generator)  # fmt: skip

    return multinomial


for _dist, _names, _defaults in _FILLS:
    declare("random_fill", _fill(_dist, _names, _defaults), inplace=(f"{_dist}_",),
            symbolic=False)  # fmt: skip
declare("sample", _bernoulli, methods=("bernoulli",), functions=("bernoulli",), symbolic=False)
declare("sample", _poisson, functions=("poisson",), symbolic=False)
declare("sample", _normal, functions=("normal",), symbolic=False)
declare("multinomial", _multinomial, methods=("multinomial",), functions=("multinomial",),
        symbolic=False)  # fmt: skip
