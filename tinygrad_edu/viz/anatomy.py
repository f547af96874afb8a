r"""One tensor's anatomy, drawn as the seeds draw it: the Tensor, its TensorImpl (sizes,
strides, storage offset, dtype, device) pointing at a Storage shared by its views, its
AutogradMeta, and for a view its base and creation meta.

:func:`anatomy_record` reads the numbers, from a ``tinygrad_edu`` tensor or a ``torch.Tensor``
(through PyTorch's own API: ``stride()``, ``storage_offset()``, ``untyped_storage()``,
``grad_fn``, ``_base``, ``_version``); :func:`draw_anatomy` draws them with PyTorch's names
(seed 001) or Paddle's (``names="paddle"``, seed 000). The storage is drawn as a row of
cells, its elements in memory order, with the cells this tensor reads filled (and, for a view,
the cells its base reads outlined), so a slice, a transpose or an ``expand`` (stride 0) shows
as the same memory read another way.

>>> import tinygrad_edu as tg
>>> b = tg.arange(6.0)
>>> r = anatomy_record(b[1::2])
>>> r["strides"], r["offset"], r["cells"], r["base"]["cells"]
((2,), 1, [1, 3, 5], [0, 1, 2, 3, 4, 5])
"""

from __future__ import annotations

import numpy as np

from .style import COLORS, EDGE_COLORS, MONO, esc, new_graph

__all__ = ["anatomy_record", "draw_anatomy", "LABELS", "MAX_CELLS"]

#: The storage row shows at most this many cells (then ``…``): a picture fits 900 px.
MAX_CELLS = 16

# Each box's title and each field's name, as the seeds spell them: PyTorch's C++ members
# (seed 001) and Paddle's (seed 000). A field one framework does not have is absent.
LABELS = {
    "pytorch": {
        "tensor": "Tensor", "impl": "TensorImpl", "storage": "Storage (storage_)",
        "autograd": "AutogradMeta (autograd_meta_)", "view": "DifferentiableViewMeta",
        "sizes": "sizes_", "strides": "strides_", "offset": "storage_offset_",
        "dtype": "data_type_", "device": "device_opt_", "version": "version_counter_",
        "nbytes": "nbytes", "requires_grad": "requires_grad_", "grad": "grad_",
        "grad_fn": "grad_fn_", "grad_accumulator": "grad_accumulator_",
        "output_nr": "output_nr_", "hooks": "hooks_", "retains_grad": "retains_grad_",
        "base": "base_", "creation_meta": "creation_meta",
    },
    "paddle": {
        "tensor": "paddle::Tensor", "impl": "DenseTensor (impl_)",
        "storage": "Allocation (holder_)", "autograd": "AutogradMeta (autograd_meta_)",
        "view": "its base DenseTensor", "sizes": "meta_.dims", "strides": "meta_.strides",
        "offset": "meta_.offset", "dtype": "meta_.dtype", "device": "place_",
        "version": "inplace_version_counter_", "nbytes": "size", "requires_grad": "stop_gradient_",
        "grad": "grad_", "grad_fn": "grad_node_", "grad_accumulator": "grad_node_",
        "output_nr": "out_rank_", "slot": "out_slot_id_", "hooks": "gradient hooks",
        "retains_grad": "retain_grads_", "persistable": "persistable_", "base": "same holder_",
        "creation_meta": None,
    },
}  # fmt: skip


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def _cells(size, stride, offset) -> list:
    """The storage cells (element indices) a window reads, each once, in order."""
    idx = np.asarray(offset, dtype=np.int64)
    for i, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[i] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return sorted({int(i) for i in np.ravel(idx)}) if 0 not in size else []


def _window(t) -> dict:
    shape, strides, offset = tuple(t.shape), tuple(t.stride()), int(t.storage_offset())
    return {"shape": shape, "strides": strides, "offset": offset,
            "cells": _cells(shape, strides, offset)}  # fmt: skip


def _storage_values(t, n) -> list:
    """The first ``n`` elements of ``t``'s storage, in memory order."""
    if _is_torch(t):
        return t.detach().as_strided((n,), (1,), 0).cpu().tolist()
    # read the storage's array itself, not through ``as_strided``: in the course's student
    # edition that view is an assignment (A5), and the drawing must work before it is written
    from ..eager.anatomy import storage_root  # noqa: PLC0415 (viz imports no engine on load)

    flat = storage_root(t._data).ravel(order="K")[:n]  # the memory's order, not the view's
    return (flat.get() if hasattr(flat, "get") else np.asarray(flat)).tolist()  # (CuPy: get)


def _creation_meta(t) -> str | None:
    if t._base is None:
        return None
    if _is_torch(t):
        import torch  # noqa: PLC0415 (a torch tensor was given: torch is there)

        get = getattr(torch._C._autograd, "_get_creation_meta", None)
        return str(get(t)).split(".")[-1] if get is not None else "DEFAULT"
    if t._view_multi:
        return "MULTI_OUTPUT_NODE"
    return "NO_GRAD_MODE" if t._view_no_grad else "DEFAULT"


def _grad_accumulator(t):
    """A leaf's AccumulateGrad node when one is alive (without making one)."""
    if t.grad_fn is not None or not t.requires_grad:
        return None
    if _is_torch(t):
        return None  # PyTorch makes it on demand (x.view_as(x).grad_fn.next_functions)
    ref = t._grad_acc
    return ref() if ref is not None else None


def anatomy_record(x) -> dict:
    """The numbers :func:`draw_anatomy` shows for tensor ``x`` (ours or PyTorch's).

    Keys: ``shape``, ``strides``, ``offset``, ``cells`` (the storage elements ``x`` reads),
    ``dtype``, ``device``, ``contiguous``, ``storage`` (``nbytes``, ``data_ptr``,
    ``numel``, ``values`` of its first cells), ``requires_grad``, ``grad`` (its shape or
    None), ``grad_fn`` (the node's name), ``grad_accumulator``, ``output_nr``, ``version``,
    ``hooks``, ``retains_grad``, ``persistable``, ``is_view``, ``base`` (the base's window,
    for a view) and ``creation_meta``.
    """
    torch_tensor = _is_torch(x)
    if not torch_tensor and not hasattr(x, "untyped_storage"):
        raise TypeError(f"draw_anatomy: expected a tensor (tinygrad_edu's or torch's), got "
                        f"{type(x).__name__}; make one with tg.tensor(...)")  # fmt: skip
    out = _window(x)
    storage = x.untyped_storage()
    numel = storage.nbytes() // x.element_size()
    fn = x.grad_fn
    acc = _grad_accumulator(x)
    if torch_tensor:
        hooks = len(getattr(x, "_backward_hooks", None) or {})
    else:
        hooks = len(x._hooks or ()) + len(getattr(fn, "_tensor_hooks", None) or {})
    grad = x._grad if not torch_tensor else x.grad if fn is None or x.retains_grad else None
    out.update(
        dtype=str(x.dtype).replace("torch.", ""),
        device=str(x.device),
        contiguous=bool(x.is_contiguous()),
        storage={"nbytes": storage.nbytes(), "data_ptr": storage.data_ptr(), "numel": numel,
                 "values": _storage_values(x, min(numel, MAX_CELLS))},  # fmt: skip
        requires_grad=bool(x.requires_grad),
        grad=None if grad is None else tuple(grad.shape),
        grad_fn=None if fn is None else (fn.name() if callable(fn.name) else fn.name),
        grad_accumulator=None if acc is None else type(acc).__name__,
        output_nr=int(x.output_nr),
        version=int(x._version),
        hooks=hooks,
        retains_grad=bool(x.retains_grad) if torch_tensor else bool(x._flags & 1),
        persistable=bool(getattr(x, "persistable", False)),
        is_view=bool(x._is_view()),
        base=None if x._base is None else _window(x._base),
        creation_meta=_creation_meta(x),
        library="torch" if torch_tensor else "tinygrad_edu",
    )
    return out


# -- the drawing ------------------------------------------------------------------------------
def _table(title, rows, colors, note=None) -> str:
    fill, border = colors
    head = (f'<TR><TD COLSPAN="2" BGCOLOR="{border}"><FONT COLOR="white" POINT-SIZE="13">'
            f"<B>{esc(title)}</B></FONT></TD></TR>")  # fmt: skip
    body = "".join(
        f'<TR><TD ALIGN="LEFT"><FONT FACE="{MONO}" POINT-SIZE="11" COLOR="#475569">'
        f'{esc(k)}</FONT></TD><TD ALIGN="LEFT"><FONT FACE="{MONO}" POINT-SIZE="11">'
        f"{esc(v)}</FONT></TD></TR>"
        for k, v in rows
    )
    if note:
        body += (f'<TR><TD COLSPAN="2"><FONT POINT-SIZE="10" COLOR="#475569">{esc(note)}'
                 "</FONT></TD></TR>")  # fmt: skip
    return (f'<<TABLE BORDER="1" COLOR="{border}" BGCOLOR="{fill}" CELLBORDER="0" '
            f'CELLSPACING="0" CELLPADDING="3">{head}{body}</TABLE>>')  # fmt: skip


def _short(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def _storage_table(title, r, names) -> str:
    st = r["storage"]
    n = len(st["values"])
    read = set(r["cells"])
    base = set(r["base"]["cells"]) if r["base"] else set()
    fill, border = COLORS["tensor"]
    out_fill = COLORS["output"][0]
    index = "".join(f'<TD><FONT POINT-SIZE="9" COLOR="#64748b">{i}</FONT></TD>'
                    for i in range(n))  # fmt: skip
    cells = []
    for i, v in enumerate(st["values"]):
        bg = out_fill if i in read else "white"
        edge = border if i in base or i in read else "#cbd5e1"
        cells.append(f'<TD BORDER="1" COLOR="{edge}" BGCOLOR="{bg}" WIDTH="34">'
                     f'<FONT FACE="{MONO}" POINT-SIZE="10">{esc(_short(v))}</FONT></TD>')
    more = st["numel"] > n
    if more:
        index += "<TD></TD>"
        cells.append(f'<TD><FONT POINT-SIZE="10">… {st["numel"]}</FONT></TD>')
    span = n + int(more)
    head = (f'<TR><TD COLSPAN="{span}" BGCOLOR="{border}"><FONT COLOR="white" POINT-SIZE="13">'
            f"<B>{esc(title)}</B></FONT></TD></TR>")  # fmt: skip
    info = (f'{names["nbytes"]} {st["nbytes"]} bytes · {st["numel"]} × {r["dtype"]} · '
            f'data_ptr 0x{st["data_ptr"]:x}')
    legend = "filled: the cells this tensor reads" + (
        " · outlined: its base's" if r["base"] else "")
    return (f'<<TABLE BORDER="1" COLOR="{border}" BGCOLOR="{fill}" CELLBORDER="0" '
            f'CELLSPACING="2" CELLPADDING="2">{head}'
            f'<TR><TD COLSPAN="{span}"><FONT POINT-SIZE="10">{esc(info)}</FONT></TD></TR>'
            f"<TR>{index}</TR><TR>{''.join(cells)}</TR>"
            f'<TR><TD COLSPAN="{span}"><FONT POINT-SIZE="10" COLOR="#475569">{esc(legend)}'
            "</FONT></TD></TR></TABLE>>")  # fmt: skip


def _fmt(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def draw_anatomy(x, names: str = "pytorch", title: str | None = None):
    """Draw tensor ``x`` (ours or a ``torch.Tensor``) as seed 001 does: Tensor → TensorImpl
    → Storage, and its AutogradMeta (and view meta, for a view). ``names="paddle"`` labels
    the same boxes with Paddle's names (seed 000). Returns a ``graphviz.Digraph``."""
    if names not in LABELS:
        raise ValueError(f"draw_anatomy: names must be 'pytorch' or 'paddle', got {names!r}")
    r = anatomy_record(x)
    n = LABELS[names]
    paddle = names == "paddle"
    g = new_graph("anatomy", rankdir="TB")
    g.attr("node", shape="plaintext", margin="0")
    sub = f"{_fmt(r['shape'])} {r['dtype']}  ({r['library']})"
    g.node("tensor", _table(n["tensor"], [("shape", _fmt(r["shape"])),
                                          ("dtype", r["dtype"])], COLORS["leaf"]))  # fmt: skip
    impl_rows = [
        (n["sizes"], _fmt(r["shape"])), (n["strides"], _fmt(r["strides"])),
        (n["offset"], r["offset"]), (n["dtype"], r["dtype"]), (n["device"], r["device"]),
        ("is_contiguous", r["contiguous"]), (n["version"], r["version"]),
    ]  # fmt: skip
    g.node("impl", _table(n["impl"], impl_rows, COLORS["tensor"]))
    g.node("storage", _storage_table(n["storage"], r, n))
    if paddle:
        grad_node = r["grad_fn"] or (r["grad_accumulator"] or "GradNodeAccumulation"
                                     if r["requires_grad"] else "None")  # fmt: skip
        meta = [
            (n["requires_grad"], not r["requires_grad"]), (n["grad"], _grad_text(r)),
            (n["grad_fn"], grad_node), (n["slot"], 0), (n["output_nr"], r["output_nr"]),
            (n["retains_grad"], r["retains_grad"]), (n["persistable"], r["persistable"]),
            (n["hooks"], r["hooks"]),
        ]  # fmt: skip
    else:
        meta = [
            (n["requires_grad"], r["requires_grad"]), (n["grad"], _grad_text(r)),
            (n["grad_fn"], r["grad_fn"]), (n["grad_accumulator"], r["grad_accumulator"]),
            (n["output_nr"], r["output_nr"]), (n["hooks"], r["hooks"]),
            (n["retains_grad"], r["retains_grad"]),
        ]  # fmt: skip
    g.node("autograd", _table(n["autograd"], meta, COLORS["backward"]))
    arrow = {"color": EDGE_COLORS["forward"], "fontsize": "10"}
    g.edge("tensor", "impl", label="impl_", **arrow)
    g.edge("impl", "storage", label="storage_" if not paddle else "holder_", **arrow)
    g.edge("tensor", "autograd", label="autograd_meta_", **arrow)
    with g.subgraph() as s:  # the TensorImpl and its AutogradMeta one above the other
        s.attr(rank="same")
        s.node("impl")
        s.node("autograd")
    if r["base"] is not None:
        b = r["base"]
        rows = [("base " + n["sizes"], _fmt(b["shape"])), ("base " + n["strides"],
                _fmt(b["strides"])), ("base " + n["offset"], b["offset"])]  # fmt: skip
        if n["creation_meta"]:
            rows.insert(0, (n["creation_meta"], r["creation_meta"]))
        g.node("view", _table(f'{n["view"]} · {n["base"]}', rows, COLORS["module"],
                              note="the base reads the outlined cells"))  # fmt: skip
        g.edge("autograd", "view", label="view meta", **arrow)
        g.edge("view", "storage", label="same storage", style="dashed", **arrow)
    g.attr(label=title or f"the anatomy of a tensor: {sub}", labelloc="t", fontsize="15")
    return g


def _grad_text(r) -> str:
    return "None" if r["grad"] is None else f"tensor of shape {_fmt(r['grad'])}"
