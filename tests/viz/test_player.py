"""viz.frames / viz.slider / viz.stepper_frames: pictures under a slider that needs no kernel."""

import base64
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tinygrad_edu import viz
from tinygrad_edu.symbolic import Variable, gradients

from .conftest import needs_dot

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)),
               None)  # fmt: skip

SVG = "<svg xmlns='http://www.w3.org/2000/svg' width='4' height='4'><!-- c --></svg>"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


def _figures(html_text):
    return re.findall(r'<figure class="tge-frame" data-i="(\d+)"( hidden)?', html_text)


def test_frames_html_shows_the_start_frame_and_hides_the_rest():
    f = viz.frames([SVG, PNG, SVG], captions=["a", "b <c>", "d"], start=1)
    text = f._repr_html_()
    assert [(i, bool(h)) for i, h in _figures(text)] == [("0", True), ("1", False), ("2", True)]
    assert text.count("data:image/svg+xml;base64,") == 2 and "data:image/png;base64," in text
    assert "b &lt;c&gt;" in text and 'max="2"' in text and 'value="1"' in text
    assert "__ID__" not in text and f._id() in text.split("<script>")[1]
    assert f._repr_html_() == text, "the same pictures give the same HTML"
    assert repr(f) == "<Frames: 3 pictures, a ... d>"
    # comments are dropped from SVG pictures
    assert b"<!--" not in base64.b64decode(f.uris[0].split(",", 1)[1])


def test_frames_refuses_what_it_cannot_show():
    with pytest.raises(TypeError, match="must be SVG"):
        viz.frames(["not a picture"])
    with pytest.raises(TypeError, match="PNG file"):
        viz.frames([b"GIF89a"])
    with pytest.raises(TypeError, match="cannot show a int"):
        viz.frames([3])
    with pytest.raises(ValueError, match="at least one"):
        viz.frames([])
    with pytest.raises(ValueError, match="2 pictures but 1 captions"):
        viz.frames([SVG, SVG], captions=["x"])
    with pytest.raises(ValueError, match="not a picture index"):
        viz.frames([SVG], start=1)


def test_matplotlib_figure_becomes_a_png():
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [1, 0])
    uri = viz.player.picture_uri(fig)
    plt.close(fig)
    assert uri.startswith("data:image/png;base64,")
    assert base64.b64decode(uri.split(",", 1)[1])[:4] == b"\x89PNG"


@needs_dot
def test_slider_draws_every_value_once():
    x = Variable("x")
    seen = []

    def draw(v):
        seen.append(v)
        return viz.draw(x * v, legend=False)

    f = viz.slider(draw, [0.5, 1.0, 2.0], name="c", start=1.0)
    assert seen == [0.5, 1.0, 2.0] and f.start == 1
    assert f.captions == ["c = 0.5", "c = 1", "c = 2"] and f.label == "position"
    assert "position 1 of 2</span>" in f._repr_html_()  # not "c 1 of 2" beside "c = 1"
    with pytest.raises(ValueError, match="not one of the slider's values"):
        viz.slider(draw, [1.0], start=3.0)


@needs_dot
def test_stepper_frames_match_the_stepper(seed_eager):
    E, leaves = seed_eager
    stepper = viz.BackwardStepper.record(E.sum(), names=leaves)
    f = viz.stepper_frames(stepper)
    assert len(f) == len(stepper) >= 3
    assert f.captions[0].startswith("0: ") and f.captions[-1].startswith(f"{len(f) - 1}: ")
    assert len(_figures(f._repr_html_())) == len(stepper)


@needs_dot
def test_symbolic_feed_pictures():
    p = Variable("p")
    (g,) = gradients((p * p).sum(), [p])
    f = viz.slider(lambda v: viz.draw([g], feed={p: np.array(v)}, legend=False), [1.0, 2.0])
    svg = base64.b64decode(f.uris[1].split(",", 1)[1]).decode()
    assert svg.startswith("<?xml") or svg.startswith("<svg") or "<svg" in svg[:300]
    assert "4" in svg  # the gradient 2p at p = 2 is written in a box


@needs_dot
def test_a_stepper_player_shows_each_caption_once(seed_eager):
    E, leaves = seed_eager
    stepper = viz.BackwardStepper.record(E.sum(), names=leaves)
    f = viz.stepper_frames(stepper)
    for i in range(len(stepper)):
        svg = base64.b64decode(f.uris[i].split(",", 1)[1]).decode()
        words = html.escape(stepper.caption(i)[:40])  # the caption's opening words
        assert words not in svg, f"frame {i}'s caption is written in the picture as well"
        assert f"step {i} of {len(stepper) - 1}" in svg  # the picture still says its step
        assert html.escape(stepper.caption(i)) in f._repr_html_()  # ... and the text, once
    assert html.escape(stepper.caption(1)[:40]) in stepper.draw(1).source  # alone: captioned


def _lesson_players():
    """The HTML of every player the executed lessons show, with its lesson's name."""
    found = []
    for path in sorted(NOTEBOOKS.glob("[0-9]*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for out in cell.get("outputs", []):
                text = "".join(out.get("data", {}).get("text/html", ""))
                if 'class="tge-player"' in text:
                    found.append((path.stem, text))
    return found


def test_every_lesson_player_caps_its_pictures():
    players = _lesson_players()
    assert len(players) >= 5, [name for name, _ in players]
    rule = f"max-height:{viz.player.PICTURE_MAX_HEIGHT_PX}px"
    for name, text in players:
        assert rule in text, f"{name}: a player saved before pictures were capped; re-execute it"
    # the cap leaves room for the controls (one row) and a caption of three lines of 14 px text
    assert viz.player.PICTURE_MAX_HEIGHT_PX + 36 + 3 * 20 <= viz.player.PLAYER_MAX_HEIGHT_PX


# A page of one 900 px column holding the players; the script shows every frame of each and
# writes the tallest and widest box it took (the whole player: controls, caption, picture).
_PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>body{margin:0;width:900px}
</style></head><body>%s<pre id="sizes"></pre><script>
var sizes = [];
document.querySelectorAll(".tge-player").forEach(function (p) {
  var h = 0, w = 0;
  for (var i = 0; i < +p.dataset.frames; i++) {
    p.tgeShow(i);
    var box = p.getBoundingClientRect(), img = p.querySelectorAll("img")[i].getBoundingClientRect();
    h = Math.max(h, box.height); w = Math.max(w, box.width, img.width);
  }
  sizes.push([Math.round(w), Math.round(h)]);
});
document.getElementById("sizes").textContent = "SIZES" + JSON.stringify(sizes) + "END";
</script></body></html>"""


@pytest.mark.skipif(BROWSER is None, reason="no headless Chromium to measure the players in")
def test_every_lesson_player_fits_a_900_px_window(tmp_path):
    players = _lesson_players()
    page = tmp_path / "players.html"
    page.write_text(_PAGE % "".join(text for _, text in players), encoding="utf-8")
    run = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=900,900",
         "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    sizes = json.loads(re.search(r"SIZES(.*?)END", run.stdout).group(1))
    assert len(sizes) == len(players)
    limit = viz.player.PLAYER_MAX_HEIGHT_PX
    too_big = [(name, w, h) for (name, _), (w, h) in zip(players, sizes) if w > 900 or h > limit]
    assert not too_big, f"players taller than {limit} px or wider than 900 px: {too_big}"
