"""The base class of the distributions, and the helpers they share (PyTorch's
``Distribution``, ``broadcast_all`` and the checks of ``constraints``)."""

from __future__ import annotations

import math

from ..eager.dispatch import FUNCTIONS
from ..eager.factories import tensor
from ..eager.tensor import Tensor
from ..size import Size

__all__ = ["Distribution", "broadcast_all", "check", "clamp_probs"]

_broadcast_tensors = FUNCTIONS["broadcast_tensors"]


def broadcast_all(*values):
    """Numbers become tensors (of the tensors' dtype, or the default float dtype when all are
    numbers), then everything is broadcast together, as PyTorch's ``broadcast_all``."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out.append(tensor(float(v), dtype=None if like is None else like.dtype))
        else:
            raise ValueError(f"a distribution's parameters must be tensors or numbers, got "
                             f"{type(v).__name__}")  # fmt: skip
    return tuple(_broadcast_tensors(*out)) if len(out) > 1 else tuple(out)


def clamp_probs(probs):
    """Probabilities kept inside $[\\epsilon, 1 - \\epsilon]$ (the dtype's epsilon), so their
    logarithms stay finite."""
    import numpy as _np  # noqa: PLC0415  (the dtype's epsilon)

    eps = float(_np.finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def check(dist, name, value, ok, constraint):
    """PyTorch's argument check: a ``ValueError`` naming the parameter, its shape, the
    constraint and the values found, when ``ok`` (a bool tensor) is False anywhere."""
    if bool(ok.all()):
        return
    raise ValueError(
        f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) of "
        f"distribution {dist!r} to satisfy the constraint {constraint}, but found invalid "
        f"values:\n{value}"
    )


class ProbsOrLogits:
    """The parameter of a distribution given as ``probs`` or as ``logits``: the other one is
    computed on first use and kept (PyTorch's ``lazy_property``). Subclasses say how:
    ``_logits_of(probs)`` and ``_probs_of(logits)``."""

    def __getattr__(self, name):
        if name == "logits" and "probs" in self.__dict__:
            value = self._logits_of(self.probs)
        elif name == "probs" and "logits" in self.__dict__:
            value = self._probs_of(self.logits)
        else:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}")
        self.__dict__[name] = value
        return value


class Distribution:
    """A probability distribution with ``batch_shape`` independent members, each over
    ``event_shape``-shaped values (PyTorch's ``Distribution``).

    Subclasses give ``log_prob``, ``entropy``, ``mean``, ``variance``, and ``rsample`` (when
    ``has_rsample``) or ``sample``.
    """

    has_rsample = False
    _validate_default = True  # PyTorch validates by default (outside python -O)

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        self._validate_args = self._validate_default if validate_args is None else bool(
            validate_args)  # fmt: skip
        if self._validate_args:
            self._check_args()

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn the checks of arguments and values on or off for new distributions."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_default = value

    def _check_args(self) -> None:
        """Check the parameters (each subclass says how)."""

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__} has no mean here")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__} has no variance here")

    def _extended_shape(self, sample_shape=()) -> tuple:
        if isinstance(sample_shape, int):
            raise TypeError(f"sample_shape must be a tuple or tg.Size, got the int "
                            f"{sample_shape}; write ({sample_shape},)")  # fmt: skip
        return tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape)

    def sample(self, sample_shape=()):
        """Values drawn from the library's generator, outside the graph."""
        from ..eager.grad_mode import no_grad  # noqa: PLC0415

        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sample "
                                  "(rsample); use sample()")  # fmt: skip

    def sample_n(self, n):
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _support_error(self, value, support):
        raise ValueError(
            f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
            f"to be within the support ({support}) of the distribution {self!r}, but found "
            f"invalid values:\n{value}"
        )

    def _as_value(self, value):
        if not isinstance(value, Tensor):
            raise ValueError(f"The value argument to log_prob must be a Tensor, got "
                             f"{type(value).__name__}")  # fmt: skip
        return value

    def __repr__(self) -> str:
        params = ", ".join(f"{k}: {_short(getattr(self, k))}" for k in self._params
                           if k in self.__dict__ or hasattr(type(self), k))  # fmt: skip
        return f"{type(self).__name__}({params})"

    _params: tuple = ()


def _short(value):
    if isinstance(value, Tensor):
        return str(value.item()) if value.numel() == 1 else f"size: {tuple(value.shape)}"
    return str(value)


LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))
