"""The stepper animated: an animated GIF of all frames, and a Jupyter slider over them."""

from __future__ import annotations

import io
import os

from ..style import check_dot, esc

__all__ = ["Animate"]


class Animate:
    """Animating frames (a mixin of :class:`~tinygrad_edu.viz.stepper.BackwardStepper`; uses
    its ``render_png``)."""

    def save_gif(self, path, duration: int = 1600, last_duration: int | None = 4000) -> str:
        """Write an animated GIF (``duration`` ms per frame, ``last_duration`` for the last).

        Every frame is rendered with ``dot`` and padded to the largest frame's size, so the
        picture does not jump. Needs Pillow.
        """
        try:
            from PIL import Image  # noqa: PLC0415
        except ImportError:
            raise ImportError('save_gif needs Pillow: pip install "tinygrad_edu[viz]"') from None
        images = [
            Image.open(io.BytesIO(self.render_png(i))).convert("RGB")
            for i in range(len(self.frames))
        ]
        width = max(im.width for im in images)
        height = max(im.height for im in images)
        padded = []
        for im in images:
            canvas = Image.new("RGB", (width, height), "white")
            canvas.paste(im, ((width - im.width) // 2, 0))
            padded.append(canvas.convert("P", palette=Image.Palette.ADAPTIVE, colors=64))
        durations = [duration] * len(padded)
        if last_duration is not None:
            durations[-1] = last_duration
        path = os.fspath(path)
        padded[0].save(
            path, save_all=True, append_images=padded[1:], duration=durations, loop=0, optimize=True
        )
        return path

    def widget(self):
        """A Jupyter widget: a slider over the frames, the picture and its caption."""
        try:
            import ipywidgets as w  # noqa: PLC0415
        except ImportError:
            raise ImportError(
                "stepper.widget() needs ipywidgets: pip install ipywidgets "
                '(or pip install "tinygrad_edu[notebooks]")'
            ) from None
        slider = w.IntSlider(
            value=0, min=0, max=len(self.frames) - 1, description="step", continuous_update=False
        )
        check_dot()

        def png(i):  # the caption is the text above the picture, not written in it again
            return self.draw(i, caption=False).pipe(format="png")

        image = w.Image(value=png(0), format="png")
        text = w.HTML(f"<p>{esc(self.caption(0))}</p>")

        def show(change):
            image.value = png(change["new"])
            text.value = f"<p>{esc(self.caption(change['new']))}</p>"

        slider.observe(show, names="value")
        return w.VBox([slider, text, image])
