r"""``Program`` and ``Block``: a static graph as Paddle Fluid describes it.

Fluid describes a network as a **Program**, a list of **Blocks**. Block 0, the *global
block*, holds the main computation; each branch of a ``cond`` and each ``while_loop`` body is
a *sub-block* whose ``parent`` is the block it was built in, as the body of an ``if`` or a
``for`` is a nested scope in C. A block holds **ops** and **vars**. In this engine a node is
a tensor *and* the op that computes it, so a block records nodes: ``vars`` are all of them,
by name, and ``ops`` are the ones an op computes (not Variables, not constants).

Training involves two programs:

- the **startup program** holds the parameters' initialisers (``uniform_random``,
  ``fill_constant``); it runs once, into a :class:`~tinygrad_edu.symbolic.static.scope.Scope`;
- the **main program** holds the network, its gradients and the parameter updates; it runs
  every step, reading and writing the same scope.

``program_guard(main, startup)`` makes two programs the current ones: nodes built inside are
recorded in ``main``, initialisers go to ``startup``. Outside a guard the current programs are
``default_main_program()`` and ``default_startup_program()``; these keep only the nodes that
something else still holds, so building graphs outside a guard never piles up memory.

>>> from tinygrad_edu.symbolic import Program, Variable, program_guard
>>> main, startup = Program(), Program()
>>> with program_guard(main, startup):
...     x = Variable("x")
...     y = x * 2 + 1
>>> [op.name for op in main.global_block().ops]
['(x*2)', '((x*2)+1)']
>>> sorted(main.global_block().vars)
['((x*2)+1)', '(x*2)', '1', '2', 'x']
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass

from ..tensor_node import CONSTANT, PLACEHOLDER, RECORDER, Node

__all__ = [
    "Program", "Block", "Update", "program_guard", "default_main_program",
    "default_startup_program", "sub_block",
]  # fmt: skip


@dataclass(frozen=True)
class Update:
    """After a run, the scope's value named ``target.name`` becomes the value of ``value``
    (Fluid's ``assign`` to a persistable variable: a parameter update, or an initialiser)."""

    target: Node
    value: Node


class Block:
    """Fluid's Block: the ops and vars of one scope of a program.

    Attributes:
        program: the :class:`Program` it belongs to.
        idx: its index in ``program.blocks`` (0 for the global block).
        parent_idx: the index of the block it was built in (-1 for the global block).
        updates: the :class:`Update` s a run applies to the scope (global block).
        parameters: the trainable parameters made with ``create_parameter`` (global block).
        params: the block's arguments, for a loop body: the loop variables of one iteration.
        outputs: what the block yields: a branch's results, a loop body's new variables.
        captures: the nodes from enclosing blocks that the block reads (bodies may use outer
            nodes), in the order the control-flow node takes them as inputs.
        visible: other blocks whose values this block reads as if they were outer nodes (the
            body of a loop's gradient reads the forward body's values, saved per iteration).
    """

    def __init__(self, program: Program, idx: int, parent: Block | None):
        self.program = program
        self.idx = idx
        self._parent = parent
        self.parent_idx = -1 if parent is None else parent.idx
        self.updates: list[Update] = []
        self.parameters: list = []
        self.params: tuple = ()
        self.outputs: tuple = ()
        self.captures: tuple = ()
        self.visible: tuple = ()
        self.orders: dict = {}  # roots -> evaluation order inside the block (cached)
        self._entries: list = []  # recorded nodes, in creation order (weakrefs when weak)
        self._compact_at = 1024

    def __repr__(self) -> str:
        return f"<Block {self.idx} (parent {self.parent_idx}), {len(self.nodes)} vars>"

    @property
    def parent(self) -> Block | None:
        """The enclosing block (Fluid's ``parent_idx``), None for the global block."""
        return self._parent

    def _record(self, node: Node) -> None:
        if not self.program._weak:
            self._entries.append(node)
            return
        self._entries.append(weakref.ref(node))
        if len(self._entries) > self._compact_at:  # drop the dead, keep appends O(1)
            self._entries = [r for r in self._entries if r() is not None]
            self._compact_at = max(1024, 2 * len(self._entries))

    @property
    def nodes(self) -> list:
        """Every node recorded in this block (still alive), in creation order."""
        if not self.program._weak:
            return list(self._entries)
        return [n for n in (r() for r in self._entries) if n is not None]

    @property
    def ops(self) -> list:
        """The nodes an op computes (one op and its output var each), in creation order."""
        return [n for n in self.nodes if n.op is not PLACEHOLDER and n.op is not CONSTANT]

    @property
    def vars(self) -> dict:
        """Every node by a unique name (a repeated name gets ``_1``, ``_2`` ...)."""
        return unique_names(self.nodes)

    def var(self, name: str) -> Node:
        """The var called ``name`` here, else in the enclosing blocks (Fluid's ``FindVar``)."""
        block = self
        while block is not None:
            found = block.vars.get(name)
            if found is not None:
                return found
            block = block.parent
        known = ", ".join(sorted(self.vars)[:12]) or "none"
        raise KeyError(f"block {self.idx} has no var named {name!r} (nor do its parents); "
                       f"its vars include: {known}")  # fmt: skip

    def ancestors(self):
        """This block, its parent, and so on up to the global block."""
        block = self
        while block is not None:
            yield block
            block = block.parent

    def is_inside(self, other: Block) -> bool:
        """True when this block is ``other`` or nested (at any depth) inside it."""
        return any(b is other for b in self.ancestors())


def unique_names(nodes) -> dict:
    """``{name: node}`` with a unique name for each node: its own, or ``name_k``."""
    out: dict = {}
    for node in nodes:
        name, k = node.name, 0
        while name in out:
            k += 1
            name = f"{node.name}_{k}"
        out[name] = node
    return out


class Program:
    """Fluid's Program: a list of :class:`Block` s; block 0 is the global block.

    >>> p = Program()
    >>> p.global_block().idx, p.global_block().parent is None, len(p.blocks)
    (0, True, 1)
    """

    def __init__(self, _weak: bool = False):
        self._weak = _weak
        self._blocks: list = [Block(self, 0, None)]  # sub-blocks by weakref when weak
        self._current = 0

    @property
    def blocks(self) -> list:
        """The blocks, by index (in a default program, a sub-block no node uses any more is
        None)."""
        return [b if isinstance(b, Block) else b() for b in self._blocks]

    def __repr__(self) -> str:
        ops = sum(len(b.ops) for b in self.blocks)
        return f"<Program: {len(self.blocks)} block(s), {ops} ops>"

    def global_block(self) -> Block:
        """Block 0: the main computation."""
        return self.blocks[0]

    def block(self, idx: int) -> Block:
        """Block number ``idx``."""
        return self.blocks[idx]

    def current_block(self) -> Block:
        """The block new nodes go to (a sub-block while control flow traces a body)."""
        return self.blocks[self._current]

    def all_parameters(self) -> list:
        """The trainable parameters made with ``create_parameter`` in this program."""
        return list(self.global_block().parameters)

    def to_string(self) -> str:
        """A listing of every block: its vars, then its ops as ``out = op(inputs)``."""
        lines = []
        names = {node: name for name, node in unique_names(self._all_nodes()).items()}
        for b in self.blocks:
            if b is None:
                continue
            lines.append(f"block {b.idx} (parent {b.parent_idx}):")
            for node in b.nodes:
                if node.op is PLACEHOLDER:
                    kind = "persistable var" if node.persistable else "var"
                    lines.append(f"  {kind} {names[node]}: shape={node.shape} dtype={node.dtype}")
            for node in b.ops:
                args = ", ".join(names.get(i, i.name) for i in node.inputs)
                attrs = {k: v for k, v in node.attrs.items() if not _is_graph_attr(v)}
                more = f" {attrs}" if attrs else ""
                lines.append(f"  {names[node]} = {node.op.name}({args}){more}")
            for u in b.updates:
                lines.append(f"  {u.target.name} <- {names.get(u.value, u.value.name)}")
        return "\n".join(lines)

    def _all_nodes(self) -> list:
        nodes = [n for b in self.blocks if b is not None for n in b.nodes]
        return sorted(nodes, key=lambda n: n.seq)

    def _create_block(self, parent: Block) -> Block:
        block = Block(self, len(self._blocks), parent)
        self._blocks.append(weakref.ref(block) if self._weak else block)
        return block

    def clone(self, for_test: bool = False) -> Program:
        """A copy of the program as it is now (Fluid's ``Program.clone``): the same vars, ops
        and parameters, sharing the scope's values; what is added to this program afterwards
        (``minimize``'s gradients and updates) is not in the copy.

        With ``for_test=True`` the copy is for evaluation: a run applies no updates (it never
        trains), and layers that behave differently in training (Fluid's ``batch_norm``) use
        their evaluation form. Fetch its vars by name, or by this program's nodes.
        """
        copy = Program()
        twins = _eval_twins(self) if for_test else {}
        if twins:
            with building_in(copy.global_block()):
                twins = _rebuild(self, twins)
        blocks = self.blocks
        copy._blocks = []
        for b in blocks:
            nb = Block(copy, len(copy._blocks), None)
            copy._blocks.append(nb)
            if b is None:
                continue
            nb._entries = [twins.get(n, n) for n in b.nodes]
            nb.params, nb.outputs, nb.captures = b.params, b.outputs, b.captures
            nb.parameters = list(b.parameters)
            nb.updates = [] if for_test else list(b.updates)
        for b, nb in zip(blocks, copy._blocks):
            if b is not None and b.parent is not None:
                nb._parent, nb.parent_idx = copy._blocks[b.parent_idx], b.parent_idx
                nb.visible = tuple(copy._blocks[v.idx] for v in b.visible)
        copy.twins = twins  # this program's node -> the copy's, where they differ
        return copy

    def to_json(self) -> str:
        """The program as JSON text (Fluid's ProgramDesc): blocks, vars, ops, attributes,
        updates. No pickle: :meth:`from_json` rebuilds it from data alone."""
        return JSON_CODEC["to_json"](self)

    @classmethod
    def from_json(cls, text: str) -> Program:
        """Rebuild a program written by :meth:`to_json`; it runs as the original did."""
        return JSON_CODEC["from_json"](text)


#: ``to_json`` and ``from_json``, handed over by ``serialize.py`` when it loads (it builds
#: Programs, so it imports this module, not the other way round); ``symbolic/__init__``
#: imports it, so the methods work wherever the package is imported.
JSON_CODEC: dict = {}


def _eval_twins(program: Program) -> dict:
    """node -> the node computing it in evaluation mode (set as ``node.for_test`` by the
    layers that differ, e.g. Fluid's ``batch_norm``)."""
    return {n: n.for_test for n in program._all_nodes()
            if getattr(n, "for_test", None) is not None}


def _rebuild(program: Program, twins: dict) -> dict:
    """Every node of ``program`` that reads, at any depth, a node with an evaluation twin,
    rebuilt on the twins: old node -> new node."""
    from ..graph import topo_sort  # noqa: PLC0415
    from .passes.rewrite import copy_with_inputs  # noqa: PLC0415

    new: dict = {}
    for node in topo_sort(program._all_nodes()):
        src = twins.get(node, node)
        inputs = tuple(new.get(i, i) for i in src.inputs)
        if src is not node or any(a is not b for a, b in zip(inputs, src.inputs)):
            new[node] = copy_with_inputs(src, inputs)
            new[node].name = node.name
    return new


def _is_graph_attr(value) -> bool:
    items = value if isinstance(value, list | tuple) else (value,)
    return any(isinstance(v, Node | Block) for v in items)


class _Current:
    """The programs that nodes and initialisers go to now."""

    main = Program(_weak=True)
    startup = Program(_weak=True)


_CURRENT = _Current()
RECORDER.block = _CURRENT.main.global_block()


def default_main_program() -> Program:
    """The program nodes are recorded in now: the guard's ``main``, else the global default."""
    return _CURRENT.main


def default_startup_program() -> Program:
    """Where parameters' initialisers go now: the guard's ``startup``, else the default."""
    return _CURRENT.startup


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None):
    """Build into ``main_program`` (and put initialisers in ``startup_program``) inside the
    ``with`` block; the previous programs are restored afterwards, even on error."""
    for p, what in ((main_program, "main_program"), (startup_program, "startup_program")):
        if p is not None and not isinstance(p, Program):
            raise TypeError(f"program_guard: {what} must be a Program, got {type(p).__name__}")
    saved = (_CURRENT.main, _CURRENT.startup, RECORDER.block)
    _CURRENT.main = main_program
    if startup_program is not None:
        _CURRENT.startup = startup_program
    RECORDER.block = main_program.current_block()
    try:
        yield main_program
    finally:
        _CURRENT.main, _CURRENT.startup, RECORDER.block = saved


@contextlib.contextmanager
def sub_block():
    """Open a new sub-block of the block being built (control flow traces a body in it)."""
    recording = RECORDER.block
    parent = recording if recording is not None else _CURRENT.main.global_block()
    program = parent.program
    block = program._create_block(parent)
    saved, program._current = program._current, block.idx
    RECORDER.block = block
    try:
        yield block
    finally:
        program._current = saved
        RECORDER.block = recording


@contextlib.contextmanager
def building_in(block: Block):
    """Record new nodes in ``block`` inside the ``with`` block (used to put initialisers in
    the startup program's global block)."""
    saved = RECORDER.block
    RECORDER.block = block
    try:
        yield block
    finally:
        RECORDER.block = saved
