"""A row of pictures shown one at a time, with a slider and a play button that need no kernel.

A Jupyter widget (``ipywidgets``) needs a running kernel: on a static page (the docs site, an
HTML export) it is a dead grey box, and a notebook runner executing it can stall waiting for
widget messages. :class:`Frames` instead renders *every* picture once, up front, into one HTML
block: the pictures (SVG or PNG, as ``data:`` URIs), their captions, a range slider and a
play button, driven by a few lines of JavaScript inside the block. Without JavaScript (an
untrusted notebook) the first picture shows. The pictures scale down to the column they sit
in (``max-width: 100%``), so a wide graph never makes the page scroll sideways, and to
:data:`PICTURE_MAX_HEIGHT_PX`, so that the controls, the caption and the picture are seen
together in a 900 px window (see NOTE [A player fits the window]).

* :func:`frames` wraps pictures you already have (``graphviz`` drawings, SVG text, PNG bytes,
  matplotlib figures).
* :func:`slider` draws ``fn(v)`` for each value ``v``: a kernel-free stand-in for
  ``ipywidgets.interact`` over a discrete range.
* :func:`stepper_frames` shows a :class:`~tinygrad_edu.viz.BackwardStepper`'s frames.

>>> f = frames(["<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'/>"] * 2,
...            captions=["first", "second"])
>>> len(f), f.captions[1]
(2, 'second')
>>> html_text = f._repr_html_()
>>> html_text.count('class="tge-frame"'), 'type="range"' in html_text
(2, True)
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import re
from collections.abc import Callable, Iterable, Sequence

__all__ = [
    "Frames", "frames", "slider", "stepper_frames", "picture_uri", "PLAYER_MAX_HEIGHT_PX",
    "PICTURE_MAX_HEIGHT_PX",
]  # fmt: skip

# NOTE [A player fits the window]: a drawing alone may be 900 px tall (NOTE [Pictures fit a
# 900 px column] in .style), but a player puts its controls (a row of ~30 px) and a caption
# (up to three lines of 14 px text) above the picture: at full height the slider scrolls out
# of view while the picture plays. The picture is therefore capped lower, so that the whole
# player stays within PLAYER_MAX_HEIGHT_PX of a 900 px window (tests/viz/test_player.py
# measures the lessons' players in a browser when one is installed).
PLAYER_MAX_HEIGHT_PX = 850
PICTURE_MAX_HEIGHT_PX = 740


def picture_uri(picture) -> str:
    """A ``data:`` URI for one picture.

    Accepted: a ``graphviz`` graph (anything with ``.pipe(format=...)``; drawn as SVG), SVG
    text, PNG bytes, or a matplotlib figure (saved as PNG at 100 dpi).
    """
    if hasattr(picture, "pipe"):
        from .draw import check_dot  # noqa: PLC0415

        check_dot()
        return _uri("image/svg+xml", _compact_svg(picture.pipe(format="svg").decode("utf-8")))
    if isinstance(picture, str):
        if "<svg" not in picture[:2000]:
            raise TypeError("a picture given as text must be SVG (it has no <svg> tag)")
        return _uri("image/svg+xml", _compact_svg(picture))
    if isinstance(picture, (bytes, bytearray)):
        if bytes(picture[:8]) != b"\x89PNG\r\n\x1a\n":
            raise TypeError("a picture given as bytes must be a PNG file's bytes")
        return _uri("image/png", bytes(picture))
    if hasattr(picture, "savefig"):
        buf = io.BytesIO()
        picture.savefig(buf, format="png", dpi=100, bbox_inches="tight")
        return _uri("image/png", buf.getvalue())
    raise TypeError(
        f"cannot show a {type(picture).__name__} as a picture: give a graphviz drawing, SVG "
        "text, PNG bytes or a matplotlib figure"
    )


def _compact_svg(svg: str) -> bytes:
    """Graphviz's SVG without comments, tooltips (``<title>``) and layout whitespace."""
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r"<title>[^<]*</title>", "", svg)
    return re.sub(r">\s+<", "><", svg).strip().encode("utf-8")


def _uri(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


# The player's behaviour. NOTE [One script per player]: the script is written into every
# player's HTML (a notebook output must work on its own, in Jupyter and on a static page) and
# finds its player by id; running it twice for the same player does nothing the second time.
# The docs site starts every player playing (docs/javascripts/player.js calls tgePlay).
_SCRIPT = """
(function (root) {
  if (!root || root.dataset.ready) return;
  root.dataset.ready = "1";
  var figs = root.querySelectorAll(".tge-frame"), range = root.querySelector(".tge-range");
  var count = root.querySelector(".tge-count"), button = root.querySelector(".tge-play");
  var timer = null, n = figs.length;
  function show(i) {
    i = ((i % n) + n) % n;
    for (var k = 0; k < n; k++) figs[k].hidden = (k !== i);
    range.value = i; root.dataset.frame = i;
    count.textContent = root.dataset.label + " " + i + " of " + (n - 1);
  }
  function stop() {
    if (timer) clearInterval(timer);
    timer = null; button.textContent = "\\u25B6 play";
  }
  function play() {
    if (timer || n < 2) return;
    button.textContent = "\\u23F8 pause";
    timer = setInterval(function () { show(+range.value + 1); }, +root.dataset.interval);
  }
  range.addEventListener("input", function () { stop(); show(+range.value); });
  button.addEventListener("click", function () { if (timer) stop(); else play(); });
  root.tgePlay = play; root.tgeStop = stop; root.tgeShow = show;
  root.querySelector(".tge-controls").hidden = false;
  show(+root.dataset.start);
  if (root.dataset.autoplay === "1") play();
})(document.getElementById("__ID__"));
"""

_STYLE = (
    "<style>.tge-player{max-width:100%;margin:.5em 0}"
    # two classes: more specific than a host page's own ``img`` rule (Jupyter's, the site's)
    f".tge-player .tge-frame img{{max-width:100%;max-height:{PICTURE_MAX_HEIGHT_PX}px;"
    "width:auto;height:auto;display:block}"
    ".tge-controls{display:flex;gap:.6em;align-items:center;flex-wrap:wrap;"
    "font:14px sans-serif;margin-bottom:.3em}"
    ".tge-range{flex:1 1 12em;max-width:28em}"
    ".tge-player figcaption{font:14px sans-serif;margin:.2em 0 .4em;color:#1e293b}"
    ".tge-player button{font:14px sans-serif;padding:.1em .6em}</style>"
)


class Frames:
    """Pictures shown one at a time in a notebook or web page (see the module docstring).

    Args:
        uris: one ``data:`` URI per picture (see :func:`picture_uri`).
        captions: one caption per picture (plain text), or None.
        label: what the counter calls a picture ("step 3 of 9").
        interval_ms: time per picture when playing.
        autoplay: start playing as soon as the page shows it.
        start: the picture shown first.
    """

    def __init__(
        self,
        uris: Sequence[str],
        captions: Sequence[str] | None = None,
        label: str = "step",
        interval_ms: int = 1400,
        autoplay: bool = False,
        start: int = 0,
    ):
        if not uris:
            raise ValueError("Frames needs at least one picture")
        if captions is not None and len(captions) != len(uris):
            raise ValueError(f"{len(uris)} pictures but {len(captions)} captions")
        self.uris = list(uris)
        self.captions = list(captions) if captions is not None else [""] * len(self.uris)
        self.label, self.interval_ms, self.autoplay = label, int(interval_ms), bool(autoplay)
        if not 0 <= start < len(self.uris):
            raise ValueError(f"start={start} is not a picture index (0 to {len(self.uris) - 1})")
        self.start = int(start)

    def __len__(self) -> int:
        return len(self.uris)

    def __repr__(self) -> str:
        first, last = self.captions[0] or "0", self.captions[-1] or str(len(self) - 1)
        return f"<Frames: {len(self)} pictures, {first} ... {last}>"

    def _id(self) -> str:
        # deterministic: the same pictures give the same HTML, so re-executed notebooks diff well
        digest = hashlib.sha1("\n".join(self.uris + self.captions).encode("utf-8"))
        return "tge-" + digest.hexdigest()[:12]

    def _repr_html_(self) -> str:
        pid = self._id()
        figures = []
        for i, (uri, caption) in enumerate(zip(self.uris, self.captions)):
            hidden = " hidden" if i != self.start else ""
            alt = html.escape(caption or f"{self.label} {i}", quote=True)
            cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
            figures.append(
                f'<figure class="tge-frame" data-i="{i}"{hidden} style="margin:0">{cap}'
                f'<img src="{uri}" alt="{alt}"></figure>'
            )
        last = len(self) - 1
        controls = (
            '<div class="tge-controls" hidden><button type="button" class="tge-play">'
            f'&#9654; play</button><input type="range" class="tge-range" min="0" max="{last}" '
            f'value="{self.start}" step="1" aria-label="{html.escape(self.label)}">'
            f'<span class="tge-count">{html.escape(self.label)} {self.start} of {last}</span></div>'
        )
        attrs = (
            f'id="{pid}" class="tge-player" data-label="{html.escape(self.label, quote=True)}" '
            f'data-interval="{self.interval_ms}" data-autoplay="{int(self.autoplay)}" '
            f'data-frames="{len(self)}" data-start="{self.start}"'
        )
        script = _SCRIPT.replace("__ID__", pid)
        return f"{_STYLE}<div {attrs}>{controls}{''.join(figures)}</div><script>{script}</script>"


def frames(
    pictures: Iterable,
    captions: Sequence[str] | None = None,
    label: str = "step",
    interval_ms: int = 1400,
    autoplay: bool = False,
    start: int = 0,
) -> Frames:
    """Show pictures one at a time, with a slider and a play button that need no kernel.

    Args:
        pictures: graphviz drawings, SVG text, PNG bytes or matplotlib figures.
        captions: one caption per picture, or None.
        label: what the counter calls a picture.
        interval_ms: time per picture when playing.
        autoplay: start playing at once.
        start: the picture shown first.
    """
    uris = [picture_uri(p) for p in pictures]
    return Frames(uris, captions, label, interval_ms, autoplay, start)


def slider(
    fn: Callable,
    values: Iterable,
    name: str = "value",
    start=None,
    fmt: str = "{:g}",
) -> Frames:
    """Draw ``fn(v)`` for every ``v`` in ``values`` and show them under one slider.

    The kernel-free counterpart of ``ipywidgets.interact(fn, v=FloatSlider(...))``: every
    picture is made once, here, so the slider also works on a static page. Keep ``values``
    short (a dozen or two): each is one drawing.

    Args:
        fn: called with one value, returns a picture (see :func:`picture_uri`).
        values: the slider's positions.
        name: the value's name, for the captions ("p0 = 0.5").
        start: the value shown first (default: the first one). Must be one of ``values``.
        fmt: how a value is written in the captions.
    """
    values = list(values)
    if not values:
        raise ValueError("slider needs at least one value")
    first = 0
    if start is not None:
        if start not in values:
            raise ValueError(f"start={start!r} is not one of the slider's values {values}")
        first = values.index(start)
    pictures = [fn(v) for v in values]
    captions = [f"{name} = {fmt.format(v)}" for v in values]
    # the counter counts positions ("position 3 of 6"); the caption says the value ("c = 0"):
    # a counter named after the value would read as its value ("c 3 of 6" beside "c = 0")
    return frames(pictures, captions, label="position", start=first)


def stepper_frames(stepper, interval_ms: int = 1600, autoplay: bool = False) -> Frames:
    """Every frame of a :class:`~tinygrad_edu.viz.BackwardStepper`, with its caption.

    The caption is shown once, as text above the picture (it wraps to the column and stays
    readable however much the picture is scaled down); the drawings leave it out.
    """
    n = len(stepper)
    return frames(
        [stepper.draw(i, caption=False) for i in range(n)],
        [f"{i}: {stepper.caption(i)}" for i in range(n)],
        label="step",
        interval_ms=interval_ms,
        autoplay=autoplay,
    )
