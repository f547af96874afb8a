"""Drawing what ``tg.compile`` captured: the same program as a tensor-as-node graph.

While it runs eagerly a program is a graph of backward ops (op-as-node, ``viz.draw(loss)``);
once ``tg.compile`` captured it, it is a symbolic graph (tensor-as-node), and its backward is
another symbolic graph built ahead of time. :func:`draw_compiled` draws either, before or
after the optimisation passes; in the eager graph of a compiled call's output the whole
compiled region is one node, ``CompiledFunctionBackward``.
"""

from __future__ import annotations

from .draw import draw_symbolic
from .kernels import draw_kernels

__all__ = ["draw_compiled"]

PARTS = ("forward", "backward", "kernels")


def draw_compiled(compiled, part: str = "forward", passes: bool = True, index: int = 0,
                  **kwargs):  # fmt: skip
    """Draw a graph that ``tg.compile`` captured.

    Args:
        compiled: what ``tg.compile`` returned (a function or a module), called at least once.
        part: ``"forward"`` (the outputs, the values written back, the saved values) or
            ``"backward"`` (the gradient graph, fed the saved values and the outputs'
            gradients), or ``"kernels"`` (a program compiled with ``backend="fuse"``: the
            forward graph op by op, each fused kernel's ops boxed together).
        passes: True: the graph after the optimisation passes (what the generated code
            computes); False: as captured.
        index: which specialisation (0: the newest; see ``compiled.explain()``).
        kwargs: passed on to :func:`draw_symbolic` (``max_nodes``, ``legend`` ...).
    """
    if part not in PARTS:
        raise ValueError(f"draw_compiled: part must be one of {PARTS}, got {part!r}")
    programs = getattr(compiled, "programs", None)
    if programs is None:
        raise TypeError(f"draw_compiled: expected what tg.compile returned, got "
                        f"{type(compiled).__name__}")  # fmt: skip
    if not programs:
        raise ValueError(
            "draw_compiled: nothing is compiled yet: call the compiled function once (the first "
            "call traces it), or see .explain() for the graph breaks that made it run eagerly"
        )
    if not 0 <= index < len(programs):
        raise IndexError(f"draw_compiled: index {index}, but there are {len(programs)} "
                         "specialisation(s)")  # fmt: skip
    program = programs[index]
    if part == "kernels":  # backend="fuse": the forward program with its fusion groups boxed
        found = getattr(program.forward, "kernels", None)
        if not found:
            raise ValueError("draw_compiled: this program has no fused kernels: compile with "
                             "tg.compile(fn, backend=\"fuse\") (numba installed)")  # fmt: skip
        title = kwargs.get("title", "tg.compile: the fusion groups (boxed: one loop kernel)")
        return draw_kernels(program.forward_nodes, found, title)
    if part == "forward":
        nodes = program.forward_nodes if passes else program.raw_forward
    else:
        nodes = program.backward_nodes if passes else program.raw_backward
    if not nodes:
        raise ValueError(f"draw_compiled: this specialisation has no {part} graph (no input "
                         "requires grad, or grad mode was off when it was traced)")  # fmt: skip
    stage = "after the passes" if passes else "as captured"
    kwargs.setdefault("title", f"tg.compile: the {part} graph, {stage}")
    return draw_symbolic(nodes, **kwargs)
