r"""Activation modules: ``ReLU``, ``Tanh``, ``Sigmoid``, ``LeakyReLU``, ``GELU``,
``Softplus``, ``Softmax``, ``LogSoftmax``, ``Softmin``, ``Softmax2d``, ``SiLU``, ``ELU``,
``SELU``, ``CELU``, ``Mish``,
``Hardtanh``, ``ReLU6``, ``Hardswish``, ``Hardsigmoid``, ``LogSigmoid``, ``Softsign``,
``Tanhshrink``, ``Hardshrink``, ``Softshrink``, ``Threshold``, ``GLU``, ``PReLU`` (a learnt
slope), each a thin module over the function of the same name in
:mod:`tinygrad_edu.nn.functional`, with PyTorch's arguments (``inplace=True`` where PyTorch
has it: the input is overwritten and returned).

>>> import tinygrad_edu as tg
>>> tg.nn.LeakyReLU(0.1)(tg.tensor([-1.0, 2.0]))
tensor([-0.1000,  2.0000])
"""

from __future__ import annotations

from ..eager.tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["ReLU", "Tanh", "Sigmoid", "LeakyReLU", "GELU", "Softplus", "Softmax", "LogSoftmax",
           "SiLU", "ELU", "SELU", "CELU", "Mish", "Hardtanh", "ReLU6", "Hardswish", "Hardsigmoid",
           "LogSigmoid", "Softsign", "Tanhshrink", "Hardshrink", "Softshrink", "Threshold", "GLU",
           "PReLU", "Softmin", "Softmax2d"]  # fmt: skip


class ReLU(Module):
    r"""$\max(x, 0)$ elementwise (``inplace=True``: overwrite the input, as PyTorch's)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    r"""$\tanh x$ elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    r"""$1/(1+e^{-x})$ elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class LeakyReLU(Module):
    r"""$x$ for $x > 0$, else ``negative_slope`` $\cdot x$."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    r"""$x\,\Phi(x)$ (``approximate="tanh"``: PyTorch's tanh approximation)."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    r"""$\frac1\beta\log(1 + e^{\beta x})$ (linear above ``threshold``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    r"""$e^{x_i}/\sum_j e^{x_j}$ along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    r"""$x_i - \log\sum_j e^{x_j}$ along ``dim``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, self.dim)


class Softmin(Module):
    r"""$e^{-x_i}/\sum_j e^{-x_j}$ along ``dim`` (``F.softmin``)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) (axis -3)."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected an input (N, C, H, W) or (C, H, W), got "
                             f"shape {input.shape}")  # fmt: skip
        return F.softmax(input, -3)


class _Pointwise(Module):
    """A module that calls ``F.<_function>(input, **its arguments)``. Subclasses list the
    arguments with PyTorch's names and defaults in ``_args``. Where PyTorch's module has
    ``inplace`` (``_inplace``), ``inplace=True`` (by keyword, or as the argument after
    ``_args``) overwrites the input and returns it, and ``extra_repr`` shows it as PyTorch's
    does (``_repr_inplace``); elsewhere ``inplace`` is accepted and ignored."""

    _function = ""
    _args: tuple = ()
    _inplace = False
    _repr_inplace = True

    def __init__(self, *args, **kwargs):
        super().__init__()
        names = [n for n, _ in self._args]
        if len(args) > len(names) + 1:
            raise TypeError(f"{type(self).__name__}: takes at most {len(names)} arguments "
                            f"({', '.join(names) or 'none'}), got {len(args)}")  # fmt: skip
        values = dict(self._args)
        values.update(zip(names, args))
        for key, value in kwargs.items():
            if key != "inplace" and key not in values:
                raise TypeError(f"{type(self).__name__}: unexpected argument {key!r}")
            if key != "inplace":
                values[key] = value
        for key, value in values.items():
            setattr(self, key, value)
        inplace = args[len(names)] if len(args) > len(names) else False
        self.inplace = kwargs.get("inplace", inplace)

    def forward(self, input: Tensor) -> Tensor:
        kwargs = {n: getattr(self, n) for n, _ in self._args}
        if self._inplace:
            kwargs["inplace"] = self.inplace
        return getattr(F, self._function)(input, **kwargs)

    def extra_repr(self) -> str:
        parts = [f"{n}={getattr(self, n)}" for n, _ in self._args]
        if self._inplace and self._repr_inplace and self.inplace:
            parts.append("inplace=True")
        return ", ".join(parts)


def _pointwise(name, function, args=(), doc="", inplace=False, repr_inplace=True):
    return type(name, (_Pointwise,), {"__doc__": doc, "_function": function, "_args": args,
                                      "_inplace": inplace, "_repr_inplace": repr_inplace})


SiLU = _pointwise("SiLU", "silu", doc=r"$x\,\sigma(x)$.", inplace=True)
ELU = _pointwise("ELU", "elu", (("alpha", 1.0),), r"$x$ for $x > 0$, else $\alpha(e^x - 1)$.",
                 inplace=True)
SELU = _pointwise("SELU", "selu", doc="ELU with the self-normalising constants, scaled.",
                  inplace=True)
CELU = _pointwise("CELU", "celu", (("alpha", 1.0),), r"$\max(0,x) + \min(0, \alpha(e^{x/\alpha}"
                  r" - 1))$.", inplace=True)  # fmt: skip
Mish = _pointwise("Mish", "mish", doc=r"$x \tanh(\mathrm{softplus}(x))$.",
                  inplace=True)
Hardtanh = _pointwise("Hardtanh", "hardtanh", (("min_val", -1.0), ("max_val", 1.0)),
                      "$x$ clipped to [min_val, max_val].", inplace=True)
ReLU6 = _pointwise("ReLU6", "relu6", doc=r"$\min(\max(x, 0), 6)$.", inplace=True)
Hardswish = _pointwise("Hardswish", "hardswish", doc=r"$x\,\mathrm{relu6}(x + 3)/6$.",
                       inplace=True, repr_inplace=False)  # PyTorch's repr: Hardswish()
Hardsigmoid = _pointwise("Hardsigmoid", "hardsigmoid", doc=r"$\mathrm{relu6}(x + 3)/6$.")
LogSigmoid = _pointwise("LogSigmoid", "logsigmoid", doc=r"$\log \sigma(x)$.")
Softsign = _pointwise("Softsign", "softsign", doc="$x/(1 + |x|)$.")
Tanhshrink = _pointwise("Tanhshrink", "tanhshrink", doc=r"$x - \tanh x$.")
Hardshrink = _pointwise("Hardshrink", "hardshrink", (("lambd", 0.5),),
                        r"$x$ where $|x| >$ lambd, else 0.")
Softshrink = _pointwise("Softshrink", "softshrink", (("lambd", 0.5),),
                        r"$x \mp$ lambd outside [-lambd, lambd], else 0.")
Threshold = _pointwise("Threshold", "threshold", (("threshold", None), ("value", None)),
                       "$x$ where $x >$ threshold, else value.", inplace=True)
GLU = _pointwise("GLU", "glu", (("dim", -1),), r"$a\,\sigma(b)$ for the halves $a, b$ of dim.")


class PReLU(Module):
    r"""$x$ for $x > 0$, else $a x$ with a learnt slope $a$: one for all channels, or one per
    channel (dim 1) with ``num_parameters``; ``init`` is its starting value."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        from ..eager.factories import full  # noqa: PLC0415
        from .module import Parameter  # noqa: PLC0415

        self.num_parameters = num_parameters
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype or "float32",
                                     device=device))  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
