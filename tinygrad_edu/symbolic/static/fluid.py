r"""Paddle Fluid's names over this engine (PaddlePaddle 1.x's static-graph API).

A Fluid user builds a **main program** and a **startup program** under ``program_guard``,
runs the startup program once into a **scope**, then runs the main program at every step:

>>> import numpy as np
>>> from tinygrad_edu.symbolic import fluid
>>> main, startup = fluid.Program(), fluid.Program()
>>> with fluid.program_guard(main, startup):
...     x = fluid.data("x", shape=[None, 2], dtype="float64")
...     t = fluid.data("t", shape=[None, 1], dtype="float64")
...     pred = fluid.layers.fc(x, size=1, name="fc", in_features=2)
...     loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, t))
...     _ = fluid.optimizer.SGD(learning_rate=0.2).minimize(loss)
>>> exe = fluid.Executor(fluid.CPUPlace())
>>> scope = fluid.Scope()
>>> exe.run(startup, scope=scope)  # initialisers, once
[]
>>> xs = np.random.default_rng(0).normal(size=(32, 2))
>>> ts = xs @ np.array([[2.0], [-1.0]]) + 0.5
>>> for step in range(200):
...     (l,) = exe.run(main, feed={"x": xs, "t": ts}, fetch_list=[loss], scope=scope)
>>> np.round(scope["fc.w"].ravel(), 3), np.round(scope["fc.b"], 3)
(array([ 2., -1.]), array([0.5]))

Feeds and fetches are named by string, as in Fluid (or given as the nodes themselves); this
is the one place where strings are keys, because a program read back from JSON has only
names. The core :class:`~tinygrad_edu.symbolic.Executor` takes Variables only.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from types import SimpleNamespace

from .. import api
from .. import layer_functions as _layers
from ..gradients import gradients as _gradients
from ..tensor_node import PLACEHOLDER, Node, apply_op, stop_gradient
from . import initializer as _init
from .control_flow import cond, while_loop
from .initializer import create_global_var, create_parameter
from .program import (
    Program,
    Update,
    default_main_program,
    default_startup_program,
    program_guard,
)
from .scope import Scope
from .training import SGD as _SGD
from .training import Adam as _Adam
from .training import TrainingExecutor

__all__ = [
    "Program", "program_guard", "default_main_program", "default_startup_program", "Scope",
    "global_scope", "scope_guard", "CPUPlace", "CUDAPlace", "Executor", "data",
    "create_parameter", "create_global_var", "layers", "initializer", "optimizer", "backward",
    "append_backward", "ParamAttr",
]  # fmt: skip


@dataclass(frozen=True)
class CPUPlace:
    """The CPU (numpy)."""

    @property
    def device(self) -> str:
        return "cpu"


@dataclass(frozen=True)
class CUDAPlace:
    """GPU number ``index`` (CuPy)."""

    index: int = 0

    @property
    def device(self) -> str:
        return f"cuda:{self.index}"


class _GlobalScope:
    scope = Scope()


def global_scope() -> Scope:
    """The scope runs use when none is given (Fluid's ``global_scope()``)."""
    return _GlobalScope.scope


@contextlib.contextmanager
def scope_guard(scope: Scope):
    """Make ``scope`` the global scope inside the ``with`` block."""
    saved, _GlobalScope.scope = _GlobalScope.scope, scope
    try:
        yield scope
    finally:
        _GlobalScope.scope = saved


class Executor:
    """Fluid's Executor: runs programs on one place, against a scope.

    ``run(program, feed, fetch_list, scope)`` feeds the data Variables (by name or node),
    reads the persistable ones from the scope, computes ``fetch_list`` and applies the
    program's updates to the scope. The step for each (program, fetch list) is prepared once
    and reused.

    Args:
        place: :class:`CPUPlace` (default) or :class:`CUDAPlace`.
        plan_memory: run with memory plans (see :mod:`~tinygrad_edu.symbolic.memory`).
    """

    def __init__(self, place=None, plan_memory: bool = False):
        self.place = place or CPUPlace()
        self.plan_memory = plan_memory
        self._prepared: dict = {}

    def run(self, program: Program | None = None, feed=None, fetch_list=None,
            scope: Scope | None = None) -> list:  # fmt: skip
        """Run ``program`` (default: the default main program) once; the fetched values as
        numpy arrays, in ``fetch_list``'s order."""
        program = default_main_program() if program is None else program
        if not isinstance(program, Program):
            raise TypeError(f"Executor.run: program must be a Program, got "
                            f"{type(program).__name__}")  # fmt: skip
        scope = global_scope() if scope is None else scope
        fetches = [_resolve(program, f, "fetch_list") for f in (fetch_list or [])]
        feeds = {}
        for key, value in (feed or {}).items():
            var = _resolve(program, key, "feed")
            if var.op is not PLACEHOLDER or var.persistable:
                raise ValueError(f"Executor.run: {var.name!r} cannot be fed: only data "
                                 "Variables are fed (parameters live in the scope)")  # fmt: skip
            feeds[var] = value
        updates = program.global_block().updates
        key = (id(program), tuple(id(f) for f in fetches), len(updates))
        entry = self._prepared.get(key)
        if entry is None or entry[0] is not program:
            step = TrainingExecutor(fetches, updates, scope=scope, device=self.place.device,
                                    plan_memory=self.plan_memory)  # fmt: skip
            entry = self._prepared[key] = (program, step)
        return entry[1].run(feeds, scope=scope)


def _resolve(program: Program, key, what) -> Node:
    if isinstance(key, Node):  # a node of the program it was cloned from: the copy's
        return getattr(program, "twins", {}).get(key, key)
    if isinstance(key, str):
        return program.global_block().var(key)
    raise TypeError(f"Executor.run: {what} entries are names or nodes, got {key!r}")


# -- data and layers -------------------------------------------------------------------------
def data(name: str, shape=None, dtype: str | None = "float32", lod_level: int = 0) -> Node:
    """An input fed at every run (Fluid's ``fluid.data``, float32 unless told): ``None`` or
    ``-1`` in ``shape`` (a batch size not known yet) leaves the static shape unknown, and the
    known sizes stay as ``partial_shape``, which the layers read (``fc`` on
    ``shape=[None, 3]``)."""
    del lod_level  # (Fluid's sequences: not modelled)
    return _init.data(name, shape, dtype)


@dataclass(frozen=True)
class ParamAttr:
    """Fluid's ``ParamAttr``: a parameter's ``name`` and ``initializer``."""

    name: str | None = None
    initializer: object = None


def _param(attr, shape, dtype, default_name, default_init=None) -> Node:
    """A parameter of a layer: named and initialised by ``attr`` (a ParamAttr, a name, or
    None for the defaults)."""
    if isinstance(attr, str):
        attr = ParamAttr(name=attr)
    attr = attr or ParamAttr()
    return create_parameter(shape, dtype, attr.name or default_name,
                            default_initializer=attr.initializer or default_init)  # fmt: skip


def _sizes(layer: str, x: Node, what: str):
    """The known sizes of ``x`` (its static or partial shape), or a clear error."""
    shape = x.shape if x.shape is not None else x.partial_shape
    if shape is None:
        raise ValueError(f"{layer}: the rank of {x.name!r} is unknown, so {what} cannot be "
                         "made; declare its shape, e.g. fluid.data(name, "
                         "shape=[None, 3])")  # fmt: skip
    return shape


def _feature(layer: str, x: Node, dims, what: str) -> int:
    shape = _sizes(layer, x, what)
    sizes = [shape[d] for d in dims]
    if any(d is None for d in sizes):
        raise ValueError(f"{layer}: {what} needs the sizes of axes {list(dims)} of "
                         f"{x.name!r}, whose shape is {shape} (None: not known yet)")  # fmt: skip
    return math.prod(sizes)


def _unique(prefix: str) -> str:
    """``<prefix>_<k>``, the first whose weight ``<prefix>_<k>.w`` the program lacks."""
    names = {n.name for n in default_main_program().global_block().nodes}
    k = 0
    while f"{prefix}_{k}.w" in names:
        k += 1
    return f"{prefix}_{k}"


def _act(out: Node, act: str | None) -> Node:
    return getattr(api, act)(out) if act else out


def fc(input: Node, size: int, num_flatten_dims: int = 1, param_attr=None,  # noqa: A002
       bias_attr=None, act: str | None = None, name: str | None = None,
       in_features: int | None = None) -> Node:  # fmt: skip
    r"""A fully connected layer $\mathrm{act}(xW + b)$ (Fluid's ``layers.fc``); its
    parameters ``<name>.w`` and ``<name>.b`` are created here. The input's axes from
    ``num_flatten_dims`` on are flattened into the weight's rows, whose number is read from
    the input's shape (``fluid.data("x", shape=[None, 3])`` gives 3) or ``in_features``.
    ``bias_attr=False``: no bias."""
    shape = _sizes("fc", input, "the weight") if in_features is None else None
    if in_features is None:
        in_features = _feature("fc", input, range(num_flatten_dims, len(shape)), "the weight")
    name = name or _unique("fc")
    dtype = input.dtype or "float32"
    x = input
    if shape is not None and len(shape) != num_flatten_dims + 1:  # flatten the feature axes
        lead = tuple(shape[1:num_flatten_dims])
        if None in lead:
            raise ValueError(f"fc: num_flatten_dims={num_flatten_dims} keeps axes 1 to "
                             f"{num_flatten_dims - 1} of {input.name!r}, whose sizes are "
                             f"not known (shape {shape})")  # fmt: skip
        x = api.reshape(input, (-1, *lead, in_features))
    w = _param(param_attr, (in_features, size), dtype, f"{name}.w")
    out = api.matmul(x, w)
    if bias_attr is not False:
        out = out + _param(bias_attr, (size,), dtype, f"{name}.b")
    return _act(out, act)


def conv2d(input: Node, num_filters: int, filter_size, stride=1, padding=0,  # noqa: A002
           dilation=1, groups=None, param_attr=None, bias_attr=None, act=None,
           name: str | None = None) -> Node:  # fmt: skip
    """Fluid's ``layers.conv2d`` (NCHW): creates ``<name>.w`` (num_filters, C/groups, kH, kW)
    and ``<name>.b`` (num_filters,), the channels C read from the input's shape."""
    channels = _feature("conv2d", input, (1,), "the filter")
    groups = groups or 1
    kh, kw = (filter_size, filter_size) if isinstance(filter_size, int) else filter_size
    name = name or _unique("conv2d")
    dtype = input.dtype or "float32"
    w = _param(param_attr, (num_filters, channels // groups, kh, kw), dtype, f"{name}.w",
               _init.Xavier())  # fmt: skip
    b = None if bias_attr is False else _param(bias_attr, (num_filters,), dtype, f"{name}.b")
    out = _layers.conv2d(input, w, b, stride=stride, padding=padding, dilation=dilation,
                         groups=groups)  # fmt: skip
    return _act(out, act)


def pool2d(input: Node, pool_size=-1, pool_type: str = "max", pool_stride=1,  # noqa: A002
           pool_padding=0, global_pooling: bool = False, ceil_mode: bool = False,
           exclusive: bool = True, name: str | None = None) -> Node:  # fmt: skip
    """Fluid's ``layers.pool2d``: ``"max"`` or ``"avg"`` pooling (``exclusive``: padding is
    not counted in averages); ``global_pooling`` pools each whole feature map."""
    del name
    if global_pooling:
        shape = _sizes("pool2d", input, "a global pool")
        pool_size = (shape[2], shape[3])
        if None in pool_size:
            raise ValueError(f"pool2d: global pooling needs the height and width of "
                             f"{input.name!r} (shape {shape})")  # fmt: skip
        pool_stride, pool_padding = pool_size, 0
    if pool_type == "max":
        return _layers.max_pool2d(input, pool_size, stride=pool_stride, padding=pool_padding,
                                  ceil_mode=ceil_mode)  # fmt: skip
    if pool_type == "avg":
        return _layers.avg_pool2d(input, pool_size, stride=pool_stride, padding=pool_padding,
                                  ceil_mode=ceil_mode, count_include_pad=not exclusive)  # fmt: skip
    raise ValueError(f"pool2d: pool_type must be 'max' or 'avg', got {pool_type!r}")


def embedding(input: Node, size, is_sparse: bool = False, padding_idx=None,  # noqa: A002
              param_attr=None, dtype: str = "float32") -> Node:  # fmt: skip
    """Fluid's ``layers.embedding``: a table ``size`` = (vocabulary, width), created here,
    whose rows the integer ``input`` picks."""
    del is_sparse
    table = _param(param_attr, tuple(size), dtype, f"{_unique('embedding')}.w", _init.Xavier())
    return _layers.embedding(input, table, padding_idx=padding_idx)


def layer_norm(input: Node, scale: bool = True, shift: bool = True,  # noqa: A002
               begin_norm_axis: int = 1, epsilon: float = 1e-5, param_attr=None,
               bias_attr=None, act=None, name: str | None = None) -> Node:  # fmt: skip
    """Fluid's ``layers.layer_norm``: normalise over the axes from ``begin_norm_axis`` on,
    then scale and shift by parameters created here."""
    shape = _sizes("layer_norm", input, "the scale")
    dims = tuple(shape[begin_norm_axis:])
    _feature("layer_norm", input, range(begin_norm_axis, len(shape)), "the scale")
    name = name or _unique("layer_norm")
    dtype = input.dtype or "float32"
    w = _param(param_attr, dims, dtype, f"{name}.w", _init.Constant(1.0)) if scale else None
    b = _param(bias_attr, dims, dtype, f"{name}.b", _init.Constant(0.0)) if shift else None
    return _act(_layers.layer_norm(input, dims, w, b, eps=epsilon), act)


def batch_norm(input: Node, act=None, is_test: bool = False, momentum: float = 0.9,  # noqa: A002
               epsilon: float = 1e-5, param_attr=None, bias_attr=None,
               name: str | None = None) -> Node:  # fmt: skip
    """Fluid's ``layers.batch_norm`` over axis 1 (NCHW): in training, the batch's statistics,
    and each run moves ``<name>.mean``/``<name>.variance`` towards them (by ``1 - momentum``);
    with ``is_test`` (or in ``program.clone(for_test=True)``), those moving statistics."""
    shape = _sizes("batch_norm", input, "the scale")
    channels = _feature("batch_norm", input, (1,), "the scale")
    name = name or _unique("batch_norm")
    dtype = input.dtype or "float32"
    w = _param(param_attr, (channels,), dtype, f"{name}.w", _init.Constant(1.0))
    b = _param(bias_attr, (channels,), dtype, f"{name}.b", _init.Constant(0.0))
    mean = create_global_var((channels,), 0.0, dtype, f"{name}.mean")
    var = create_global_var((channels,), 1.0, dtype, f"{name}.variance")
    rank = len(shape)
    test = _layers.batch_norm(input, mean, var, w, b, training=False, eps=epsilon, ndim=rank)
    if is_test:
        return _act(test, act)
    out = _layers.batch_norm(input, None, None, w, b, training=True, eps=epsilon, ndim=rank)
    out.for_test = test  # what program.clone(for_test=True) computes instead
    axes = (0, *range(2, rank))
    batch_mean = api.reduce_mean(input, axis=axes)
    centred = input - api.reduce_mean(input, axis=axes, keepdims=True)
    batch_var = api.reduce_mean(centred * centred, axis=axes)
    default_main_program().global_block().updates.extend([
        Update(mean, mean * momentum + batch_mean * (1.0 - momentum)),
        Update(var, var * momentum + batch_var * (1.0 - momentum)),
    ])  # fmt: skip
    return _act(out, act)


def pad(x: Node, paddings, pad_value: float = 0.0, name: str | None = None) -> Node:
    """Fluid's ``layers.pad``: ``paddings`` lists (before, after) for every axis, first axis
    first."""
    del name
    pairs = [paddings[k : k + 2] for k in range(0, len(paddings), 2)]
    flat = [p for before, after in reversed(pairs) for p in (before, after)]
    return _layers.pad(x, flat, value=pad_value)


def append_backward(loss: Node, parameter_list=None, no_grad_set=None) -> list:
    r"""Fluid's ``append_backward``: add $\partial\,\mathrm{loss}/\partial p$ for each
    parameter (default: every parameter of the main program) to the program; returns
    ``[(parameter, gradient), ...]``. Each gradient is named ``<parameter>@GRAD``, so it can
    be fetched by name. ``no_grad_set``: vars (or names) no gradient flows through."""
    program = default_main_program()
    block = program.global_block()
    params = program.all_parameters() if parameter_list is None else [
        block.var(p) if isinstance(p, str) else p for p in parameter_list]  # fmt: skip
    if not params:
        raise ValueError("append_backward: the program has no parameters (make them with "
                         "create_parameter or a layer such as fc), and none were "
                         "given")  # fmt: skip
    stops = [block.var(v) if isinstance(v, str) else v for v in (no_grad_set or ())]
    grads = _gradients(loss, params, stop_gradients=stops)
    for p, g in zip(params, grads):
        g.name = f"{p.name}@GRAD"
    return list(zip(params, grads))


backward = SimpleNamespace(append_backward=append_backward, gradients=_gradients)


def square_error_cost(input: Node, label: Node) -> Node:  # noqa: A002
    """$(\\mathrm{input} - \\mathrm{label})^2$ elementwise."""
    d = input - label
    return d * d


def fill_constant(shape, dtype: str, value: float) -> Node:
    """A constant array of ``shape`` (Fluid's ``layers.fill_constant``)."""
    node = apply_op("fill_constant", shape=tuple(shape), value=value, dtype=dtype)
    node.dtype = dtype
    return node


layers = SimpleNamespace(
    data=data, fc=fc, conv2d=conv2d, pool2d=pool2d, embedding=embedding,
    layer_norm=layer_norm, batch_norm=batch_norm, pad=pad, stop_gradient=stop_gradient,
    reshape=api.reshape, elementwise_add=lambda x, y: x + y,
    elementwise_mul=lambda x, y: x * y, mean=api.reduce_mean, reduce_sum=api.reduce_sum,
    reduce_mean=api.reduce_mean, matmul=api.matmul, relu=api.relu, tanh=api.tanh,
    sigmoid=api.sigmoid, exp=api.exp, log=api.log, softmax=api.softmax,
    softmax_with_cross_entropy=api.softmax_cross_entropy, square_error_cost=square_error_cost,
    fill_constant=fill_constant, create_parameter=create_parameter,
    create_global_var=create_global_var, cond=cond, while_loop=while_loop,
)  # fmt: skip
initializer = SimpleNamespace(
    Constant=_init.Constant, Uniform=_init.Uniform, Normal=_init.Normal, Xavier=_init.Xavier,
    NumpyArrayInitializer=_init.NumpyArrayInitializer,
)  # fmt: skip


class _FluidSGD(_SGD):
    def __init__(self, learning_rate: float, momentum: float = 0.0):
        super().__init__(lr=learning_rate, momentum=momentum)

    def minimize(self, loss, parameter_list=None):
        """Append the gradients and updates of ``parameter_list`` (default: all parameters
        of the main program) to the main program; returns the updates."""
        return super().minimize(loss, parameter_list)


class _FluidAdam(_Adam):
    def __init__(self, learning_rate: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8):  # fmt: skip
        super().__init__(lr=learning_rate, betas=(beta1, beta2), eps=epsilon)

    def minimize(self, loss, parameter_list=None):
        """As :meth:`_FluidSGD.minimize`."""
        return super().minimize(loss, parameter_list)


optimizer = SimpleNamespace(SGD=_FluidSGD, Momentum=_FluidSGD, Adam=_FluidAdam)
