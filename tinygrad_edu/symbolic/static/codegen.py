r"""``compile(outputs)``: a graph turned into straight-line Python source over ``xp``.

The :class:`~tinygrad_edu.symbolic.Executor` *interprets* a graph: for every node of every
run it looks up the op, gathers the inputs from a dict, calls the kernel, stores the result.
A graph compiler does that work once. It walks the graph in execution order and **emits one
line of code per node**, with each value in a local variable, each constant written in place
and each simple op written as the expression a person would write (``v3 = xp.tanh(v2)``).
Values are deleted right after their last use (the memory plan's liveness). What is left to
do at run time is what hand-written numpy would do.

>>> import numpy as np
>>> from tinygrad_edu.symbolic import Variable, gradients
>>> x = Variable("x", shape=(2,), dtype="float64")
>>> y = (x * 2).tanh()
>>> fn = compile([y] + gradients(y, [x]))
>>> print(fn.source)  # doctest: +ELLIPSIS
def compiled(feed_dict):
    _check(feed_dict)
    xp = _namespace()
    x = _feed(xp, _node_x, feed_dict)  # x
    v2 = x * 2  # (x*2)
    del x
    v3 = xp.tanh(v2)  # tanh((x*2))
    del v2
    v4 = xp.ones_like(v3)  # ones_like(tanh((x*2)))
    v6 = v3 * v3  # (tanh((x*2))*tanh((x*2)))
    v7 = 1 - v6  # (1-(tanh((x*2))*tanh((x*2))))
    del v6
    v8 = v4 * v7  # mul#...
    del v4, v7
    v9 = v8 * 2  # (mul#...*2)
    del v8
    return [_out(v3), _out(v9)]
>>> fn({x: np.array([0.0, 1.0])})[1]
array([2.        , 0.14130165])
"""

from __future__ import annotations

import builtins
import itertools
import keyword
import linecache
import math
import re

from ...backend import get_namespace, namespace_of
from ...ops.activation import log_softmax_rows
from ...ops.linalg import matrix_transpose
from ...ops.losses import nll_log_softmax_plain, nll_pick, plain_index
from ..executor import Executor, check_feed_keys, feed_hints, feed_value, run_kernel, to_numpy
from ..graph import topo_sort
from ..memory import UFUNCS, MemoryPlan, supports_out
from ..tensor_node import CONSTANT, PLACEHOLDER, RECORDER, Node, apply_op
from .program import Block

__all__ = ["compile", "CompiledGraph", "TEMPLATES"]

# ops written as an expression; {0}, {1} are the inputs, {name} an attribute
TEMPLATES = {
    "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "div": "{0} / {1}",
    "neg": "-{0}", "pow": "{0} ** {exponent!r}", "exp": "xp.exp({0})", "log": "xp.log({0})",
    "tanh": "xp.tanh({0})", "relu": "xp.maximum({0}, 0.0)", "maximum": "xp.maximum({0}, {1})",
    "ones_like": "xp.ones_like({0})", "zeros_like": "xp.zeros_like({0})",
    "tuple_get": "{0}[{index!r}]", "relu_grad": "{1} * ({0} > 0)",
    "sum": "xp.sum({0}, axis={axis!r}, keepdims={keepdims!r})", "sqrt": "xp.sqrt({0})",
    "mean": "xp.mean({0}, axis={axis!r}, keepdims={keepdims!r})", "equal": "{0} == {1}",
}  # fmt: skip
_DEFAULTS = {name: {"axis": None, "keepdims": False} for name in ("sum", "mean")}
_counter = itertools.count()


class CompiledGraph:
    """A compiled graph: call it with a feed_dict, as ``Executor.run``.

    Attributes:
        source: the generated Python function, as text.
        nodes: the outputs; ``order``: the nodes in the order the code computes them.
    """

    def __init__(self, nodes, device: str, source: str, env: dict, feedable, variables,
                 raw: bool = False, order=None):  # fmt: skip
        self.nodes, self.device, self.source = nodes, device, source
        self.order = topo_sort(nodes) if order is None else order
        #: signature of the feeds -> the code specialised on it (None: it could not be made);
        #: see :meth:`_specialised`
        self.specialisations: dict = {}
        self._specialise = None  # the Variables to key on, when some shape is not declared
        self._free_dead = True
        #: the Variables the code reads (a raw caller feeds exactly these)
        self.needs = {n for n in self.order if n.op is PLACEHOLDER}
        filename = f"<compiled graph {next(_counter)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        hints = feed_hints(self.order)
        env.update(_check=lambda feed: check_feed_keys(feed, feedable, variables),
                   _namespace=lambda: get_namespace(device),
                   _feed=lambda xp, node, feed: feed_value(xp, node, feed, hints),
                   _out=to_numpy, _mT=matrix_transpose, _plain_index=plain_index,
                   _nll_pick=nll_pick, _nll_log_softmax_plain=nll_log_softmax_plain)  # fmt: skip
        if raw:  # the caller feeds the arrays itself: no checks, no copies, results on device
            env.update(_out=_on_device)  # (the source reads feed_dict itself, unchecked)
        exec(builtins.compile(source, filename, "exec"), env)  # noqa: S102 (our own source)
        self._fn = env["compiled"]

    def __call__(self, feed_dict=None) -> list:
        """The outputs for ``feed_dict`` (Variable -> value), as numpy arrays."""
        feed_dict = feed_dict or {}
        fn = self._fn
        if self._specialise is not None:
            special = self._specialised(feed_dict)
            if special is not None:  # (its errors are explained on this graph, fed as it is)
                fn = special._fn
        try:
            return fn(feed_dict)
        except (TypeError, ValueError) as e:
            if "feed_dict" in str(e) or "was not fed" in str(e) or "not used by" in str(e):
                raise
            self._explain(feed_dict, e)
            raise
        except Exception as e:
            self._explain(feed_dict, e)
            raise

    run = __call__

    def _specialised(self, feed_dict):
        """The code for the shapes and dtypes of this feed (NOTE [Specialising on the first
        feed]), made at the first call with them; None: run the generic code."""
        try:
            key = tuple((type(v), v.shape, v.dtype) for v in map(feed_dict.__getitem__,
                                                                  self._specialise))  # fmt: skip
        except (KeyError, AttributeError, TypeError):  # a Variable not fed, a list: generic
            return None
        hit = self.specialisations.get(key, self)
        if hit is not self:
            return hit
        if len(self.specialisations) >= SPECIALISATIONS:
            return None
        made = self.specialisations[key] = _specialise(self, feed_dict)
        return made

    def _explain(self, feed_dict, error) -> None:
        """Re-run with the interpreter, whose errors name the failing node and shapes."""
        try:
            Executor(self.nodes, self.device).run(feed_dict)
        except Exception as better:
            raise better from error


def compile(outputs, device: str = "cpu", free_dead: bool = True,  # noqa: A001
            example=None, donated=(), raw: bool = False,
            feed_as=None) -> CompiledGraph:  # fmt: skip
    """Compile ``outputs`` (a node or a list of nodes) into a Python function.

    Args:
        outputs: the nodes the function returns.
        device: the device to compute on (its namespace is ``xp`` in the source).
        free_dead: ``del`` each value after its last use (keeps peak memory low).
        example: a feed_dict. When given, the memory plan for its shapes is compiled in (see
            :mod:`~tinygrad_edu.symbolic.memory`): the code follows the plan's order and
            writes results into planned buffers with ``out=``; a call with other shapes (or
            on a namespace without ``out=``) runs the plain version, also in ``fn.source``.
        donated: placeholders whose fed arrays the caller gives up (JAX's ``donate_argnums``;
            with ``free_dead``, without ``example``): an elementwise op that is the last
            reader of one, with its shape and dtype, writes its result into that very array
            (``out=``) instead of a new one. A dict maps a placeholder to the output node that
            the caller will store in that array anyway (so its dtype is the array's even
            where the graph does not know it, as in a gradient graph). ``tg.compile`` donates
            the parameters an optimizer step overwrites: ``w - lr * g`` lands in ``w``.
        raw: the caller feeds exactly ``fn.needs``, arrays of the Variables' shapes and dtypes
            on ``device`` (``tg.compile`` makes them so), and takes the results as arrays on
            the device: the feed checks and conversions, and the copy to numpy, are skipped.
        feed_as: placeholder -> the Variable whose fed value it reads (a specialised copy
            of a graph reads the original's feed; NOTE [Specialising on the first feed]).

    A graph with a Variable of unknown shape or dtype is specialised on the shapes and
    dtypes of each call's feed (NOTE [Specialising on the first feed]); ``fn.source`` is the
    generic code, ``fn.specialisations`` the compiled specialisations.

    Returns:
        a :class:`CompiledGraph`: ``fn(feed_dict)`` returns the outputs as numpy arrays;
        ``fn.source`` is the code.
    """
    nodes = [outputs] if isinstance(outputs, Node) else list(outputs)
    order = topo_sort(nodes)
    variables = tuple(n for n in order if n.op is PLACEHOLDER)
    zero_grads = {n.grad_of for n in order if n.grad_of is not None}
    feedable = set(variables) | {v for v in zero_grads if v.op is PLACEHOLDER}
    env: dict = {}
    frees = MemoryPlan(order, nodes).frees if free_dead else [()] * len(order)
    donated = donated if isinstance(donated, dict) else dict.fromkeys(donated)
    donated = donated if free_dead else {}
    source = _function("compiled", nodes, order, frees, env, device, donated=donated, raw=raw,
                       feed_as=feed_as)  # fmt: skip
    if example is not None:
        executor = Executor(nodes, device, plan_memory=True)
        executor.run(example)  # profiles the example's shapes; the plan is made
        (signature, replay), *_ = executor.memory_plan.replays.items()
        generic = source.replace("def compiled(", "def generic(", 1)
        env.update(_signature=signature, _supports_out=supports_out)
        planned = _function("compiled", nodes, replay.order, replay.frees, env, device,
                            replay=replay, variables=variables, raw=raw)  # fmt: skip
        source = planned + "\n\n\n" + generic
    graph = CompiledGraph(nodes, device, source, env, feedable, variables, raw, order)
    graph._free_dead = free_dead
    if not raw and example is None and not donated and feed_as is None and any(
            v.shape is None or v.dtype is None for v in variables) and _clonable(order):
        graph._specialise = variables  # fmt: skip
    return graph


# NOTE [Specialising on the first feed]
# A Variable declared without a shape (or a dtype) leaves every node after it without one,
# and then the code cannot be numpy's plain expression (``_plain``: numpy's dtype is only
# surely PyTorch's where the dtypes are known): each op calls its kernel through
# ``run_kernel``, a wrapper costing microseconds per op (2.84x hand numpy on the 1000-op
# chain of 4 elements). So such a graph, like ``tg.compile``, specialises: at the first call
# with given feed types, shapes and dtypes, the graph is rebuilt on Variables declared with
# them (the ops' shape and dtype rules run again), compiled, and kept under that signature;
# every call computes its feeds' signature (the guard) and runs the code made for it. A new
# signature makes another specialisation, up to SPECIALISATIONS; past that, a feed that is
# not an array, a Variable not fed, a graph with control flow (blocks are not rebuilt) or
# shapes its rules reject run the generic code, whose errors are the interpreter's. The
# specialised code reads the feed by the original Variables and converts it the same way,
# and nothing of one call's values is baked into it, so no call sees another's value.
SPECIALISATIONS = 8  # as tg.compile's cache_size_limit


def _clonable(order) -> bool:
    """Can the graph be rebuilt node by node (no control-flow blocks, no fused kernels)?"""
    return all(n.block is None and getattr(n.op, "kernel", None) is None and not any(
        isinstance(a, Block) for a in n.attrs.values()) for n in order)  # fmt: skip


def _specialise(graph: CompiledGraph, feed_dict):
    """``graph`` compiled for the shapes and dtypes of ``feed_dict``'s values, or None where
    the shape rules reject them (the generic code then raises the interpreter's error)."""
    memo: dict = {}
    feed_as: dict = {}
    recording, RECORDER.block = RECORDER.block, None  # the copies join no Program
    try:
        for v in graph._specialise:
            value = feed_dict[v]
            shape = v.shape if v.shape is not None else tuple(value.shape)
            memo[v] = copy = Node(PLACEHOLDER, name=v.name, shape=shape,
                                  dtype=v.dtype or value.dtype)  # fmt: skip
            copy.persistable = v.persistable
            feed_as[copy] = v
        for n in graph.order:
            if n in memo or n.op is CONSTANT:
                continue
            ins = [memo.get(i, i) for i in n.inputs]
            new = apply_op(n.op, *ins, name=n.name, **n.attrs)
            new.dtype = new.dtype or n.dtype
            if n.op.name == "sum_to" and new.shape == ins[0].shape and new.dtype is not None \
                    and new.dtype == ins[0].dtype:  # fmt: skip
                memo[n] = ins[0]  # a gradient already of its shape: the kernel returns it as is
                continue
            new.is_gradient, new.is_adjoint_sum = n.is_gradient, n.is_adjoint_sum
            new.grad_of = memo.get(n.grad_of, n.grad_of)
            memo[n] = new
    except Exception:  # noqa: BLE001 (a shape rule rejects the feed: the generic code says so)
        return None
    finally:
        RECORDER.block = recording
    nodes = [memo.get(n, n) for n in graph.nodes]
    return compile(nodes, graph.device, free_dead=graph._free_dead, feed_as=feed_as)


def _on_device(value):
    """A raw program's result: an array on its device (numpy scalars as 0-d arrays)."""
    if hasattr(value, "shape") or isinstance(value, tuple | list | dict):
        return value
    return namespace_of(value).asarray(value)


def _function(fname, nodes, order, frees, env, device, replay=None, variables=(),
              donated=None, raw=False, feed_as=None) -> str:  # fmt: skip
    """The source of one function computing ``nodes`` in ``order``, freeing ``frees``; with a
    ``replay`` (a memory plan), writing planned results into buffers ``b0``, ``b1`` ...; an
    op that is the last reader of a ``donated`` placeholder writes into its array. ``raw``
    (see :func:`compile`): the feeds are read from ``feed_dict`` as they are, unchecked, and
    the results with dimensions are returned as they are (arrays)."""
    names: dict = {}
    taken = {"xp", "feed_dict", "compiled", "generic"}
    lines = [f"def {fname}(feed_dict):", "    _check(feed_dict)", "    xp = _namespace()"]
    lines = lines[:1] + lines[2:] if raw else lines
    feed = "feed_dict[_node_{}]" if raw else "_feed(xp, _node_{}, feed_dict)"
    if replay is not None:  # every feed first: the plan holds only for the example's shapes
        for node in variables:
            names[node] = name = _variable_name(node, len(names), taken, prefix="in")
            env[f"_node_{name}"] = node
            lines.append(f"    {name} = {feed.format(name)}")
        shapes = ", ".join(f"({names[v]}.shape, str({names[v]}.dtype))" for v in variables)
        lines += [
            f"    if not _supports_out(xp) or ({shapes},) != _signature:",
            "        return generic(feed_dict)  # other shapes: the plain version",
        ]
    allocated: set = set()
    labels: dict = {}  # (labels' name, classes, ignore_index) -> the name of their index
    for k, node in enumerate(order):
        value = node.attrs.get("value") if node.op is CONSTANT else None
        if type(value) in (int, float) and math.isfinite(value):
            names[node] = repr(value) if value >= 0 else f"({value!r})"  # written in place
            continue
        if node not in names:  # (with a plan, the feeds were read at the top)
            names[node] = name = _variable_name(node, k, taken)
            args = [names[i] for i in node.inputs]
            b = replay.buffer[k] if replay is not None else None
            if node.op is PLACEHOLDER:
                env[f"_node_{name}"] = node if feed_as is None else feed_as.get(node, node)
                expr = feed.format(name)
            elif node.op is CONSTANT:
                env[f"_const_{name}"] = node.op.forward(get_namespace(device), value=value)
                expr = f"_const_{name}"
            elif donated and (into := _donor(node, frees[k], donated)) is not None:
                expr = _out_expression(node, args, names[into])
            elif b is not None:
                if b not in allocated:
                    allocated.add(b)
                    shape, dtype = replay.specs[b]
                    lines.append(f"    b{b} = xp.empty({tuple(shape)}, dtype=xp.{dtype})")
                expr = _out_expression(node, args, f"b{b}")
            else:
                expr = _expression(node, args, env, name)
                expr = _nll_expression(node, args, expr, device, labels, lines, taken) or expr
            lines.append(f"    {name} = {expr}  # {_comment(node)}")
            if replay is not None and replay.adopt[k] is not None:  # its new array: a buffer
                allocated.add(replay.adopt[k])
                lines.append(f"    b{replay.adopt[k]} = {name}")
        dead = [names[d] for d in frees[k] if not _is_literal(names[d])]
        if replay is not None:
            dead += [f"b{d}" for d in replay.drops[k]]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    outs = [names[n] if raw and n.shape and n.op is not CONSTANT else f"_out({names[n]})"
            for n in nodes]  # fmt: skip
    lines.append(f"    return [{', '.join(outs)}]")
    return "\n".join(lines)


def _donor(node: Node, dying, donated):
    """The donated placeholder ``node`` may write its result into: one of its inputs that
    dies at this step, of the result's shape and floating dtype (or the output the caller
    stores in that array), for an op that is one ufunc (numpy computes elementwise ufuncs
    correctly over an input that is also ``out``)."""
    if node.op.name not in UFUNCS or not node.shape:
        return None
    for i in node.inputs:
        if i in donated and i in dying and i.shape == node.shape and (donated[i] is node or (
                i.dtype == node.dtype and (i.dtype or "").startswith("float"))):  # fmt: skip
            return i
    return None


def _out_expression(node: Node, args, buffer: str) -> str:
    """The call that computes ``node`` into ``buffer`` (as :func:`memory.write_out`)."""
    name = node.op.name
    if name == "relu":
        return f"xp.maximum({args[0]}, 0.0, out={buffer})"
    if name == "relu_grad":
        return f"xp.multiply({args[1]}, {args[0]} > 0, out={buffer})"
    return f"xp.{UFUNCS[name]}({', '.join(args)}, out={buffer})"


def render(name: str, args, attrs: dict, dtype) -> str:
    """The numpy expression of op ``name`` on the values named ``args`` (its template), as the
    op computes it: ``x ** 3`` in float32 or float64 is two products, as ``ops.Pow`` (and
    PyTorch) compute it, not numpy's ``powf``, whose last bit can differ."""
    if name == "pow" and attrs.get("exponent") == 3 and dtype in ("float32", "float64"):
        return f"{args[0]} * {args[0]} * {args[0]}"
    return TEMPLATES[name].format(*args, **{**_DEFAULTS.get(name, {}), **attrs})


def _expression(node: Node, args, env: dict, name: str) -> str:
    template = TEMPLATES.get(node.op.name)
    if template is not None and len(args) == node.op.arity and _plain(node):
        return render(node.op.name, args, node.attrs, node.dtype)
    if node.op.name == "fill_constant" and isinstance(node.attrs.get("dtype"), str):
        shape, value = tuple(node.attrs["shape"]), node.attrs["value"]
        if type(value) in (bool, int, float) and math.isfinite(value):
            return f"xp.full({shape!r}, {value!r}, dtype=xp.{node.attrs['dtype']})"
    if node.op.name == "log_softmax" and _float_rows(node.inputs[0], node.dtype) and type(
            node.attrs.get("axis", -1)) is int:  # fmt: skip
        env["_log_softmax_rows"] = log_softmax_rows  # the kernel's lines, no dtype fix-up
        return f"_log_softmax_rows(xp, {args[0]}, {node.attrs.get('axis', -1)!r})"
    if node.op.name == "matmul" and len(args) == 2 and _plain(node):
        a, b = args
        a = f"_mT(xp, {a})" if node.attrs.get("trans_A") else a
        b = f"_mT(xp, {b})" if node.attrs.get("trans_B") else b
        return f"xp.matmul({a}, {b})"
    kernel = f"_{node.op.name}_{name}"
    fused = getattr(node.op, "kernel", None)  # a fusion group (static/fusion.py): its loops
    env[kernel] = fused if fused is not None else _bound(node)
    if fused is not None:
        return f"{kernel}({', '.join(args)})"
    return f"{kernel}(xp{''.join(', ' + a for a in args)})"


def _float_rows(x: Node, dtype) -> bool:
    """Is ``x`` a non-empty floating array of known shape and of ``dtype``: where the kernels
    of ``log_softmax`` and of the plain case of ``nll_loss`` give an array of ``x``'s dtype,
    with no need of :func:`~.executor.run_kernel`'s dtype fix-up?"""
    return (bool(x.shape) and all(type(d) is int and d > 0 for d in x.shape)
            and (x.dtype or "").startswith("float") and x.dtype == dtype)  # fmt: skip


def _nll_expression(node: Node, args, kernel: str, device, labels: dict, lines, taken):
    """``nll_loss`` and ``nll_log_softmax_grad`` of a batch (2-D log-probabilities, classes on
    dim 1), without class weights: a test of the labels (once per labels, classes and
    ``ignore_index``, see NOTE [The plain case of nll_loss] in ``ops/losses.py``) and then the
    kernels' plain-case lines, or the kernel itself where the labels are not plain (it raises
    for a class out of range). None for the other cases."""
    name, attrs = node.op.name, node.attrs
    if name not in ("nll_loss", "nll_log_softmax_grad") or attrs.get("weight") is not None:
        return None
    logp, reduction = node.inputs[-2], attrs.get("reduction", "mean")
    g = node.inputs[0] if name == "nll_log_softmax_grad" else logp
    if not (_float_rows(logp, g.dtype) and len(logp.shape) == 2 and node.inputs[-1].shape
            == logp.shape[:1] and reduction in ("mean", "sum", "none")):  # fmt: skip
        return None
    if name == "nll_log_softmax_grad" and (
            reduction == "none" or attrs.get("axis", -1) % 2 != 1 or not hasattr(
                getattr(get_namespace(device), "add", None), "at")):  # fmt: skip
        return None
    target = args[-1]
    key = (target, logp.shape[1], attrs.get("ignore_index", -100))
    if key not in labels:
        labels[key] = index = _variable_name(node, len(taken), taken, prefix="rows")
        lines.append(f"    {index} = _plain_index(xp, {target}, {key[1]!r}, {key[2]!r})")
    index, n = labels[key], f"{target}.shape[0]"
    if name == "nll_loss":
        plain = f"_nll_pick(xp, {args[0]}, {index}, {n}, {reduction!r})"
        plain = f"xp.asarray({plain})" if reduction != "none" else plain
    else:
        plain = f"_nll_log_softmax_plain(xp, {args[0]}, {args[1]}, {index}, {n}, {reduction!r})"
    return f"{kernel} if {index} is None else {plain}"


def _plain(node: Node) -> bool:
    """May the node be written as numpy's plain expression? Only where numpy's dtype is
    surely PyTorch's (the executor's, see :func:`~.executor.run_kernel`): the result has
    dimensions (numpy gives a weak scalar for 0-d results), and the inputs' dtypes are known
    to promote alike. Elsewhere the op's kernel runs, with the one promotion rule."""
    name, ins = node.op.name, node.inputs
    if name in ("ones_like", "zeros_like", "tuple_get"):
        return True
    if not node.shape:  # unknown or 0-d
        return False
    if name == "neg":
        return True
    if name == "relu_grad":  # g * (y > 0): g's floating dtype
        return (ins[1].dtype or "").startswith("float") and ins[1].shape == node.shape
    if name == "matmul":  # numpy's product of one dtype is the kernel's (with dimensions)
        return len({i.dtype for i in ins}) == 1 and (ins[0].dtype or "").startswith("float")
    if name in ("sum", "mean"):  # numpy sums integers in its own dtypes: floats only
        empty = ins[0].shape is None or 0 in ins[0].shape  # (the kernel's mean of nothing)
        return (ins[0].dtype or "").startswith("float") and node.dtype == ins[0].dtype and (
            name == "sum" or not empty)  # fmt: skip
    weak = [i for i in ins if i.op is CONSTANT and i.dtype is None]
    strong = [i for i in ins if i not in weak]
    dtypes = {i.dtype for i in strong}
    if len(dtypes) != 1 or None in dtypes or "float" not in next(iter(dtypes)):
        # integers or unknown dtypes: only a Python int meets an integer alike in both
        return (name in ("add", "sub", "mul") and len(strong) == 1 and len(weak) == 1
                and type(weak[0].attrs["value"]) is int)  # fmt: skip
    return True  # one floating dtype, and Python numbers (weak in both)


def _bound(node: Node):
    """The op's forward kernel with the node's attributes (read at each call, so a
    ``while_loop`` sees the values a gradient built later asks it to save), giving the
    executor's dtypes (:func:`~.executor.run_kernel`)."""
    op, attrs = node.op, node.attrs
    return lambda xp, *args: run_kernel(xp, op, args, attrs)


def _variable_name(node: Node, k: int, taken: set, prefix: str = "v") -> str:
    """A Variable's own name when it is a free identifier, else ``v<k>`` (made unique)."""
    name = node.name if node.op is PLACEHOLDER else ""
    if not (name.isidentifier() and not keyword.iskeyword(name) and name not in taken):
        name = f"{prefix}{k}"
        while name in taken:
            name += "_"
    taken.add(name)
    return name


def _is_literal(name: str) -> bool:
    return not name.isidentifier()  # a number written in place: nothing to delete


def _comment(node: Node) -> str:
    text = re.sub(r"\s+", " ", node.name)
    return text if len(text) <= 60 else text[:57] + "..."
