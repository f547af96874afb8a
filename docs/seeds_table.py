"""The seeds' concordance: every structure and field the design seeds name, the library's
name for it, where it lives, the lesson that shows it and the drawing.

One table, :data:`ROWS`; ``python docs/seeds_table.py`` writes ``docs/concepts/seeds.md`` from
it, and ``tests/test_seeds_table.py`` checks that the page is current and that every code
location in the table resolves (``module:attribute.path``), so the page cannot drift.
"""

from __future__ import annotations

from pathlib import Path

PAGE = Path(__file__).resolve().parent / "concepts" / "seeds.md"

SEEDS = {
    "000": ("000_437be7d016301a2e.txt", "Paddle's dygraph: AutogradMeta, GradNodeBase, "
            "TensorWrapper, GradTensorHolder"),
    "001": ("001_d4195a7dd79cc859.txt", "PyTorch's TensorImpl, AutogradMeta, Node and Edge"),
    "002": ("002_834aea65c19b37a3.txt", "Fluid: programs, places, kernels, the Executor"),
    "003": ("003_8092bbf307d44eea.txt", "PyTorch's engine: GraphTask, ReadyQueue, FunctionTask"),
}

T = "tinygrad_edu.eager.tensor:Tensor"
E = "tinygrad_edu.eager.engine"
N = "tinygrad_edu.eager.node"
ANATOMY = "viz.draw_anatomy"
EAGER = "viz.draw_eager"
SYMBOLIC = "viz.draw_symbolic"
L02, L03, L05 = "02_tensors_as_nodes", "03_ops_as_nodes", "05_backward_engine"
L07, L08, L10 = "07_gpu", "08_static_graphs", "10_device_engine"
L16 = "16_anatomy"

#: (seed, the seed's name, the library's name, where it lives, lesson, drawing)
ROWS = [
    # -- 001: PyTorch's tensor -----------------------------------------------------------------
    ("001", "TensorImpl", "the eager Tensor's array `x._data` (a numpy/CuPy window)",
     f"{T}._data", L16, ANATOMY),
    ("001", "sizes_and_strides_", "`x.shape`, `x.stride()`", f"{T}.stride", L16, ANATOMY),
    ("001", "storage_offset_", "`x.storage_offset()`", f"{T}.storage_offset", L16, ANATOMY),
    ("001", "storage_", "`x.untyped_storage()`",
     "tinygrad_edu.eager.anatomy:UntypedStorage", L16, ANATOMY),
    ("001", "data_type_, device_opt_", "`x.dtype`, `x.device`", f"{T}.device", L16, ANATOMY),
    ("001", "version_counter_", "`x._version` (the shared list `x._counter`)",
     f"{T}._version", L16, ANATOMY),
    ("001", "AutogradMeta", "the autograd slots of Tensor", f"{T}", L16, ANATOMY),
    ("001", "requires_grad_", "`x.requires_grad`", f"{T}.requires_grad", L02, ANATOMY),
    ("001", "grad_", "`x.grad`", f"{T}.grad", L02, ANATOMY),
    ("001", "grad_fn_", "`x.grad_fn`", f"{T}.grad_fn", L03, ANATOMY),
    ("001", "grad_accumulator_", "`x._grad_accumulator()` (held weakly)",
     f"{T}._grad_accumulator", L05, ANATOMY),
    ("001", "output_nr_", "`x.output_nr`", f"{T}.output_nr", L03, ANATOMY),
    ("001", "hooks_", "`x.register_hook(fn)`", f"{T}.register_hook", L05, ANATOMY),
    ("001", "retains_grad_", "`x.retain_grad()`", f"{T}.retain_grad", L05, ANATOMY),
    ("001", "DifferentiableViewMeta, base_", "`x._base`, `x._is_view()`", f"{T}._is_view",
     L16, ANATOMY),
    ("001", "CreationMeta", "`x._view_no_grad`, `x._view_multi` (refusals of in-place)",
     f"{T}._check_view_inplace", L16, ANATOMY),
    ("001", "as_strided", "`x.as_strided(size, stride, offset)`", f"{T}.as_strided", L16,
     ANATOMY),
    ("001", "Node", "Node (`OpBackward` per op)", f"{N}:Node", L03, EAGER),
    ("001", "next_edges_", "`node.next_functions`", f"{N}:Node", L03, EAGER),
    ("001", "sequence_nr_", "`node.sequence_nr`", f"{N}:Node", L05, EAGER),
    ("001", "topological_nr_", "`node.topological_nr`", f"{N}:Node.topological_nr", L16,
     EAGER),
    ("001", "input_metadata_", "`node._input_metadata`", f"{N}:Node._input_metadata", L16,
     EAGER),
    ("001", "operator()", "`node.apply(*grads)`", f"{N}:Node.apply", L16, EAGER),
    ("001", "AccumulateGrad", "AccumulateGrad", f"{N}:AccumulateGrad", L05, EAGER),
    ("001", "SavedVariable", "SavedTensor", f"{N}:SavedTensor", L05, EAGER),
    ("001", "Function, AutogradContext", "`tg.autograd.Function`, its `ctx`",
     "tinygrad_edu.eager.function:FunctionCtx", L05, EAGER),
    ("001", "CopySlices", "CopySlices (in-place through a view)", f"{N}:CopySlices", L05,
     EAGER),
    # -- 000: Paddle's dygraph -----------------------------------------------------------------
    ("000", "paddle::Tensor, DenseTensor", "the eager Tensor and its array", f"{T}", L16,
     ANATOMY),
    ("000", "AutogradMeta", "the autograd slots of Tensor", f"{T}", L16, ANATOMY),
    ("000", "grad_node_", "`x.grad_fn` (or the leaf's AccumulateGrad)", f"{T}.grad_fn", L03,
     ANATOMY),
    ("000", "out_slot_id_, out_rank_", "`x.output_nr`", f"{T}.output_nr", L16, ANATOMY),
    ("000", "stop_gradient_", "`x.stop_gradient`", f"{T}.stop_gradient", L16, ANATOMY),
    ("000", "persistable_", "`x.persistable`", f"{T}.persistable", None, ANATOMY),
    ("000", "retain_grads_", "`x.retain_grads()`", f"{T}.retain_grads", L05, ANATOMY),
    ("000", "inplace_version", "`x._version`", f"{T}._version", L16, ANATOMY),
    ("000", "GradNodeBase", "Node", f"{N}:Node", L03, EAGER),
    ("000", "GradSlotMeta (bwd_in_meta_, bwd_out_meta_)", "`node._input_metadata`",
     f"{N}:Node._input_metadata", L16, EAGER),
    ("000", "TensorWrapper", "SavedTensor (a node's saved values)", f"{N}:SavedTensor", L05,
     EAGER),
    ("000", "GradTensorHolder", "InputBuffer (a node's incoming gradients)",
     f"{E}:InputBuffer", L05, None),
    ("000", "gradient_hooks_", "`x.register_hook(fn)`", f"{T}.register_hook", L05, None),
    # -- 003: PyTorch's engine -----------------------------------------------------------------
    ("003", "GraphTask", "GraphTask", f"{E}:GraphTask", L10, None),
    ("003", "ReadyQueue", "ReadyQueue (one per device)", f"{E}_threads:ReadyQueue", L10, None),
    ("003", "FunctionTask", "FunctionTask", f"{E}_threads:FunctionTask", L10, None),
    ("003", "InputBuffer", "InputBuffer", f"{E}:InputBuffer", L10, None),
    ("003", "NO_DEVICE", "the CPU queue (`current_queue_device()`)",
     f"{E}_threads:current_queue_device", L10, None),
    ("003", "Engine::execute", "`execute(task)`", f"{E}:execute", L10, None),
    # -- 002: Fluid -----------------------------------------------------------------------------
    ("002", "ProgramDesc", "Program", "tinygrad_edu.symbolic.static.program:Program", L08,
     SYMBOLIC),
    ("002", "BlockDesc", "Block", "tinygrad_edu.symbolic.static.program:Block", L08, SYMBOLIC),
    ("002", "OpDesc", "a symbolic Node's `op` and `attrs`",
     "tinygrad_edu.symbolic.tensor_node:Node", L08, SYMBOLIC),
    ("002", "VarDesc", "`S.Variable(name, shape, dtype)`",
     "tinygrad_edu.symbolic.tensor_node:Variable", L08, SYMBOLIC),
    ("002", "Place (CPUPlace, CUDAPlace)", "a device, `fluid.CPUPlace`/`CUDAPlace`",
     "tinygrad_edu.symbolic.static.fluid:CPUPlace", L07, None),
    ("002", "DeviceContext", "the array namespace per device",
     "tinygrad_edu.backend:get_namespace", L07, None),
    ("002", "OpKernel, OpRegistry", "the op registry; each op's `forward(xp, ...)` on the "
     "device's namespace", "tinygrad_edu.ops.base:REGISTRY", L03, None),
    ("002", "grad op makers", "each op's derivative rule `Op.vjp`",
     "tinygrad_edu.ops.base:Op.vjp", L03, SYMBOLIC),
    ("002", "InferShape", "each op's shape rule `Op.shape`", "tinygrad_edu.ops.base:Op.shape",
     L03, None),
    ("002", "Scope", "Scope", "tinygrad_edu.symbolic.static.scope:Scope", L08, None),
    ("002", "Executor", "Executor", "tinygrad_edu.symbolic.executor:Executor", L08, None),
]  # fmt: skip

#: Rows whose code is being added elsewhere: expected not to resolve until that work lands.
PENDING: set = set()


def _cell(value) -> str:
    return "–" if value is None else value


def render() -> str:
    """The page's text."""
    lines = [
        "# The seeds, in this library's names",
        "",
        "The design seeds (`shared/seeds/`) describe how PyTorch, Paddle and Fluid are built. "
        "This page lists every structure and field they name, the name it has here, where it "
        "lives (`module:attribute`), the lesson that shows it and the drawing "
        "(`viz.draw_anatomy(x)` draws a tensor, `names=\"paddle\"` in Paddle's names).",
        "",
        "Generated by `python docs/seeds_table.py` from `docs/seeds_table.py`; "
        "`tests/test_seeds_table.py` checks every location.",
    ]
    for seed, (file, what) in SEEDS.items():
        lines += ["", f"## {file}: {what}", "",
                  "| the seed's name | here | where | lesson | drawing |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for s, name, ours, where, lesson, drawing in ROWS:
            if s == seed:
                lines.append(f"| `{name}` | {ours} | `{where}` | {_cell(lesson)} | "
                             f"{_cell(drawing and f'`{drawing}`')} |")  # fmt: skip
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE}")
