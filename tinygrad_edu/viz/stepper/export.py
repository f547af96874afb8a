"""The stepper's frames written out: PNG bytes of one frame, and every frame as files."""

from __future__ import annotations

import os

from ..style import check_dot

__all__ = ["Export"]


class Export:
    """Writing frames (a mixin of :class:`~tinygrad_edu.viz.stepper.BackwardStepper`)."""

    def render_png(self, i: int) -> bytes:
        """PNG bytes of frame ``i`` (needs Graphviz's ``dot``)."""
        check_dot()
        return self.draw(i).pipe(format="png")

    def save_frames(self, directory, format: str = "png") -> list[str]:  # noqa: A002
        """Write every frame as ``step_000.<format>`` ... into ``directory``; returns paths."""
        check_dot()
        os.makedirs(directory, exist_ok=True)
        paths = []
        for i in range(len(self.frames)):
            path = os.path.join(os.fspath(directory), f"step_{i:03d}.{format}")
            with open(path, "wb") as fh:
                fh.write(self.draw(i).pipe(format=format))
            paths.append(path)
        return paths
