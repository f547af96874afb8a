"""The stepper's captions: each frame explained in words (why this node runs now, what it
received and sent, which gradients were summed), for the eager and the symbolic engine."""

from __future__ import annotations

import numpy as np  # display only

from .record import lane_key

__all__ = ["Captions"]


class Captions:
    """The caption half of :class:`~tinygrad_edu.viz.stepper.BackwardStepper` (a mixin: it
    reads the stepper's ``frames``, ``data`` and ``_tags``)."""

    def _tag(self, node) -> str:
        return self._tags.get(
            node, node.name() if callable(getattr(node, "name", None)) else str(node)
        )

    def _finish_eager(self):
        n_run = len(self.frames) - 2
        out_name = self.data.node(self.data.outputs[0]).label
        seen = {f.queue for f in self.frames if f.kind == "run"}
        seen.update(d for f in self.frames for d in f.lanes)
        self.lanes = sorted(seen or {"cpu"}, key=lane_key)
        self.threads = {f.queue: f.thread for f in self.frames if f.kind == "run"}
        several = len(self.lanes) > 1
        for i, f in enumerate(self.frames):
            if f.kind == "start":
                waits = sum(1 for v in f.dependencies.values() if v)
                f.caption = (
                    f"backward() on {out_name} begins. The engine walked the graph and counted, "
                    f"for each node, how many gradients it must wait for ({waits} nodes wait). "
                    f"Only the root is ready. {n_run} nodes will run, each once."
                )
                if several:
                    f.caption += (
                        f" The graph spans {len(self.lanes)} devices: one ready queue each "
                        f"({', '.join(self.lanes)}); the calling thread works the cpu queue, "
                        "a worker thread each other one."
                    )
                continue
            if f.kind == "done":
                f.caption = (
                    "Done: every node ran once, in the order of its ready queue "
                    "(highest sequence number first); the leaves' .grad hold the "
                    "gradients."
                )
                continue
            f.title = self._tag(f.node)
            f.caption = self._eager_caption(f)
            before = self.frames[i - 1].lanes.get(f.queue, [])
            if len(before) > 1 and f.node is before[0]:
                f.caption = self._why_first(f, before, several) + f.caption
            if several:
                f.caption = f"[{f.queue} queue, thread {f.thread!r}] " + f.caption

    def _why_first(self, f, ready, several=False) -> str:
        """Why ``f.node`` ran before the other ready nodes of its queue (see NOTE
        [AccumulateGrad runs first] in ``eager/node.py``)."""
        node = f.node
        head = f"{len(ready)} nodes were ready{' on this queue' if several else ''}; "
        ties = [n for n in ready if n is not node and n.sequence_nr == node.sequence_nr]
        if ties:
            others = ", ".join(self._tag(n) for n in ties)
            return (
                f"{head}{f.title} and {others} tie on sequence_nr (every AccumulateGrad has the "
                f"largest, 2**64 - 1); {f.title} became ready first, so it goes first. "
            )
        if hasattr(node, "variable"):
            return (
                f"{head}{f.title} goes first: every AccumulateGrad has the largest sequence_nr, "
                "2**64 - 1, so a leaf's gradient is added as soon as it is complete. "
            )
        return f"{head}{f.title} was created last (highest sequence_nr), so it goes first. "

    def _eager_caption(self, f) -> str:
        node = f.node
        parts = []
        if node is self._root:
            targets = ", ".join(self._tag(n) for n, _, _, _ in f.sent if n is not None)
            parts.append(
                f"GraphRoot runs: it hands the seed gradient (ones, shape "
                f"{_shape(f.received[0]) if f.received else '?'}) to {targets}."
            )
        else:
            k = f.received_count
            held = (
                "its input buffer held 1 gradient"
                if k <= 1
                else f"its input buffer held {k} gradients, summed into one before it ran"
            )
            if hasattr(node, "variable"):
                parts.append(
                    f"{self._tag(node)} runs: {held}; it adds that into "
                    f"{self._tags.get(node.variable, 'the leaf')}.grad."
                )
            else:
                parts.append(f"{self._tag(node)} runs: {held}.")
                sends = [
                    f"{self._tag(n)}"
                    + (
                        f" (input {pos})"
                        if pos is not None and len(node.next_functions) > 1
                        else ""
                    )
                    for n, pos, g, _ in f.sent
                    if g is not None
                ]
                if sends:
                    parts.append("It sends gradients to " + ", ".join(sends) + ".")
        for n, _, _g, summed in f.sent:
            if summed:
                parts.append(
                    f"{self._tag(n)} already had a gradient waiting: the new one is "
                    "added to it (fan-in)."
                )
        if f.newly_ready:
            parts.append("Now ready: " + ", ".join(self._tag(n) for n in f.newly_ready) + ".")
        return " ".join(parts)

    def _finish_symbolic(self):
        from ...symbolic import CONSTANT, PLACEHOLDER  # noqa: PLC0415

        labels = {r.ref: r.label for r in self.data.nodes if r.kind == "tensor"}
        titles = {
            r.ref: r.info.get("grad_of") or r.label for r in self.data.nodes if r.kind == "tensor"
        }
        self._tags = titles
        n = len(self.frames) - 2
        for f in self.frames:
            if f.kind == "start":
                f.caption = (
                    f"The Executor sorted the {n} nodes topologically (each after its "
                    "inputs) once; run() now computes them in that order, forward "
                    "nodes and gradient nodes alike."
                )
                continue
            if f.kind == "done":
                f.caption = (
                    "Done: each node was computed once, after its inputs. The gradient "
                    "nodes are ordinary nodes: the gradient is just more graph."
                )
                continue
            node = f.node
            f.title = titles.get(node, node.name)
            args = ", ".join(titles.get(i, labels.get(i, i.name)) for i in node.inputs)
            if node.op is PLACEHOLDER:
                f.caption = f"Variable {f.title} gets its value from the feed_dict."
            elif node.op is CONSTANT:
                f.caption = f"The constant {f.title} is ready."
            elif node.is_adjoint_sum:
                f.caption = (
                    f"{f.title}: an add node sums the partial adjoints ({args}) of a "
                    "value used more than once."
                )
            elif node.is_gradient:
                f.caption = f"Gradient node {f.title} = {node.op.name}({args}) is computed."
            else:
                f.caption = f"Forward node {f.title} = {node.op.name}({args}) is computed."

    def caption(self, i: int) -> str:
        """The text that explains frame ``i``."""
        return self.frames[i].caption


def _shape(a) -> str:
    return "×".join(str(d) for d in np.shape(a)) or "scalar"
