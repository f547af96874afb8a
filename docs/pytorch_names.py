"""The name tables of ``docs/coming-from-pytorch.md``, generated from the library itself.

Every public name (Tensor methods and operators, ``tg.`` functions, ``tg.autograd``,
``tg.nn.functional``, ``tg.nn`` and ``tg.nn.init``, ``tg.optim``) is listed; each one
PyTorch lacks must be explained in :data:`NOT_PYTORCH`, and the keyword spellings taken from
numpy are read from the signatures. Needs PyTorch installed (to look each name up)::

    python docs/pytorch_names.py           # rewrite the generated part of the page
    python docs/pytorch_names.py --check   # exit 1 when the page is out of date

``tests/test_coming_from_pytorch.py`` runs the check.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "coming-from-pytorch.md"
BEGIN = "<!-- BEGIN GENERATED NAMES: python docs/pytorch_names.py -->"
END = "<!-- END GENERATED NAMES -->"

#: Our public names that PyTorch does not have (at the same place): what each is.
NOT_PYTORCH = {
    "Tensor.astype": "numpy's spelling of `x.to(dtype)`",
    "Tensor.clear_gradient": "Paddle's: zero `.grad` in place (`set_to_zero=False` drops it)",
    "Tensor.retain_grads": "Paddle's name of `retain_grad()`",
    "Tensor.stop_gradient": "Paddle's: `not x.requires_grad` (settable)",
    "Tensor.persistable": "Paddle's: True for parameters and the buffers `state_dict` saves",
    "Tensor.zero_grad": "`x.grad = None` (PyTorch has `zero_grad` on modules and optimizers)",
    "tg.Function": "`torch.autograd.Function` (also `tg.autograd.Function`)",
    "tg.grad": "`torch.autograd.grad` (also `tg.autograd.grad`)",
    "tg.detect_anomaly": "`torch.autograd.detect_anomaly` (also `tg.autograd.detect_anomaly`)",
    "tg.sum_to": "sums a tensor down to a shape it was broadcast from (what derivative rules "
    "use); PyTorch: `x.sum_to_size(*shape)`",
    "tg.softmax_cross_entropy": "CSE599W's fused loss on one-hot labels; PyTorch: "
    "`F.cross_entropy`",
    "tg.ShapeError": "the error for shapes an op cannot combine (a `ValueError` and a "
    "`RuntimeError`, which is what PyTorch raises)",
    "tg.eager": "the eager engine's package (nodes, engine, observers)",
    "tg.symbolic": "the symbolic engine: tensors as nodes, `gradients()`, `Executor`",
    "autograd.FunctionCtx": "the class of `ctx` in a custom `Function`",
    "nn.save": "writes a state dict as `.npz`, a whole module pickled into it (PyTorch: "
    "`torch.save`, also `tg.save`)",
    "nn.load": "reads a file `nn.save` wrote, unpickling only allowed classes (PyTorch: "
    "`torch.load`, also `tg.load`)",
    "nn.save_state_dict": "`nn.save` under a longer name",
    "nn.load_state_dict_file": "`nn.load` under a longer name",
}

#: Operators: the dunder methods, as written in code.
OPERATORS = {
    "__add__": "x + y", "__radd__": "2 + x", "__iadd__": "x += y", "__sub__": "x - y",
    "__rsub__": "2 - x", "__isub__": "x -= y", "__mul__": "x * y", "__rmul__": "2 * x",
    "__imul__": "x *= y", "__truediv__": "x / y", "__rtruediv__": "2 / x",
    "__itruediv__": "x /= y", "__pow__": "x ** y", "__rpow__": "2 ** x", "__ipow__": "x **= y",
    "__matmul__": "x @ y", "__rmatmul__": "a @ x", "__neg__": "-x", "__abs__": "abs(x)",
    "__eq__": "x == y", "__ne__": "x != y", "__lt__": "x < y", "__le__": "x <= y",
    "__gt__": "x > y", "__ge__": "x >= y", "__and__": "x & y", "__rand__": "True & x",
    "__or__": "x | y", "__ror__": "True | x", "__xor__": "x ^ y", "__rxor__": "True ^ x",
    "__invert__": "~x", "__getitem__": "x[i]", "__setitem__": "x[i] = v",
    "__iter__": "for row in x", "__len__": "len(x)", "__contains__": "v in x",
    "__float__": "float(x)", "__int__": "int(x)", "__bool__": "bool(x)",
    "__index__": "a[x] (an int tensor as an index)", "__array__": "np.asarray(x)",
    "__dlpack__": "torch.from_dlpack(x)", "__dlpack_device__": "x.__dlpack_device__()",
    "__repr__": "repr(x)",
}  # fmt: skip

#: Keyword arguments spelled as numpy spells them, and PyTorch's spelling.
NUMPY_KEYWORDS = {"axis": "dim", "keepdims": "keepdim", "ddof": "correction"}


def sections() -> list[tuple[str, str, list[str]]]:
    """``(title, prefix, names)`` for each public namespace, names sorted (no PyTorch needed)."""
    import tinygrad_edu as tg  # noqa: PLC0415
    import tinygrad_edu.nn.functional  # noqa: F401, PLC0415

    tensor = sorted(n for n in dir(tg.Tensor) if not n.startswith("_"))
    operators = [n for n in OPERATORS if hasattr(tg.Tensor, n)]
    sectioned = {"autograd", "nn", "optim", "linalg"}  # sections of their own
    return [
        ("Tensor methods and properties", "Tensor", tensor),
        ("Tensor operators", "Tensor", operators),
        ("`tg.` functions, dtypes and classes", "tg", sorted(set(tg.__all__) - sectioned)),
        ("`tg.autograd`", "autograd", sorted(tg.autograd.__all__)),
        ("`tg.linalg`", "linalg", sorted(tg.linalg.__all__)),
        ("`tg.nn.functional` (`F`)", "F", sorted(tg.nn.functional.__all__)),
        ("`tg.nn` modules and helpers", "nn",
         sorted(n for n in tg.nn.__all__ if n not in ("functional", "init"))),
        ("`tg.nn.init`", "init", sorted(tg.nn.init.__all__)),
        ("`tg.optim`", "optim", sorted(tg.optim.__all__)),
    ]  # fmt: skip


def _torch_home(prefix: str):
    import torch  # noqa: PLC0415

    return {"Tensor": torch.Tensor, "tg": torch, "autograd": torch.autograd,
            "F": torch.nn.functional, "nn": torch.nn, "init": torch.nn.init,
            "optim": torch.optim, "linalg": torch.linalg}[prefix]  # fmt: skip


def _keyword_aliases() -> list[str]:
    """Lines naming the public functions that accept numpy's keyword spellings."""
    import tinygrad_edu as tg  # noqa: PLC0415

    found: dict[str, set] = {k: set() for k in NUMPY_KEYWORDS}
    candidates = [(f"x.{n}", getattr(tg.Tensor, n)) for n in dir(tg.Tensor)
                  if not n.startswith("_")]  # fmt: skip
    candidates += [(f"tg.{n}", getattr(tg, n)) for n in tg.__all__]
    for label, fn in candidates:
        if not callable(fn) or isinstance(fn, type):
            continue
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        for key in NUMPY_KEYWORDS:
            if key in params:
                found[key].add(label.split(".", 1)[1])
    lines = []
    for key, torch_key in NUMPY_KEYWORDS.items():
        names = ", ".join(f"`{n}`" for n in sorted(found[key]))
        lines.append(f"- `{key}=` for `{torch_key}=`: {names} (methods and `tg.` functions)")
    return lines


def render() -> str:
    """The generated part of the page (needs PyTorch, to tell which names it has)."""
    out = []
    ours_only = []
    for title, prefix, names in sections():
        home = _torch_home(prefix)
        out += [f"### {title}", ""]
        shown = []
        for name in names:
            key = f"{prefix}.{name}"
            label = OPERATORS[name] if name in OPERATORS else name
            if hasattr(home, name):
                shown.append(f"`{label}`")
                continue
            if key not in NOT_PYTORCH:
                raise KeyError(f"{key} is not PyTorch's: explain it in NOT_PYTORCH")
            shown.append(f"`{label}`&nbsp;†")
            ours_only.append(f"| `{key}` | {NOT_PYTORCH[key]} |")
        out += [f"{len(names)} names: " + " · ".join(shown), ""]
    stale = sorted(k for k in NOT_PYTORCH if k not in {r.split("`")[1] for r in ours_only})
    if stale:
        raise KeyError(f"remove from NOT_PYTORCH (now PyTorch's, or gone): {stale}")
    out += ["### † Names PyTorch does not have", "", "| name | what it is |", "|---|---|"]
    out += ours_only + ["", "### numpy's keyword spellings, accepted as aliases", ""]
    out += _keyword_aliases()
    return "\n".join([BEGIN, "", *out, "", END])


def current() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def main(argv) -> int:
    generated = render()
    if "--check" in argv:
        if current() != generated:
            print(f"{PAGE} is out of date: run python docs/pytorch_names.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(PAGE.read_text(encoding="utf-8").replace(current(), generated),
                    encoding="utf-8")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
