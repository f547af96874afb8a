"""The stepper's layout: one frame drawn as the whole graph with that step's state (the
running node orange, done nodes grey-green, ready nodes blue with their queue position,
dependency counts and buffers in the boxes) and a side panel with the queue and the lanes."""

from __future__ import annotations

import textwrap

from ..eager_form import add_eager
from ..records import EdgeRecord
from ..style import COLORS, esc, format_array, new_graph
from ..symbolic_form import add_symbolic

__all__ = ["Layout", "RUNNING", "DONE", "READY", "WAITING"]

RUNNING = ("#fdba74", "#c2410c")
DONE = ("#f1f5f9", "#16a34a")
READY = ("#cffafe", "#0e7490")
WAITING = ("#ffffff", "#64748b")


class Layout:
    """The drawing half of :class:`~tinygrad_edu.viz.stepper.BackwardStepper` (a mixin)."""

    def draw(self, i: int, caption: bool = True):
        """A ``graphviz.Digraph`` of frame ``i``: the whole graph, with this step's state.

        The drawing's title says the step; ``caption=True`` writes the step's caption under
        it (a picture that stands alone: a PNG, a GIF). A player that shows the caption as
        text beside the picture passes ``caption=False``, so the words are not there twice.
        """
        if not -len(self.frames) <= i < len(self.frames):
            raise IndexError(
                f"frame {i} does not exist; this stepper has {len(self.frames)} "
                f"frames (0 to {len(self.frames) - 1})"
            )
        f = self.frames[i]
        g = new_graph(f"step{i % len(self.frames)}")
        g.attr(ranksep="0.3", nodesep="0.25")
        lines = textwrap.wrap(f.caption, 80) if caption else []
        head = f"step {i % len(self.frames)} of {len(self.frames) - 1}" + (
            f": {f.title}" if f.kind == "run" else f" ({f.title})"
        )
        rows = "".join(
            f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="13">{esc(line)}</FONT></TD></TR>'
            for line in lines
        )
        g.attr(
            label=f'<<TABLE BORDER="0" CELLSPACING="2"><TR><TD ALIGN="LEFT"><FONT '
            f'POINT-SIZE="17"><B>{esc(head)}</B></FONT></TD></TR>{rows}</TABLE>>',
            labelloc="t",
            labeljust="l",
        )
        if self.form == "eager":
            add_eager(g, self.data, decorate=lambda r: self._decorate_eager(r, f), show_grad=False)
            g.node("panel", self._panel(f), shape="plaintext")
        else:
            add_symbolic(g, self.data, decorate=lambda r: self._decorate_symbolic(r, f))
        return g

    def _status_attrs(self, colors, bold=False):
        fill, border = colors
        return {"fillcolor": fill, "color": border, "penwidth": "3" if bold else "1.5"}

    def _decorate_eager(self, rec, f):
        if isinstance(rec, EdgeRecord) or rec.kind == "elision":
            if isinstance(rec, EdgeRecord):  # gradients sent in this step are bold
                src = self._ref(rec.src)
                if src is f.node and f.node is not None and rec.kind != "accumulate":
                    return {"attrs": {"penwidth": "3", "color": RUNNING[1]}}
                if rec.kind == "output" and f.node is self._root and f.kind == "run":
                    return {"attrs": {"penwidth": "3", "color": RUNNING[1]}}
            return {}
        if rec.kind == "leaf":
            g = f.leaf_grads.get(rec.ref)
            rows = (
                [(".grad", format_array(g), "#0f172a")]
                if g is not None
                else [(".grad: None", [], "#64748b")]
            )
            acc = self._ref(rec.info["accumulate"])
            bold = f.node is acc and f.node is not None
            return {"rows": rows, "attrs": {"penwidth": "3"} if bold else {}}
        if rec.kind == "output":
            running = f.node is self._root and f.node is not None
            return {"attrs": self._status_attrs(RUNNING, True)} if running else {}
        node = rec.ref
        title = self._tags.get(node, rec.label)
        rows = []
        if f.node is node:
            status, k = RUNNING, f.received_count
            rows.append(
                (
                    f"running · got {k} gradient{'s' if k != 1 else ''}"
                    + (" (summed)" if k > 1 else ""),
                    [line for g in f.received if g is not None for line in format_array(g, 4)],
                    "#7c2d12",
                )
            )
        elif node in f.done:
            status = DONE
            rows.append(("done", [], "#15803d"))
        elif node in f.ready:
            status = READY
            lane = f.lanes.get(str(node.device), f.ready)
            position = lane.index(node) + 1 if node in lane else f.ready.index(node) + 1
            rows.append((f"ready · queue #{position}", [], "#0e7490"))
        elif node in f.running or (len(self.lanes) > 1 and f.dependencies.get(node) == 0):
            status = RUNNING  # taken off its queue by another thread, not finished yet
            rows.append(("running (another thread)", [], "#7c2d12"))
        else:
            status = WAITING
            rows.append((f"waits for {f.dependencies.get(node, 0)} gradient(s)", [], "#475569"))
        if len(self.lanes) > 1:  # which lane (queue) the node runs on
            text, values, color = rows[0]
            rows[0] = (f"{text} · {node.device}", values, color)
        buf = f.buffers.get(node)
        if buf and f.node is not node and node not in f.done:
            got = self._arrived(node, f)
            for g in buf:
                if g is not None:
                    rows.append(
                        (
                            f"buffer ({got} summed)" if got > 1 else "buffer",
                            format_array(g, 4),
                            "#1e3a8a",
                        )
                    )
        return {"rows": rows, "title": title, "attrs": self._status_attrs(status, f.node is node)}

    def _arrived(self, node, f) -> int:
        """Gradients delivered to ``node`` up to frame ``f``."""
        count = 0
        for fr in self.frames:
            count += sum(1 for n, _, g, _ in fr.sent if n is node and g is not None)
            if fr is f:
                break
        return count

    def _ref(self, rid):
        return next((r.ref for r in self.data.nodes if r.id == rid), None)

    def _panel(self, f) -> str:
        def row(text, color="#0f172a", bold=False):
            t = f"<B>{esc(text)}</B>" if bold else esc(text)
            font = f'<FONT POINT-SIZE="11" COLOR="{color}">{t}</FONT>'
            return f'<TR><TD ALIGN="LEFT">{font}</TD></TR>'

        if len(self.lanes) > 1:
            rows = [f"<TR><TD>{self._lanes_table(f)}</TD></TR>"]
        else:
            rows = [row("ready queue (next first)", bold=True)]
            rows += [row(f"{k + 1}. {self._tag_any(n)}", "#0e7490") for k, n in enumerate(f.ready)]
            if not f.ready:
                rows.append(row("(empty)", "#64748b"))
        rows.append(row("dependencies (gradients still awaited)", bold=True))
        deps = [(self._tag_any(n), c) for n, c in f.dependencies.items()]
        rows += [row(f"{name}: {c}", "#475569" if c else "#15803d") for name, c in deps]
        swatches = "".join(
            f'<TD BGCOLOR="{fill}" COLOR="{border}" BORDER="2" FIXEDSIZE="TRUE" WIDTH="14" '
            f'HEIGHT="12"></TD><TD ALIGN="LEFT"><FONT POINT-SIZE="10">{esc(text)} </FONT></TD>'
            for text, (fill, border) in (
                ("running", RUNNING),
                ("ready", READY),
                ("done", DONE),
                ("waiting", WAITING),
            )
        )
        rows.append(
            f'<TR><TD ALIGN="LEFT"><TABLE BORDER="0" CELLSPACING="2"><TR>{swatches}</TR>'
            "</TABLE></TD></TR>"
        )
        return (
            '<<TABLE BORDER="1" COLOR="#94a3b8" CELLBORDER="0" CELLSPACING="2" '
            'CELLPADDING="2" BGCOLOR="#f8fafc">' + "".join(rows) + "</TABLE>>"
        )

    def _lanes_table(self, f) -> str:
        """One column per ready queue (lane): the steps each ran so far, then its queue."""

        def cell(text="", color="#0f172a", bold=False, fill=None):
            if not text:
                return "<TD></TD>"
            t = f"<B>{esc(text)}</B>" if bold else esc(text)
            bg = f' BGCOLOR="{fill}"' if fill else ""
            return f'<TD ALIGN="LEFT"{bg}><FONT POINT-SIZE="10" COLOR="{color}">{t}</FONT></TD>'

        upto = self.frames.index(f)
        head = "".join(cell(lane, bold=True) for lane in self.lanes)
        who = "".join(
            cell(f"thread {self.threads.get(lane, '-')}", "#64748b") for lane in self.lanes
        )
        steps = []
        for k, fr in enumerate(self.frames[1 : upto + 1], start=1):
            if fr.kind != "run":
                continue
            now = fr is f
            steps.append(
                "<TR>"
                + "".join(
                    cell(
                        f"{k}. {self._tag_any(fr.node)}" if lane == fr.queue else "",
                        RUNNING[1] if now else "#15803d",
                        bold=now,
                        fill=RUNNING[0] if now and lane == fr.queue else None,
                    )
                    for lane in self.lanes
                )
                + "</TR>"
            )
        shown = steps[-12:]
        if len(steps) > len(shown):
            shown.insert(0, "<TR>" + cell(f"({len(steps) - len(shown)} earlier steps)") + "</TR>")
        ready = "".join(
            cell(
                "ready: "
                + (", ".join(self._tag_any(n) for n in f.lanes.get(lane, [])) or "(empty)"),
                READY[1],
            )
            for lane in self.lanes
        )
        return (
            '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3" COLOR="#cbd5e1">'
            f"<TR>{head}</TR><TR>{who}</TR>{''.join(shown)}<TR>{ready}</TR></TABLE>"
        )

    def _tag_any(self, node) -> str:
        return "GraphRoot" if node is getattr(self, "_root", None) else self._tag(node)

    def _decorate_symbolic(self, rec, f):
        if isinstance(rec, EdgeRecord) or rec.kind == "elision":
            if isinstance(rec, EdgeRecord) and f.node is not None:
                dst = self._ref(rec.dst)
                if dst is f.node:
                    return {"attrs": {"penwidth": "2.5", "color": RUNNING[1]}}
            return {}
        if rec.kind == "op":
            if rec.ref is f.node:
                return {"attrs": {"penwidth": "2.5", "color": RUNNING[1]}}
            return {}
        node = rec.ref
        if node is f.node:
            return {
                "rows": [("computing", format_array(f.values[node], 4), "#7c2d12")],
                "attrs": self._status_attrs(RUNNING, True),
            }
        if node in f.values:
            base = COLORS["gradient" if node.is_gradient else "tensor"]
            return {
                "rows": [("value", format_array(f.values[node], 4), "#0f172a")],
                "attrs": {"fillcolor": base[0]},
            }
        return {"attrs": {"fillcolor": WAITING[0], "color": WAITING[1]}}
