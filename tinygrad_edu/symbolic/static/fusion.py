r"""Fusion: elementwise chains and their row reductions as one loop kernel each.

The numpy code generator (:mod:`~tinygrad_edu.symbolic.codegen`) runs one numpy call per op:
``tanh(x @ w + b)`` reads and writes three whole arrays, Adam's update of one parameter about
fifteen. A fusing compiler (tinygrad's kernels, TorchInductor, XLA) walks the array **once**:
it groups the elementwise ops that follow each other, and the reductions over the last axis
that sit between them (softmax's and layer_norm's row sums and means), into a **kernel**, a
loop nest that computes every value of the group for one element while it is in a register.
Matrix products stay BLAS calls, and every op the fuser does not know stays a numpy line.

Each kernel is written as readable Python loops (:attr:`Kernel.source`) and compiled with
numba (:mod:`~tinygrad_edu.symbolic.static.kernels`, cached on disk). A kernel's arrays are seen as
``(rows, columns)``: the last axis is the columns, the others are flattened into rows. Its
loop over the columns runs once per **phase**: a row sum or mean is complete at the end of
a phase, and the values that read it are computed in the next.

>>> from tinygrad_edu.symbolic import Variable
>>> x = Variable("x", shape=(4, 3), dtype="float64")
>>> b = Variable("b", shape=(3,), dtype="float64")
>>> y = ((x + b).tanh() * 2.0).sum(axis=-1, keepdims=True)
>>> (k,) = kernels_of([y])
>>> k.ops
['add', 'tanh', 'mul', 'sum']
>>> print(k.source)
def kernel(R, C, a0, a1, o3):
    for r in range(R):
        acc3 = 0.0
        for c in range(C):
            v0 = a0[r, c] + a1[0, c]  # add
            v1 = math.tanh(v0)  # tanh
            v2 = v1 * 2.0  # mul
            acc3 += v2
        v3 = acc3  # sum
        o3[r, 0] = v3

Exactness: a kernel computes the same formulas as the numpy ops, in the same dtype, but sums
in float64 and in another order (one running sum per row, where numpy sums pairwise), and
numba may contract ``a * b + c`` differently. Results agree with the numpy program's to a
few units in the last place of the dtype: ``rtol=1e-5`` for float32, ``1e-12`` for float64
(the tests' tolerance). A kernel that numba cannot compile, or that fails when it runs, is
replaced by the numpy code of its ops (:meth:`Kernel.fallback`): a fused program never
gives another answer than the plain one.
"""

from __future__ import annotations

import contextvars
import math
import os
import time

import numpy as np

from ...ops.base import Op
from ..graph import topo_sort
from ..tensor_node import CONSTANT, Node, Variable
from . import codegen, kernels
from .control_flow import TUPLE_GET

__all__ = ["Kernel", "kernels_of", "compile_fused", "ELEMENTWISE", "backend", "choose",
           "BACKEND_ENV"]

#: the code generator of the ``tg.compile`` call being compiled, ``"fuse"`` or ``"numpy"``
#: (what :func:`choose` made of its ``backend=``; set around its trace and run)
backend = contextvars.ContextVar("tinygrad_edu_compile_backend", default="numpy")

#: pins what the default ``backend="inductor"`` means: ``numpy`` or ``fuse`` (the test suite
#: pins ``numpy`` for the tests about other things; an explicit ``backend=`` is not affected)
BACKEND_ENV = "TINYGRAD_EDU_COMPILE_BACKEND"
#: the spellings of the plain numpy code generator: PyTorch's ``"eager"`` and ``"aot_eager"``
#: also run the captured graphs one op (here one numpy call) at a time
NUMPY_BACKENDS = ("numpy", "eager", "aot_eager")
_NEEDS_NUMBA = ('needs numba, which is not installed: install the fuse extra (pip install '
                '"tinygrad_edu[fuse]", or pip install numba), or pass backend="numpy"')


def choose(name) -> str:
    """The code generator ``tg.compile(fn, backend=name)`` uses, ``"fuse"`` or ``"numpy"``.

    ``"inductor"`` (PyTorch's default name) is the best this library has: the fusing
    generator where numba is installed, else the numpy one (the same answers, to rounding);
    ``$TINYGRAD_EDU_COMPILE_BACKEND`` (``numpy`` or ``fuse``) pins it. ``"fuse"`` insists
    on fusion (an error without numba); ``"numpy"`` (or PyTorch's ``"eager"``,
    ``"aot_eager"``) is the plain generator, one numpy call per op."""
    if name == "inductor":
        pinned = os.environ.get(BACKEND_ENV, "").strip().lower()
        if not pinned:
            return "fuse" if kernels.available() else "numpy"
        if pinned not in ("fuse", "numpy"):
            raise ValueError(f"${BACKEND_ENV} is {pinned!r}; set it to 'numpy' or 'fuse' (or "
                             "unset it: fusion where numba is installed)")  # fmt: skip
        if pinned == "fuse" and not kernels.available():
            raise ImportError(f"tg.compile: ${BACKEND_ENV}=fuse {_NEEDS_NUMBA}")
        return pinned
    if name == "fuse":
        if not kernels.available():
            raise ImportError(f'tg.compile: backend="fuse" {_NEEDS_NUMBA}')
        return "fuse"
    if name in NUMPY_BACKENDS:
        return "numpy"
    raise ValueError(
        f"tg.compile: unknown backend {name!r}; this library has \"inductor\" (the default: "
        "fused loop kernels where numba is installed, else the numpy code), \"fuse\" (fused "
        "kernels, numba required) and \"numpy\" (also spelled \"eager\" or \"aot_eager\": "
        "one numpy call per op)"
    )

# one element's value from its inputs' (a, b); D(x) is the kernel's dtype
ELEMENTWISE = {
    "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "div": "{0} / {1}",
    "neg": "-{0}", "exp": "math.exp({0})", "log": "math.log({0})", "tanh": "math.tanh({0})",
    "sqrt": "math.sqrt({0})", "pow": "{0} ** {exponent}",
    # numpy's maximum propagates nan: so do these
    "relu": "{0} if {0} > 0 or {0} != {0} else {zero}",
    "maximum": "{0} if {0} >= {1} or {0} != {0} else {1}",
    "relu_grad": "{1} * ({one} if {0} > 0 else {zero})",
}  # fmt: skip
REDUCTIONS = ("sum", "mean")
_FLOATS = ("float32", "float64")


class _Fused(Op):
    """The op of one kernel in the rewritten graph (not registered: it exists per kernel)."""

    name = "fused_kernel"
    differentiable = False

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.arity = len(kernel.inputs)

    def forward(self, xp, *inputs):
        return self.kernel(*inputs)


class Kernel:
    """One fusion group: its member nodes (in order), its inputs (nodes computed outside) and
    outputs (members read outside or returned), and the generated loop nest.

    Attributes:
        name: ``kernel0``, ``kernel1`` ... in the program.
        members: the fused nodes, in execution order; ``ops``: their op names.
        shape: the iteration space (the shape of the full-size members).
        source: the loop nest, as Python (what numba compiles).
        compile_seconds: the first call's time (numba compiling, or loading its disk cache),
            None before; ``cached``: whether numba found the machine code on disk.
        fell_back: True once the kernel runs as numpy code (see :meth:`fallback`).
    """

    def __init__(self, name, members, inputs, outputs, shape, dtype):
        self.name, self.members, self.inputs, self.outputs = name, members, inputs, outputs
        self.shape, self.dtype = tuple(shape), dtype
        self.ops = [n.op.name for n in members]
        self.rows = math.prod(self.shape[:-1])
        self.cols = self.shape[-1]
        self.source, self._views = _source(self)
        #: output index -> input index: the output is written into that input's array (a
        #: parameter the program overwrites anyway, see ``compile_fused``'s ``donated``)
        self.inplace: dict = {}
        self.compile_seconds = None
        self.cached = False
        self.fell_back = False
        self._fn = self._numpy = None

    def __repr__(self) -> str:
        return f"<{self.name}: {' '.join(self.ops)} over {self.shape}>"

    def __call__(self, *arrays):
        if self._fn is None and not self.fell_back:
            return self._first(arrays)
        if self.fell_back:
            return self._numpy_run(arrays)
        return self._run(arrays)

    def _run(self, arrays, inplace: bool = True):
        R, C = self.rows, self.cols
        views = [a.reshape(v) if v is not None else _full(a, self.shape, R, C)
                 for a, v in zip(arrays, self._views)]  # fmt: skip
        outs, results = [], []
        for j, n in enumerate(self.outputs):
            i = self.inplace.get(j) if inplace else None
            if i is not None and arrays[i].flags.c_contiguous:  # (its 2-D view is a view)
                outs.append(views[i])
                results.append(arrays[i])
            else:
                outs.append(np.empty((R, C if n.shape == self.shape else 1), dtype=self.dtype))
                results.append(outs[-1].reshape(n.shape))
        self._fn(R, C, *views, *outs)
        return tuple(results)

    def _first(self, arrays):
        start = time.perf_counter()
        try:
            with kernels.compiling(self.source):  # (one process at a time per kernel file)
                self._fn = kernels.load(self.source)
                if self._fn is None:
                    raise ImportError("numba is not installed")
                # (new arrays the first time: should it fail, the inputs are intact for numpy)
                result = self._run(arrays, inplace=False)
            self.cached = bool(getattr(getattr(self._fn, "stats", None), "cache_hits", None))
        except Exception:  # numba could not type or compile it: the numpy code, same answer
            self.fell_back, self._fn = True, None
            result = self._numpy_run(arrays)
        self.compile_seconds = time.perf_counter() - start
        return result

    def fallback(self):
        """The members as numpy code (the plain code generator's), fed the inputs."""
        if self._numpy is None:
            memo, feeds = {}, []
            for i in self.inputs:
                memo[i] = p = Variable(f"in{len(feeds)}", shape=i.shape, dtype=i.dtype)
                feeds.append(p)
            for n in self.members:
                memo[n] = Node(n.op, tuple(memo.get(i, i) for i in n.inputs), n.attrs,
                               name=n.name, shape=n.shape, dtype=n.dtype)  # fmt: skip
            compiled = codegen.compile([memo[o] for o in self.outputs], raw=True)
            self._numpy = (compiled, feeds)
        return self._numpy

    def _numpy_run(self, arrays):
        compiled, feeds = self.fallback()
        return tuple(compiled(dict(zip(feeds, arrays))))

    def describe(self) -> str:
        """One line: the name, the ops fused, the shape, the compile time."""
        if self.compile_seconds is None:
            when = "not run yet"
        elif self.fell_back:
            when = "runs as numpy code (numba could not compile it)"
        else:
            when = f"{'loaded from disk cache' if self.cached else 'compiled'} in " \
                   f"{self.compile_seconds * 1000:.0f} ms"  # fmt: skip
        return f"{self.name}: {' + '.join(self.ops)} over {self.shape}, {when}"


def _full(a, shape, R, C):
    return np.broadcast_to(a, shape).reshape(R, C)


def _fusable(n: Node) -> bool:
    """Can ``n`` be computed inside a kernel (an elementwise op or a last-axis reduction of
    one floating dtype, with known shapes)?"""
    name, shape = n.op.name, n.shape
    if n.dtype not in _FLOATS or not shape or not all(type(d) is int and d > 0 for d in shape):
        return False
    for i in n.inputs:
        if i.op is CONSTANT and type(i.attrs.get("value")) in (int, float):
            if not math.isfinite(i.attrs["value"]):
                return False
        elif i.dtype != n.dtype or i.shape is None:
            return False
    if name in REDUCTIONS:
        (x,) = n.inputs
        axis, ndim = n.attrs.get("axis"), len(x.shape)
        axis = axis[0] if isinstance(axis, tuple | list) and len(axis) == 1 else axis
        return (type(axis) is int and axis % ndim == ndim - 1 and n.attrs.get("keepdims") is True
                and x.shape[-1] > 1)  # fmt: skip
    if name not in ELEMENTWISE or len(n.inputs) != n.op.arity or not codegen._plain(n):
        return False
    return name != "pow" or type(n.attrs.get("exponent")) in (int, float)


def _kind(n: Node, shape: tuple):
    """``"full"`` (one value per element of ``shape``), ``"row"`` (one per row) or None."""
    if n.op.name in REDUCTIONS:
        return "row" if n.inputs[0].shape == shape and shape[-1] > 1 else None
    if n.shape == shape:
        return "full"
    if shape[-1] > 1 and n.shape == shape[:-1] + (1,):
        return "row"
    return None


def kernels_of(outputs, min_ops: int = 2) -> list:
    """The fusion groups of the graph of ``outputs``, as :class:`Kernel` objects in execution
    order. A node joins the groups of its inputs when it is fusable, of those groups' shape
    (or a row of it), and nothing read from outside depends on them (a kernel runs at once,
    so it cannot wait for a value computed from itself); groups it joins are merged into one
    (Adam's update: the two moments' chains meet in the parameter's).
    Groups of fewer than ``min_ops`` ops stay numpy lines."""
    outputs = [outputs] if isinstance(outputs, Node) else list(outputs)
    order = topo_sort(outputs)
    group_of: dict = {}  # node -> its group (an id; find() gives the merged group's)
    shapes: list = []
    parent: list = []  # union-find: groups merged by a node that reads both
    ext: dict = {}  # group -> the nodes its members read from outside it (and members)
    deps: dict = {}  # node -> the groups it depends on (ids, possibly merged since)

    def find(g):
        while parent[g] != g:
            parent[g] = g = parent[parent[g]]
        return g

    def convex(groups, n) -> bool:
        """May ``groups`` and ``n`` be one kernel: does nothing they read from outside
        depend on one of them?"""
        inside = set(groups)
        for e in set(n.inputs).union(*(ext[g] for g in groups)):
            if e in group_of and find(group_of[e]) in inside:
                continue  # a member
            if any(find(h) in inside for h in deps[e]):
                return False
        return True

    for n in order:
        d = {find(g) for i in n.inputs for g in deps[i]}
        if _fusable(n):
            candidates = []
            for i in n.inputs:
                g = group_of.get(i)
                g = None if g is None else find(g)
                if g is None or g in candidates or _kind(n, shapes[g]) is None:
                    continue
                if n.op.name in REDUCTIONS and find(group_of[n.inputs[0]]) != g:
                    continue
                candidates.append(g)
            chosen: list = []
            for g in candidates:  # every group n can join without a cycle: merged
                if (not chosen or shapes[g] == shapes[chosen[0]]) and convex(chosen + [g], n):
                    chosen.append(g)
            if chosen:
                gid = chosen[0]
                for g in chosen[1:]:
                    parent[g] = gid
                    ext[gid] |= ext.pop(g)
            else:
                shapes.append(n.inputs[0].shape if n.op.name in REDUCTIONS else n.shape)
                gid = len(shapes) - 1
                parent.append(gid)
                ext[gid] = set()
            group_of[n] = gid
            ext[gid] |= set(n.inputs) | {n}
            d.add(gid)
        deps[n] = frozenset(d)
    members: dict = {}
    for n in order:
        if n in group_of:
            members.setdefault(find(group_of[n]), []).append(n)
    readers: dict = {}
    for n in order:
        for i in n.inputs:
            readers.setdefault(i, []).append(n)
    wanted = set(outputs)
    out = []
    for gid, group in members.items():
        if len(group) < min_ops:
            continue
        inside = set(group)
        inputs = []
        for n in group:
            for i in n.inputs:
                if i not in inside and i not in inputs and not _literal(i):
                    inputs.append(i)
        outs = [n for n in group if n in wanted or any(r not in inside for r in readers.get(n, ()))]
        out.append(Kernel(f"kernel{len(out)}", group, inputs, outs, shapes[gid], group[0].dtype))
    return out


def _literal(n: Node) -> bool:
    return n.op is CONSTANT and type(n.attrs.get("value")) in (int, float)


def _number(value, dtype: str) -> str:
    text = repr(float(value))
    return text if dtype == "float64" else f"np.float32({text})"


def _source(k: Kernel):
    """The loop nest of kernel ``k`` and, per input, the 2-D shape it is viewed as (None:
    broadcast to the full shape first)."""
    shape, dtype = k.shape, k.dtype
    inside = set(k.members)
    local = {n: f"v{j}" for j, n in enumerate(k.members)}
    index = {n: j for j, n in enumerate(k.members)}
    args, views, read = [], [], {}
    full_row = shape[:-1] + (1,)
    for j, i in enumerate(k.inputs):
        name = f"a{j}"  # (not the inputs' names: one source, one compile, for every parameter)
        args.append(name)
        s = (1,) * (len(shape) - len(i.shape)) + tuple(i.shape)
        if s == shape:
            views.append((k.rows, k.cols))
            read[i] = f"{name}[r, c]"
        elif all(d == 1 for d in s):
            views.append((1, 1))
            read[i] = f"{name}[0, 0]"
        elif s == full_row:
            views.append((k.rows, 1))
            read[i] = f"{name}[r, 0]"
        elif all(d == 1 for d in s[:-1]):
            views.append((1, k.cols))
            read[i] = f"{name}[0, c]"
        else:
            views.append(None)
            read[i] = f"{name}[r, c]"
    # the phase in which each member's value is known (a reduction: after its phase's loop)
    phase: dict = {}
    for n in k.members:
        p = max([phase[i] for i in n.inputs if i in inside], default=0)
        phase[n] = p + 1 if n.op.name in REDUCTIONS else p
    kind = {n: _kind(n, shape) for n in k.members}
    outs = {n: f"o{index[n]}" for n in k.outputs}
    # full values read in a later phase are kept in a row buffer (or their output array)
    later = set()
    for n in k.members:
        for i in n.inputs:
            if i in inside and kind[i] == "full":
                used = phase[n] - (n.op.name in REDUCTIONS)
                if used > phase[i]:
                    later.add(i)
    one, zero = _number(1.0, dtype), _number(0.0, dtype)

    def value(i, n):
        if _literal(i):
            return _number(i.attrs["value"], dtype)
        if i in inside:
            if kind[i] == "full" and phase[i] < phase[n] - (n.op.name in REDUCTIONS):
                return f"{outs[i]}[r, c]" if i in outs else f"t{index[i]}[c]"
            return local[i]
        return read[i] if kind[n] == "full" or n.op.name in REDUCTIONS else \
            read[i].replace(", c]", ", 0]")  # fmt: skip

    lines = [f"def kernel(R, C, {', '.join(args + list(outs.values()))}):"]
    lines += [f"    t{index[n]} = np.empty(C, dtype=np.{dtype})" for n in k.members
              if n in later and n not in outs]  # fmt: skip
    lines.append("    for r in range(R):")
    for p in range(max(phase.values()) + 1):
        rows = [n for n in k.members if kind[n] == "row" and phase[n] == p]
        for n in rows:  # the reductions done in the previous phase, then row values
            if n.op.name in REDUCTIONS:
                total = f"acc{index[n]} / C" if n.op.name == "mean" else f"acc{index[n]}"
                total = total if dtype == "float64" else f"np.float32({total})"
                lines.append(f"        {local[n]} = {total}  # {n.op.name}")
            else:
                lines.append(f"        {local[n]} = {_expr(n, value, one, zero, dtype)}"
                             f"  # {n.op.name}")  # fmt: skip
            if n in outs:
                lines.append(f"        {outs[n]}[r, 0] = {local[n]}")
        body = [n for n in k.members if (kind[n] == "full" and phase[n] == p) or (
            n.op.name in REDUCTIONS and phase[n] == p + 1)]  # fmt: skip
        if not body:
            continue
        lines += [f"        acc{index[n]} = 0.0" for n in body if n.op.name in REDUCTIONS]
        lines.append("        for c in range(C):")
        stores = []  # written last: an output may be an input's own array (see Kernel.inplace)
        for n in body:
            if n.op.name in REDUCTIONS:
                lines.append(f"            acc{index[n]} += {value(n.inputs[0], n)}")
                continue
            lines.append(f"            {local[n]} = {_expr(n, value, one, zero, dtype)}"
                         f"  # {n.op.name}")  # fmt: skip
            if n in outs:
                stores.append(f"            {outs[n]}[r, c] = {local[n]}")
            elif n in later:
                lines.append(f"            t{index[n]}[c] = {local[n]}")
        lines += stores
    return "\n".join(lines), views


def _expr(n: Node, value, one, zero, dtype) -> str:
    args = [value(i, n) for i in n.inputs]
    attrs = {"one": one, "zero": zero}
    if n.op.name == "pow":
        attrs["exponent"] = _number(n.attrs["exponent"], dtype)
    return ELEMENTWISE[n.op.name].format(*args, **attrs)


def compile_fused(outputs, device: str = "cpu", donated=(), raw: bool = False):
    """:func:`~tinygrad_edu.symbolic.codegen.compile` with every fusion group of the graph
    computed by its kernel. Returns the compiled graph with ``kernels`` (the
    :class:`Kernel` objects) and ``fused_nodes`` (the rewritten outputs); ``nodes`` stays
    the graph before fusion (what the drawings show, and what an error is explained with).
    On another device than the CPU, or without numba, it is the plain compiled graph (with
    no kernels)."""
    nodes = [outputs] if isinstance(outputs, Node) else list(outputs)
    donated = donated if isinstance(donated, dict) else dict.fromkeys(donated)
    found = kernels_of(nodes) if device == "cpu" and kernels.available() else []
    if not found:
        plain = codegen.compile(nodes, device=device, donated=donated, raw=raw)
        plain.kernels, plain.fused_nodes = [], nodes
        return plain
    _donate(found, nodes, donated)
    rewritten = _rewrite(nodes, found)
    # a donated array is written by numpy lines only (a kernel's outputs are new arrays)
    fused_donated = {p: rewritten[nodes.index(o)] if o in nodes else o
                     for p, o in donated.items()}  # fmt: skip
    compiled = codegen.compile(rewritten, device=device, donated=fused_donated, raw=raw)
    compiled.kernels, compiled.fused_nodes, compiled.nodes = found, rewritten, nodes
    return compiled


def _donate(found, nodes, donated) -> None:
    """Let a kernel write an output into a donated placeholder's array (as the numpy code's
    ``out=``): where the caller stores that output into that array anyway (``w - lr * g``
    lands in ``w``), the kernel is the array's last reader (every other one computes one of
    the kernel's inputs, so it has run), the output is of the array's shape and dtype, and
    has no row reductions (each element is read, in the same loop step, before the kernel's
    stores at the end of that step overwrite it)."""
    if not donated:
        return
    readers: dict = {}
    for n in topo_sort(nodes):
        for i in n.inputs:
            readers.setdefault(i, set()).add(n)
    for k in found:
        if any(n.op.name in REDUCTIONS for n in k.members):
            continue
        inside = set(k.members)
        for p, target in donated.items():
            if p not in k.inputs or p in nodes:
                continue
            others = readers.get(p, set()) - inside
            if others and not others <= set(topo_sort(list(k.inputs))):
                continue  # a reader that may run after the kernel: it must see the old array
            for j, o in enumerate(k.outputs):
                if (o is target or target is None) and o.shape == p.shape == k.shape and \
                        o.dtype == p.dtype and j not in k.inplace:  # fmt: skip
                    k.inplace[j] = k.inputs.index(p)
                    break


def _rewrite(nodes, found) -> list:
    """The graph of ``nodes`` with each kernel's members replaced by one call of the kernel
    and a ``tuple_get`` per output, and the nodes that read one rebuilt. Built in an order of
    the graph whose groups are single steps (Kahn's algorithm; the groups are convex, so
    there is one)."""
    tuple_get = TUPLE_GET
    order = topo_sort(nodes)
    unit = {}  # node -> the step computing it: itself, or its kernel
    for k in found:
        for n in k.members:
            unit[n] = k
    steps = list(dict.fromkeys(unit.get(n, n) for n in order))
    needs = {s: {unit.get(i, i) for i in (s.inputs if isinstance(s, Kernel) else s.inputs)}
             - {s} for s in steps}  # fmt: skip
    readers: dict = {}
    for s, ins in needs.items():
        for i in ins:
            readers.setdefault(i, []).append(s)
    waiting = {s: len(ins) for s, ins in needs.items()}
    ready = [s for s in steps if waiting[s] == 0]
    memo: dict = {}
    while ready:
        s = ready.pop()
        if isinstance(s, Kernel):
            call = Node(_Fused(s), tuple(memo.get(i, i) for i in s.inputs), {}, name=s.name)
            for j, o in enumerate(s.outputs):
                memo[o] = Node(tuple_get, (call,), {"index": j}, name=o.name, shape=o.shape,
                               dtype=o.dtype)  # fmt: skip
        else:
            ins = tuple(memo.get(i, i) for i in s.inputs)
            if any(a is not b for a, b in zip(ins, s.inputs)):
                new = Node(s.op, ins, s.attrs, name=s.name, shape=s.shape, dtype=s.dtype)
                new.is_gradient, new.grad_of = s.is_gradient, s.grad_of
                memo[s] = new
        for r in readers.get(s, ()):
            waiting[r] -= 1
            if waiting[r] == 0:
                ready.append(r)
    if any(w for w in waiting.values()):  # (cannot happen for convex groups)
        raise RuntimeError("fusion: the fusion groups are not convex")
    return [memo.get(n, n) for n in nodes]
