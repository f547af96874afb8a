"""A differential fuzzer of ``tg.compile``: generated programs, each run eagerly and compiled
for several calls with changing inputs and state, everything observable compared
(:mod:`tests.compiler.differential`).

A program is generated from one seed (``random.Random(seed)``; its data from
``np.random.default_rng(seed)``) by a handful of small *feature* functions, each of which adds
a few lines to the program's source and notes its name and parameters. The program is Python
source (``make()`` returning a :class:`~tests.compiler.differential.World`), executed into a
fresh namespace, so a failure prints the seed, the features and the whole source: paste it into
a file, or run ``program(seed).make`` again.

Two kinds of programs:

* ``train``: a training step (``opt.zero_grad()``, a loss, ``backward()``, optional gradient
  clipping, ``opt.step()``, optional ``sched.step()``); ``World.backward`` is False and
  ``state()`` holds every parameter and its ``.grad``, the buffers, the learning rates, each
  parameter's optimizer state, the scheduler's ``last_epoch`` and the side effects' results;
* ``forward``: a function of the inputs through a model; the harness runs backward on its
  outputs and compares the gradients of the inputs and of every parameter.

To reproduce one failure: ``pytest "tests/compiler/test_fuzz_compile.py::
test_generated_programs_agree[seed=123]"`` (the message holds the program's source), and
``python -m tests.compiler.test_fuzz_compile 123`` prints it shrunk (features and model parts
dropped while the first difference stays at the same place). More programs:
``TG_FUZZ_PROGRAMS=2000 pytest -m slow tests/compiler/test_fuzz_compile.py``.
"""

from __future__ import annotations

import linecache
import math
import os
import random
from dataclasses import dataclass, field

import pytest

import tinygrad_edu as tg

from .differential import compare

CALLS = 6  # calls per program: the first traces, the later ones run compiled (or retrace)
CI_PROGRAMS = 500  # programs in test_generated_programs_agree


# -- the program being generated -------------------------------------------------------------
@dataclass
class Builder:
    """The pieces of a program's source that the feature functions fill in."""

    seed: int
    r: random.Random
    kind: str  # "train" | "forward"
    dtype: str = "float32"
    feats: int = 4  # input features
    hidden: int = 6
    classes: int = 3
    sizes: list = field(default_factory=list)  # batch size of each call
    offsets: list = field(default_factory=list)  # added to x in each call (flips branches)
    grads: list = field(default_factory=list)  # x.requires_grad in each call
    features: list = field(default_factory=list)  # (name, params) notes
    setup: list = field(default_factory=list)  # lines of make() before fn
    head: list = field(default_factory=list)  # lines of fn before the model
    pre: list = field(default_factory=list)  # lines of fn on x, before the model
    post: list = field(default_factory=list)  # lines of fn on h, after the model
    tail: list = field(default_factory=list)  # lines of fn after the loss (train)
    params: list = field(default_factory=lambda: ["x", "y"])
    arg_lines: list = field(default_factory=list)  # lines of args(k)
    args_ret: list = field(default_factory=lambda: ["x", "y"])
    state: dict = field(default_factory=dict)  # name -> expression, compared after each call
    extras: list = field(default_factory=list)  # more returned expressions
    reseed: bool = False  # tg.manual_seed in args(k): random numbers drawn in fn
    seq: str = "model"  # the expression of the Sequential of the model
    acts: list = field(default_factory=list)  # indices of activations in the Sequential
    target: str = "y"  # the loss's second argument
    drop: frozenset = frozenset()  # features and parts left out (shrinking a failure)

    def note(self, feature: str, **params) -> None:
        self.features.append((feature, params))

    def pick(self, *options):
        return self.r.choice(options)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def allowed(self, part: str) -> bool:
        return part not in self.drop


# -- features: the model ---------------------------------------------------------------------
ACTIVATIONS = ["Tanh", "ReLU", "Sigmoid", "GELU"]


def feat_model(b: Builder) -> None:
    """A small stack of Linear, activations, BatchNorm1d, LayerNorm, Dropout, in a Sequential
    or in a custom Module with a plain float attribute ``scale``, in train or eval mode."""
    layers, width = [], b.feats
    depth = b.pick(1, 1, 2) if b.allowed("depth2") else 1
    for _ in range(depth):
        layers.append(f"tg.nn.Linear({width}, {b.hidden})")
        width = b.hidden
        momentum = b.pick(0.1, 0.5)
        if b.chance(0.4) and b.allowed("batchnorm"):
            layers.append(f"tg.nn.BatchNorm1d({width}, momentum={momentum})")
        if b.chance(0.2) and b.allowed("layernorm"):
            layers.append(f"tg.nn.LayerNorm({width})")
        b.acts.append(len(layers))
        layers.append(f"tg.nn.{b.pick(*ACTIVATIONS)}()")
        p = b.pick(0.2, 0.5)
        if b.chance(0.2) and b.allowed("dropout"):
            layers.append(f"tg.nn.Dropout({p})")
    layers.append(f"tg.nn.Linear({width}, {b.classes})")
    custom = b.chance(0.4) and b.allowed("custom")
    seq = "tg.nn.Sequential(\n    " + ",\n    ".join(layers) + ",\n)"
    b.setup.append(f"model = Net({seq})" if custom else f"model = {seq}")
    b.seq = "model.body" if custom else "model"
    mode = "train" if b.chance(0.6) or not b.allowed("eval") else "eval"
    if mode == "eval":
        b.setup.append("model.eval()")
    if b.dtype == "float64":
        b.setup.append("model.double()")
    dropout = any("Dropout" in line for line in layers)
    if dropout and mode == "train":
        b.reseed = True  # dropout draws: both runs draw the same numbers
    b.note("model", layers=[line.split("(")[0][6:] for line in layers], custom=custom,
           mode=mode, dtype=b.dtype)  # fmt: skip


# -- features: inputs --------------------------------------------------------------------------
def feat_inputs(b: Builder, shape_branch: bool, value_branch: bool) -> None:
    """New values every call; sometimes a new batch size; sometimes requires_grad flipping."""
    base = b.pick(4, 5, 6)
    varied = b.chance(0.3) and b.allowed("new_shapes")
    if shape_branch or varied:
        b.sizes = [b.r.randint(2, 6) for _ in range(CALLS)]
        b.sizes[1], b.sizes[2] = 2, 5  # crosses every x.shape[0] > t branch
    else:
        b.sizes = [base] * CALLS
    b.offsets = [0.0] * CALLS
    if value_branch:
        b.offsets = [b.pick(1.5, -1.5) for _ in range(CALLS)]
        b.offsets[0], b.offsets[1] = 1.5, -1.5
    if b.chance(0.3) and b.allowed("grad_flips"):
        b.grads = [b.chance(0.5) for _ in range(CALLS)]
        b.grads[0], b.grads[1] = True, False
    else:
        b.grads = [b.kind == "forward"] * CALLS
    b.note("inputs", sizes=b.sizes, offsets=b.offsets, requires_grad=b.grads)


# -- features: on x, before the model ----------------------------------------------------------
def feat_index_tensor(b: Builder) -> None:
    """A 0-d int tensor argument used as ``x[i]``."""
    b.params.append("i")
    b.args_ret.append("i")
    b.arg_lines.append(f"i = tg.tensor(k % {min(b.sizes)})")
    b.pre.append("x = x + x[i] * 0.5")
    b.note("index_tensor")


def feat_python_int(b: Builder) -> None:
    """A Python int argument that changes between calls."""
    b.params.append("j")
    b.args_ret.append("j")
    b.arg_lines.append("j = k % 3")
    b.pre.append(b.pick("x = x * (1.0 + 0.5 * j)", f"x = x + x[:, j % {b.feats}:][:, :1]"))
    b.note("python_int", use=b.pre[-1])


def feat_global_dict(b: Builder) -> None:
    """A global dict's value read in fn, changed by args(k)."""
    values = [round(b.r.uniform(-2, 2), 2) for _ in range(CALLS)]
    b.arg_lines.append(f'K["v"] = {values}[k]')
    b.pre.append('x = x * K["v"]')
    b.note("global_dict", values=values)


def feat_closure_list(b: Builder) -> None:
    """A closure list's element read in fn, changed by args(k)."""
    b.setup.append("S = [0.0]")
    b.arg_lines.append("S[0] = 0.25 * k")
    b.pre.append("x = x + S[0]")
    b.note("closure_list")


def feat_counter(b: Builder) -> None:
    """A counter in a closure list, incremented in fn, used as a multiplier or returned."""
    b.setup.append("calls = [0]")
    b.head.append("calls[0] += 1")
    b.state["calls"] = "calls"
    use = b.pick("multiplier", "returned", "both")
    if use in ("multiplier", "both"):
        b.pre.append("x = x * (1.0 + 0.1 * calls[0])")
    if use in ("returned", "both"):
        b.extras.append("calls[0]")
    b.note("counter", use=use)


def feat_scale_attr(b: Builder) -> None:
    """A plain float attribute of the model changed between calls."""
    if b.seq == "model":  # only a custom Module has one
        return
    b.arg_lines.append("model.scale = 1.0 + 0.5 * (k % 3)")
    b.note("scale_attr")


def feat_swap_submodule(b: Builder) -> None:
    """An activation of the Sequential replaced between calls."""
    at, new = b.pick(*b.acts), b.pick(*ACTIVATIONS)
    when = b.r.randint(1, CALLS - 2)
    b.arg_lines.append(f'if k == {when}:\n    setattr({b.seq}, "{at}", tg.nn.{new}())')
    b.note("swap_submodule", index=at, new=new, call=when)


def feat_mode_flip(b: Builder) -> None:
    """model.train()/model.eval() switched between calls."""
    when = b.r.randint(1, CALLS - 2)
    b.arg_lines.append(f"if k == {when}:\n    model.train(not model.training)")
    b.note("mode_flip", call=when)


def feat_shape_branch(b: Builder) -> None:
    """A Python branch on the input's shape (the sizes cross it)."""
    t = b.pick(2, 3, 4)
    b.pre.append(f"if x.shape[0] > {t}:\n    x = x * 0.5\nelse:\n    x = x + 1.0")
    b.note("shape_branch", threshold=t)


def feat_x_value_branch(b: Builder) -> None:
    """A Python branch on the input's value (the offsets flip it)."""
    cond = b.pick("x.sum() > 0", "x.sum().item() > 0", "(x.mean() > 0).item()")
    b.pre.append(f"if {cond}:\n    x = x * 2\nelse:\n    x = x.abs() - 1")
    b.note("x_value_branch", cond=cond)


# -- features: on h, after the model -----------------------------------------------------------
def feat_setitem(b: Builder) -> None:
    """``h = h * 2; h[0] = 5.0``: an in-place write into a result."""
    b.post.append(b.pick("h = h * 2\nh[0] = 5.0", "h = h * 2\nh[:, 0] = -1.0",
                         "h = h + 0\nh[1] = h[0].detach()"))  # fmt: skip
    b.note("setitem", code=b.post[-1])


def feat_inplace(b: Builder) -> None:
    """``add_``/``mul_`` on a result."""
    b.post.append(b.pick("h = h * 1.5\nh.add_(1)", "h = h - 0.5\nh.mul_(x[:, :1])",
                         "h = h * 1.0\nh.mul_(2).sub_(0.25)"))  # fmt: skip
    b.note("inplace", code=b.post[-1])


def feat_alias(b: Builder) -> None:
    """A ``detach()``/``.data`` alias read after the tensor it aliases is changed in place."""
    how = b.pick("detach()", "data")
    b.post.append(f"h = h * 1.0\nd = h.{how}\nh.add_(1)\nh = h + d * 0.5")
    b.note("alias", how=how)


def feat_buffer(b: Builder) -> None:
    """Writes into a closure buffer tensor (compared in state)."""
    b.setup.append(f"buf = tg.zeros({b.classes}, dtype=tg.{b.dtype})")
    code = b.pick("with tg.no_grad():\n    buf.add_(h.mean(0))",
                  "buf.copy_(h.detach().sum(0))",
                  "buf[0] = h.detach().sum()\nbuf.mul_(0.5)")  # fmt: skip
    b.post.append(code)
    b.state["buf"] = "buf"
    if b.chance(0.5):
        b.post.append("h = h + buf")
    b.note("buffer", code=code)


def feat_h_value_branch(b: Builder) -> None:
    """A Python branch on a result's value."""
    cond = b.pick("h.sum() > 0", "h.sum().item() > 0", "float(h.mean()) > 0")
    b.post.append(f"if {cond}:\n    h = h * 2\nelse:\n    h = h - 1")
    b.note("h_value_branch", cond=cond)


def feat_dtype(b: Builder) -> None:
    """Dtype conversions: a round trip through another float dtype, ``.long()``, accuracy."""
    kind = b.pick("roundtrip", "long", "accuracy")
    if kind == "roundtrip":
        other = "float" if b.dtype == "float64" else "double"
        back = "double" if b.dtype == "float64" else "float"
        b.post.append(f"h = (h.{other}() * 1.25).{back}()")
    elif kind == "long":
        b.post.append("n = (h.detach() * 4).long().sum()")
        b.extras.append("n")
    else:
        b.post.append("acc = (h.argmax(1) == y).float().mean()")
        b.extras.append("acc")
    b.note("dtype", kind=kind)


def feat_no_grad(b: Builder) -> None:
    """A ``with tg.no_grad():`` block inside fn; its result returned."""
    b.post.append("with tg.no_grad():\n    m = h.abs().mean() * 2")
    b.extras.append("m")
    b.note("no_grad")


def feat_print(b: Builder) -> None:
    """A print of a value (a graph break)."""
    b.post.append(b.pick('print("h", h.sum().item())', "print(h)"))
    b.note("print", code=b.post[-1])


def feat_log_item(b: Builder) -> None:
    """``.item()`` appended to a list (compared in state)."""
    b.setup.append("log = []")
    b.state["log"] = "log"
    if b.kind == "train" and b.chance(0.7):
        where = b.pick("before_backward", "after_step")
        b.tail.append(f"@{where}:log.append(loss.item())")
    else:
        where = "h"
        b.post.append("log.append(h.sum().item())")
    b.note("log_item", where=where)


def feat_item_out(b: Builder) -> None:
    """``x.sum().item()`` returned next to the tensor."""
    b.extras.append("x.sum().item()")
    b.note("item_out")


# -- features: the training step ---------------------------------------------------------------
def feat_optimizer(b: Builder) -> None:
    """SGD (momentum, nesterov, weight decay), Adam or AdamW; optionally a scheduler."""
    name = b.pick("SGD", "Adam", "AdamW")
    if name == "SGD":
        momentum = b.pick(0.0, 0.9)
        kw = f"lr=0.1, momentum={momentum}, weight_decay={b.pick(0.0, 0.01)}"
        if momentum and b.chance(0.5):
            kw += ", nesterov=True"
    else:
        kw = f"lr=0.01, weight_decay={b.pick(0.0, 0.1)}"
    b.setup.append(f"opt = tg.optim.{name}(model.parameters(), {kw})")
    b.state["lr"] = '[g["lr"] for g in opt.param_groups]'
    b.state["opt"] = "[sorted(opt.state.get(p, {}).items()) for p in model.parameters()]"
    b.note("optimizer", opt=name, kw=kw)
    if b.chance(0.4) and b.allowed("scheduler"):
        sched = b.pick("StepLR(opt, step_size=2, gamma=0.5)", "ExponentialLR(opt, gamma=0.9)")
        b.setup.append(f"sched = tg.optim.lr_scheduler.{sched}")
        b.tail.append("@after_step:sched.step()")
        b.state["last_epoch"] = "sched.last_epoch"
        b.note("scheduler", sched=sched)


def feat_loss(b: Builder) -> str:
    """cross_entropy on int64 class labels, or mse_loss on a float target."""
    name = b.pick("cross_entropy", "cross_entropy", "mse_loss")
    if name == "mse_loss":
        b.params.append("t")
        b.args_ret.append("t")
        b.arg_lines.append(
            f't = tg.tensor(rng.standard_normal((B, {b.classes})).astype("{b.dtype}"))'
        )
        b.target = "t"
    b.note("loss", fn=name)
    return name


def feat_loss_branch(b: Builder, loss: str) -> None:
    """A branch on the loss's value, before backward."""
    t = round(math.log(b.classes), 2) if loss == "cross_entropy" else 1.0
    cond = b.pick(f"loss.item() > {t}", f"loss > {t}")
    b.tail.append(f"@before_backward:if {cond}:\n    loss = loss * 0.5")
    b.note("loss_branch", cond=cond)


def feat_clip(b: Builder) -> None:
    """clip_grad_norm_ or clip_grad_value_ between backward and step."""
    code = b.pick("tg.nn.utils.clip_grad_norm_(model.parameters(), 0.5)",
                  "norm = tg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
                  "tg.nn.utils.clip_grad_value_(model.parameters(), 0.05)")  # fmt: skip
    b.tail.append(f"@before_step:{code}")
    if code.startswith("norm"):
        b.extras.append("norm")
    b.note("clip", code=code)


# -- assembling the source ---------------------------------------------------------------------
PRELUDE = """\
import numpy as np

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tests.compiler.differential import World

K = {"v": 1.0}


class Net(tg.nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.scale = 1.0

    def forward(self, x):
        return self.body(x) * self.scale


"""


def _indent(lines, n: int) -> list:
    return [" " * n + line for block in lines for line in block.split("\n")]


def _stage(b: Builder, where: str) -> list:
    return [line.split(":", 1)[1] for line in b.tail if line.startswith(f"@{where}:")]


def _source(b: Builder, loss: str | None) -> str:
    body = list(b.head)
    if b.kind == "train":
        body.insert(0, "opt.zero_grad()")
    body += b.pre + ["h = model(x)"] + b.post
    if b.kind == "train":
        body.append(f"loss = F.{loss}(h, {b.target})")
        body += _stage(b, "before_backward") + ["loss.backward()"] + _stage(b, "before_step")
        body += ["opt.step()"] + _stage(b, "after_step")
        first = random.Random(f"{b.seed}:return").choice(["loss", "loss", "loss.detach()"])
    else:
        first = "h"
    out = ", ".join([first, *b.extras]) if b.extras else first
    body.append(f"return {out}")

    sizes = "B = sizes[k]"
    x = (f"x = tg.tensor((rng.standard_normal((B, {b.feats})) + offsets[k])"
         f'.astype("{b.dtype}"), requires_grad=grads[k])')  # fmt: skip
    y = f"y = tg.tensor(rng.integers(0, {b.classes}, B))"
    arg_lines = [sizes] + (["tg.manual_seed(1000 + k)"] if b.reseed else [])
    arg_lines += [x, y, *b.arg_lines, "seen[:] = [x]", f"return {', '.join(b.args_ret)}"]

    state = {"params": "[(n, p, p.grad) for n, p in model.named_parameters()]",
             "buffers": "list(model.named_buffers())", "training": "model.training",
             "x.grad": "seen[0].grad", **b.state}  # fmt: skip
    leaves = "list(model.parameters())" if b.kind == "forward" else "[]"
    lines = [
        "def make():",
        '    K["v"] = 1.0',
        f"    tg.manual_seed({b.seed})",
        f"    rng = np.random.default_rng({b.seed})",
        *_indent(b.setup, 4),
        f"    sizes, offsets, grads = {b.sizes}, {b.offsets}, {b.grads}",
        "    seen = []",
        "",
        f"    def fn({', '.join(b.params)}):",
        *_indent(body, 8),
        "",
        "    def args(k):",
        *_indent(arg_lines, 8),
        "",
        "    def state():",
        "        return {",
        *[f'            "{k}": {v},' for k, v in state.items()],
        "        }",
        "",
        f"    return World(fn, args, state, backward={b.kind == 'forward'}, leaves={leaves})",
    ]
    return PRELUDE + "\n".join(lines) + "\n"


@dataclass
class Program:
    seed: int
    kind: str
    features: list
    source: str

    def make(self):
        """A fresh World of this program (the source executed into a fresh namespace)."""
        filename = f"<tg-fuzz-{self.seed}>"
        linecache.cache[filename] = (len(self.source), None,
                                     self.source.splitlines(True), filename)  # fmt: skip
        namespace = {"__name__": f"tg_fuzz_{self.seed}"}
        exec(compile(self.source, filename, "exec"), namespace)  # noqa: S102
        return namespace["make"]()

    def describe(self) -> str:
        feats = "\n".join(f"  - {name} {params}" if params else f"  - {name}"
                          for name, params in self.features)  # fmt: skip
        return f"seed={self.seed} kind={self.kind}\nfeatures:\n{feats}"


# The optional features of each kind, drawn independently (with these probabilities).
PRE = [(feat_index_tensor, 0.2), (feat_python_int, 0.2), (feat_global_dict, 0.2),
       (feat_closure_list, 0.2), (feat_counter, 0.2)]  # fmt: skip
POST = [(feat_setitem, 0.2), (feat_inplace, 0.2), (feat_alias, 0.15), (feat_buffer, 0.2),
        (feat_h_value_branch, 0.15), (feat_dtype, 0.25), (feat_no_grad, 0.15),
        (feat_print, 0.1), (feat_log_item, 0.25), (feat_item_out, 0.1)]  # fmt: skip
BETWEEN = [(feat_scale_attr, 0.4), (feat_swap_submodule, 0.15), (feat_mode_flip, 0.1)]


def program(seed: int, drop=frozenset()) -> Program:
    """The program of ``seed`` (the same one every time). ``drop``: names of features (and of
    the model's optional parts: see :data:`PARTS`) left out, the others kept as they were
    (each feature draws from its own generator), so that a failure can be shrunk."""
    r = random.Random(seed)
    kind = "train" if r.random() < 0.6 else "forward"
    b = Builder(seed=seed, r=r, kind=kind, drop=frozenset(drop))
    b.dtype = "float64" if b.chance(0.25) and b.allowed("float64") else "float32"
    b.feats, b.hidden, b.classes = b.pick(3, 4, 5), b.pick(4, 6, 8), b.pick(2, 3, 4)
    shape_branch = b.chance(0.15) and b.allowed("shape_branch")
    x_branch = b.chance(0.15) and b.allowed("x_value_branch")
    wanted = [feat for feat, p in PRE + POST + BETWEEN if b.chance(p)]
    train = []
    if kind == "train":
        train = [feat_optimizer, feat_loss]
        train += [feat_loss_branch] if b.chance(0.2) else []
        train += [feat_clip] if b.chance(0.4) else []
    order = random.Random(f"{seed}:order")

    def run(feat, *args):
        if b.allowed(feat.__name__[5:]) or feat in (feat_model, feat_optimizer, feat_loss):
            b.r = random.Random(f"{seed}:{feat.__name__}")
            return feat(b, *args)

    run(feat_model)
    run(feat_inputs, shape_branch, x_branch)
    if shape_branch:
        run(feat_shape_branch)
    if x_branch:
        run(feat_x_value_branch)
    for feat in wanted:
        run(feat)
    order.shuffle(b.pre)  # the order of independent features varies too
    loss = None
    for feat in train:
        if feat is feat_loss_branch:
            run(feat, loss)
        elif feat is feat_loss:
            loss = run(feat)
        else:
            run(feat)
    return Program(seed, kind, b.features, _source(b, loss))


# the optional parts of a program that are not features of their own (see program's drop)
PARTS = ["float64", "depth2", "batchnorm", "layernorm", "dropout", "custom", "eval",
         "new_shapes", "grad_flips", "scheduler"]  # fmt: skip


def _signature(diff: str) -> str:
    """A difference without its call number and its values: what a shrink must keep."""
    where = diff.split(": ", 1)[0]
    return where.split("[", 1)[1] if "[" in where else where


def shrink(seed: int, drop=()) -> tuple[Program, str | None]:
    """The smallest program of ``seed`` (features and parts dropped one at a time, as long as
    the first difference stays at the same place) and its difference (None: it agrees)."""
    drop = set(drop)
    diff = compare(program(seed, drop).make, CALLS)
    if diff is None:
        return program(seed, drop), None
    changed = True
    while changed:
        changed = False
        names = [n for n, _ in program(seed, drop).features]
        for part in [*PARTS, *dict.fromkeys(names)]:
            if part in drop or part in ("model", "inputs", "optimizer", "loss"):
                continue
            d = compare(program(seed, drop | {part}).make, CALLS)
            if d is not None and _signature(d) == _signature(diff):
                drop.add(part)
                changed = True
    prog = program(seed, drop)
    return prog, compare(prog.make, CALLS)


def check(seed: int) -> str | None:
    """None when program ``seed`` agrees eagerly and compiled, else a failure message."""
    prog = program(seed)
    diff = compare(prog.make, CALLS)
    if diff is None:
        return None
    return f"{prog.describe()}\n{diff}\nsource:\n{prog.source}"


# -- tests -------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(CI_PROGRAMS), ids=lambda s: f"seed={s}")
def test_generated_programs_agree(seed):
    if (failure := check(seed)) is not None:
        pytest.fail(failure, pytrace=False)


@pytest.mark.slow
def test_many_generated_programs_agree():
    n = int(os.environ.get("TG_FUZZ_PROGRAMS", "50"))
    failures = []
    for seed in range(100_000, 100_000 + n):
        if (failure := check(seed)) is not None:
            failures.append(failure)
    shown = "\n\n".join(failures[:3])
    if failures:
        pytest.fail(f"{len(failures)} of {n} programs differ; the first:\n\n{shown}", pytrace=False)


def test_programs_are_deterministic_per_seed():
    for seed in range(20):
        assert program(seed).source == program(seed).source
        assert program(seed).features == program(seed).features
    assert len({program(seed).source for seed in range(20)}) == 20


def test_generated_features_are_all_drawn():
    """Every feature function appears in some program of the CI seeds."""
    drawn = {name for seed in range(CI_PROGRAMS) for name, _ in program(seed).features}
    wanted = {f.__name__[5:] for f, _ in PRE + POST + BETWEEN}
    wanted |= {"model", "inputs", "shape_branch", "x_value_branch", "optimizer", "scheduler",
               "loss", "loss_branch", "clip"}  # fmt: skip
    assert wanted <= drawn, wanted - drawn


# -- the fuzzer must notice a wrong answer -----------------------------------------------------
def _plain_world():
    """A training step the compiler gets right (the baseline of the sabotage tests)."""
    import numpy as np

    import tinygrad_edu.nn.functional as F

    from .differential import World

    tg.manual_seed(0)
    rng = np.random.default_rng(0)
    model = tg.nn.Linear(3, 2)
    opt = tg.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    def args(k):
        return tg.tensor(rng.standard_normal((4, 3)).astype("float32")), tg.tensor([0, 1, 1, 0])

    def state():
        return [(p, p.grad) for p in model.parameters()]

    return World(step, args, state, backward=False)


def _sabotaged(how: str):
    """``tg.compile`` made wrong on purpose: a stale result, a result slightly off, or a
    parameter update lost."""
    real = tg.compile

    def sabotaged_compile(fn, **kw):
        compiled = real(fn, **kw)
        first = []

        def call(*args):
            params = [(t, t._data.copy()) for t in _params_of(fn)]
            out = compiled(*args)
            items = out if isinstance(out, tuple) else (out,)
            if how == "stale":  # a compiled program that returns its first result forever
                first.append([o.detach().clone() if isinstance(o, tg.Tensor) else o
                              for o in items])  # fmt: skip
                return tuple(first[0]) if isinstance(out, tuple) else first[0][0]
            if how == "perturbed":  # a compiled program slightly off
                for o in items:
                    if isinstance(o, tg.Tensor) and o._data.dtype.kind == "f":
                        o._data = o._data * (1 + 1e-4) + 1e-4
            if how == "lost update" and len(first) > 0:  # the parameters as before the call
                for t, data in params:
                    t._data = data
            first.append(out)
            return out

        return call

    return sabotaged_compile


def _params_of(fn) -> list:
    """The parameters of the modules a function's closure holds (or reaches by an optimizer)."""
    found = []
    for cell in getattr(fn, "__closure__", None) or ():
        obj = cell.cell_contents
        if isinstance(obj, tg.nn.Module):
            found += list(obj.parameters())
    return found


SABOTAGES = ["stale", "perturbed", "lost update"]


@pytest.mark.parametrize("how", SABOTAGES)
def test_the_fuzzer_detects_a_sabotaged_compile(monkeypatch, how):
    assert compare(_plain_world) is None  # honest: they agree
    monkeypatch.setattr(tg, "compile", _sabotaged(how))
    diff = compare(_plain_world)
    assert diff is not None and diff.startswith("eager and compiled differ at call"), diff


@pytest.mark.parametrize("how", SABOTAGES)
@pytest.mark.parametrize("seed", range(4))
def test_the_fuzzer_detects_a_sabotaged_compile_of_generated_programs(monkeypatch, how, seed):
    prog = program(seed)
    if how == "lost update" and (prog.kind != "train" or "model" not in prog.source):
        how = "perturbed"  # only a training step updates parameters
    monkeypatch.setattr(tg, "compile", _sabotaged(how))
    diff = compare(prog.make, CALLS)
    assert diff is not None and "differ at call" in diff, prog.describe()


def test_the_fuzzer_detects_a_different_program():
    """Eager runs one program, compiled another that differs in one constant."""
    prog = program(3)
    source = prog.source.replace("tg.manual_seed(3)", "tg.manual_seed(4)")
    assert source != prog.source
    changed = Program(prog.seed, prog.kind, prog.features, source)
    makes = iter([prog.make, changed.make])
    assert compare(lambda: next(makes)(), CALLS) is not None


if __name__ == "__main__":  # python -m tests.compiler.test_fuzz_compile SEED: a shrunk failure
    import contextlib
    import io
    import sys

    for arg in sys.argv[1:]:
        with contextlib.redirect_stdout(io.StringIO()):  # the programs' prints
            small, found = shrink(int(arg))
        print(f"{small.describe()}\n{found or 'agrees'}\n{small.source}")
