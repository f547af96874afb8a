"""The docs site: `mkdocs build --strict`, served locally, looked at in headless Chromium.

Chromium is Debian's ``chromium`` package (``apt-get install -y chromium``; ``make test``
installs it). Without it the browser checks are skipped with that reason when the tests
cannot install it themselves (not root); as root a missing browser is a failure.
"""

from __future__ import annotations

import base64
import functools
import html
import http.server
import io
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSON = "lessons/08_static_graphs/"  # a lesson page with graph drawings (inline SVG)
PLOT_LESSON = "lessons/01_derivatives/"  # a lesson page with a matplotlib plot (PNG)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


@pytest.fixture(scope="module")
def server(site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            pass  # the browser may drop a connection it no longer needs

    httpd = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(
        "Chromium is not installed (Debian: sudo apt-get install -y chromium; make test tries "
        "and goes on without it when apt-get fails)"
    )


def _browse(tmp_path, url: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
        # the site works offline: every host but this one fails at once instead of waiting
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        "--virtual-time-budget=5000", *args, url,
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"chromium failed on {url}:\n{proc.stderr[-2000:]}"
    return proc


class _Page:
    """What a rendered page shows: every ``<img>`` src, and the notebook outputs' images and
    ``<svg>`` drawings (an output is a ``jp-RenderedImage`` / ``jp-RenderedSVG`` element)."""

    def __init__(self, dom: str):
        self.images = [m.group(1) for m in re.finditer(r'<img\b[^>]*?\ssrc="([^"]*)"', dom)]
        self.output_images, self.output_svgs, self.svg_fills, self.texts = [], 0, set(), []
        for m in re.finditer(r'<div class="[^"]*jp-Rendered(SVG|Image)\b[^"]*"[^>]*>', dom):
            rest = dom[m.end() :]
            img = re.match(r'\s*<img\b[^>]*?\ssrc="([^"]*)"', rest)
            if img:
                self.output_images.append(img.group(1))
            if m.group(1) != "SVG":
                continue
            # an SVG output is inline, or an <img> with a data: URI (nbconvert's choice); graphviz
            # puts an XML declaration, a doctype and comments before the <svg>
            body = rest
            if img and img.group(1).startswith("data:image/svg+xml;base64,"):
                body = base64.b64decode(img.group(1).split(",", 1)[1]).decode("utf-8")
            svg = re.match(r"(?:\s|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*(<svg\b.*?</svg>)", body,
                           re.S)  # fmt: skip
            if svg:
                self.output_svgs += 1
                body = svg.group(1)
                self.svg_fills |= {f.lower() for f in re.findall(r'fill="(#[0-9a-fA-F]{6})"', body)}
                self.texts += [html.unescape(t) for t in re.findall(r"<text\b[^>]*>([^<]*)</text>",
                                                                    body)]  # fmt: skip


def _dom(tmp_path, url) -> _Page:
    return _Page(_browse(tmp_path, url, "--dump-dom").stdout)


def _fetch(url: str) -> int:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status


def test_site_has_every_page(site):
    for page in ("index.html", "concepts/two-graph-forms/index.html", "concepts/engine/index.html",
                 "concepts/ops/index.html", "lessons/index.html", "gpu/index.html",
                 "api/index.html", f"{LESSON}index.html", f"{PLOT_LESSON}index.html"):  # fmt: skip
        assert (site / page).is_file(), f"{page} missing from the built site"
    for module in ("eager", "symbolic", "ops", "backend"):
        text = (site / "api" / module / "index.html").read_text(encoding="utf-8")
        assert f"tinygrad_edu.{module}" in text and "doc-heading" in text
    # the op page quotes the real derivative rule of `mul`, read from the source at build time
    ops = (site / "concepts/ops/index.html").read_text(encoding="utf-8")
    ops_text = re.sub(r"<[^>]+>", "", ops)
    assert "class Mul" in ops_text and "def vjp" in ops_text and "SOLUTION" not in ops_text
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    for stem in notebooks:
        assert (site / "lessons" / stem / "index.html").is_file(), f"lesson {stem} not in site"


def test_lesson_page_shows_graph_drawings(tmp_path, server):
    page = _dom(tmp_path, server + LESSON)
    assert page.output_svgs >= 1, "no <svg> graph drawing in the lesson's outputs"
    text = " ".join(page.texts)
    assert "dz/dx" in text and "dz/dw" in text, "the drawing lacks the gradient labels"
    assert len(page.svg_fills - {"#ffffff", "#000000", "none"}) >= 3, page.svg_fills
    for src in page.images:
        assert src, "an <img> with an empty src"
        if not src.startswith("data:"):
            assert _fetch(server + LESSON + src if "://" not in src else src) == 200, src


def test_plot_lesson_images_are_real_pngs(tmp_path, server):
    from PIL import Image

    page = _dom(tmp_path, server + PLOT_LESSON)
    pngs = [s for s in page.output_images if s.startswith("data:image/png;base64,")]
    assert pngs, f"no PNG plot in the lesson's outputs (images: {page.output_images[:3]})"
    image = Image.open(io.BytesIO(base64.b64decode(pngs[0].split(",", 1)[1]))).convert("RGB")
    assert image.width > 300 and image.height > 200
    assert len(image.getcolors(maxcolors=1 << 20)) > 50, "the plot is nearly blank"


def test_home_page_images_load(tmp_path, server, site):
    page = _dom(tmp_path, server)
    assert page.images, "the home page has no image"
    for src in page.images:
        assert src and _fetch(server + src if "://" not in src else src) == 200, src


def test_screenshot_shows_the_drawing(tmp_path, server):
    from PIL import Image

    page = _dom(tmp_path / "dom", server + LESSON)
    shot = tmp_path / "lesson.png"
    _browse(tmp_path / "shot", server + LESSON, f"--screenshot={shot}", "--window-size=1280,2000")
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 2000)
    colors = image.getcolors(maxcolors=1 << 20)
    assert len(colors) > 200, f"the screenshot is nearly blank ({len(colors)} colours)"
    # the drawing's own fill colours (read from its SVG) are on screen: it displays
    fills = {tuple(int(f[i : i + 2], 16) for i in (1, 3, 5)) for f in page.svg_fills
             if re.fullmatch(r"#[0-9a-f]{6}", f)} - {(255, 255, 255), (0, 0, 0)}  # fmt: skip
    on_screen = {rgb for count, rgb in colors if count >= 50}
    shown = fills & on_screen
    assert len(shown) >= 2, f"graph colours {sorted(fills)} not on screen"
