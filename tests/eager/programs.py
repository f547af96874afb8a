"""Random programs for cross-checking engines: the same program run by the eager engine,
the symbolic engine and PyTorch must give the same values and gradients."""

from __future__ import annotations

import numpy as np

__all__ = ["random_program", "run_program", "LEAF_SHAPES"]

LEAF_SHAPES = [(3, 4), (1, 4), (3, 1), (4,), (4, 4)]
_UNARY = ["tanh", "sigmoid", "exp_tanh", "relu", "log_sigmoid", "softmax", "log_softmax", "neg",
          "square", "pow3"]  # fmt: skip
_BINARY = ["add", "sub", "mul", "div_safe", "maximum"]
_REDUCE = ["sum_rows", "mean_cols", "max_cols"]


_UNARY_FNS = {
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "exp_tanh": lambda x: x.tanh().exp(),
    "relu": lambda x: x.relu(),
    "log_sigmoid": lambda x: x.sigmoid().log(),
    "softmax": lambda x: x.softmax(-1),
    "log_softmax": lambda x: x.log_softmax(-1),
    "neg": lambda x: -x,
    "square": lambda x: x * x,
    "pow3": lambda x: x**3,
}
_BINARY_FNS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div_safe": lambda a, b: a / (b * b + 1),
}


def _broadcast(a, b):
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        return None


def random_program(seed: int, steps: int = 8):
    """A list of steps over the leaves (indices into a growing list of values)."""
    rng = np.random.default_rng(seed)
    shapes = list(LEAF_SHAPES)
    prog = []
    for _ in range(steps):
        kind = rng.choice(["unary", "binary", "binary", "reduce", "matmul", "index"])
        i = int(rng.integers(len(shapes)))
        s = shapes[i]
        if kind == "unary":
            prog.append(("unary", str(rng.choice(_UNARY)), i))
            shapes.append(s)
        elif kind == "binary":
            partners = [j for j, t in enumerate(shapes) if _broadcast(s, t) is not None]
            j = int(rng.choice(partners))
            prog.append(("binary", str(rng.choice(_BINARY)), i, j))
            shapes.append(_broadcast(s, shapes[j]))
        elif kind == "reduce" and len(s) == 2:
            op = str(rng.choice(_REDUCE))
            prog.append(("reduce", op, i))
            shapes.append({"sum_rows": (s[0], 1), "mean_cols": (1, s[1]), "max_cols": (s[1],)}[op])
        elif kind == "matmul" and len(s) == 2 and s[1] == 4:
            prog.append(("matmul", i, 4))  # @ the (4, 4) leaf
            shapes.append((s[0], 4))
        elif kind == "index" and len(s) == 2 and s[0] == 3:
            prog.append(("index", i))
            shapes.append((2, s[1]))
    return prog


def run_program(prog, leaves, lib: str):
    """Run ``prog`` on ``leaves`` (tensors or symbolic nodes); returns the scalar output.

    ``lib`` is "tg" (eager tensors), "symbolic" (nodes share the tensors' methods) or
    "torch".
    """
    vals = list(leaves)
    t = lib == "torch"
    for step in prog:
        if step[0] == "unary":
            _, op, i = step
            x = vals[i]
            y = _UNARY_FNS[op](x)
        elif step[0] == "binary":
            _, op, i, j = step
            a, b = vals[i], vals[j]
            if op == "maximum":
                y = _maximum(lib)(a, b)
            else:
                y = _BINARY_FNS[op](a, b)
        elif step[0] == "reduce":
            _, op, i = step
            x = vals[i]
            if op == "sum_rows":
                y = x.sum(dim=1, keepdim=True)
            elif op == "mean_cols":
                y = x.mean(dim=0, keepdim=True)
            else:
                y = x.amax(dim=0)
        elif step[0] == "matmul":
            _, i, w = step
            y = vals[i] @ vals[w]
        else:
            y = vals[step[1]][1:]
        vals.append(y)
    total = vals[len(leaves)] if len(vals) > len(leaves) else vals[0]
    for v in vals[len(leaves) + 1 :]:
        total = total.sum() + v.sum() if not t else total.sum() + v.sum()
    return total.sum()


def leaf_values(seed: int):
    rng = np.random.default_rng(seed + 1000)
    # distinct values: no ties for max/maximum/relu at 0
    return [rng.uniform(0.1, 1.0, s) * rng.choice([-1.0, 1.0], s) + 0.01 * i for i, s in
            enumerate(LEAF_SHAPES)]  # fmt: skip


def _maximum(lib):
    if lib == "torch":
        import torch

        return torch.maximum
    if lib == "symbolic":
        import tinygrad_edu.symbolic as S

        return S.maximum
    import tinygrad_edu as tg

    return tg.maximum
