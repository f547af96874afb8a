"""The per-op test table (as PyTorch's ``OpInfo``): one :class:`OpInfo` per registry op (or per
public name that is not one op), which every op test iterates.

An entry gathers what the tests know about one op:

- ``gradients``: derivative cases (``grad_*.py``): a ``build(M, *xs, **extra)`` over the
  namespace both engines share and a Hypothesis strategy of float64 inputs; the rule is checked
  against central differences in the symbolic engine (``tests/ops/test_gradcheck.py``) and in
  the eager one (``tests/eager/test_gradcheck.py``), the static-shape flag and second order
  included (``second_order``);
- ``rows``: the public names against PyTorch (``torch_*.py``): the calling form, deterministic
  examples in several layouts, the tolerances, whether second derivatives are compared and the
  errors PyTorch raises on some examples (``raises``); run by ``tests/compare`` (values,
  dtypes, derivatives, errors) and ``tests/gpu/test_ops_table.py`` (GPU against CPU in three
  float dtypes);
- ``kernel_example``: inputs and attributes for the forward kernel and raw derivative rule
  on the Array API strict namespace (``kernel_core.py``; ``tests/ops/test_strict_namespace.py``).

The rows are written in the sections below, grouped by the files' subjects; ``OPS`` joins them
by op. The flat lists (``GRADIENT_CASES``, ``ROWS``) keep the order the sections define, so
test ids stay stable.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from tests.opinfo import torch_core
from tinygrad_edu.ops.surface import SURFACES

__all__ = ["OpInfo", "OPS", "GRADIENT_CASES", "SECOND_ORDER", "ROWS", "KERNEL_EXAMPLES",
           "case_by_name", "rng_for", "names_of", "call_row"]  # fmt: skip

ROWS = torch_core.CASES  # rows against PyTorch, in the sections' order
rng_for, names_of, call_row = torch_core.rng_for, torch_core.names_of, torch_core.call_row
# The derivative cases draw their inputs with Hypothesis, which the GPU image does not have:
# they, the kernel examples and the joined table load on first use, so the GPU test can run
# the rows with numpy alone.
_LAZY = {"GRADIENT_CASES": ("grad_core", "CASES"), "SECOND_ORDER": ("grad_core", "SECOND_ORDER"),
         "case_by_name": ("grad_core", "case_by_name"),
         "KERNEL_EXAMPLES": ("kernel_core", "EXAMPLES")}  # fmt: skip


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f"tests.opinfo.{module}"), attr)
    elif name == "OPS":
        value = _build()
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


@dataclass
class OpInfo:
    """Everything the op tests know about one op."""

    name: str  # the registry op, or the first public name of rows that are not one op
    gradients: list = field(default_factory=list)  # grad_core.Case
    rows: list = field(default_factory=list)  # torch_core.Case
    second_order: bool = False  # some derivative case of the op checks second derivatives
    kernel_example: tuple | None = None  # (inputs, attrs) for the strict-namespace kernel test

    def __repr__(self) -> str:
        return (f"OpInfo({self.name!r}: {len(self.gradients)} derivative cases, "
                f"{len(self.rows)} rows against PyTorch, names {self.names})")

    @property
    def names(self) -> tuple:
        """The public names the rows compare with PyTorch."""
        return tuple(dict.fromkeys(n for row in self.rows for n in row.names))


def _op_of_name() -> dict:
    """Public name ("Tensor.exp", "tg.exp", "F.gelu") -> the op the surface table gives it."""
    out = {}
    for row in SURFACES:
        for n in names_of(row.op):
            out.setdefault(n, row.op)
    return out


def _build() -> dict[str, OpInfo]:
    ops: dict[str, OpInfo] = {}

    def entry(name):
        return ops.setdefault(name, OpInfo(name))

    second_order = __getattr__("SECOND_ORDER")
    for case in __getattr__("GRADIENT_CASES"):  # a case of several ops belongs to the first
        info = entry(case.ops[0])
        info.gradients.append(case)
        info.second_order |= case.name in second_order
    op_of = _op_of_name()
    for row in ROWS:
        entry(row.op or op_of.get(row.names[0], row.names[0])).rows.append(row)
    for name, example in __getattr__("KERNEL_EXAMPLES").items():
        entry(name).kernel_example = example
    return ops
