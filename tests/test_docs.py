"""The docs site: `mkdocs build --strict`, served locally, looked at in headless Chromium with
the network off.

Chromium is Debian's ``chromium`` package (``apt-get install -y chromium``; ``make test``
installs it where it can). Without it the browser checks are skipped with that reason; the
build and the checks of the built files still run.

The site is built once per test run and shared by the test workers (``.cache/site``, under a
lock, rebuilt when any input changed): the build executes every lesson's student edition.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import functools
import hashlib
import html
import http.server
import importlib.util
import io
import json
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
LESSONS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))
LESSON = "lessons/08_static_graphs/"  # a lesson page with graph drawings
PLOT_LESSON = "lessons/01_derivatives/"  # a lesson page with a matplotlib plot (PNG)
WINDOW = (1440, 1000)  # a laptop screen: the lesson column is about 900 px wide


def _inputs_digest() -> str:
    digest = hashlib.sha256()
    paths = [ROOT / "mkdocs.yml", *sorted((ROOT / "docs").rglob("*")),
             *sorted((ROOT / "notebooks").glob("*.ipynb")),
             *sorted((ROOT / "tinygrad_edu").rglob("*.py"))]  # fmt: skip
    for path in paths:
        if path.is_file():
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="session")
def site() -> Path:
    """The built site: built once (under a lock, so test workers share it) per input state."""
    cache = ROOT / ".cache" / "site"
    cache.mkdir(parents=True, exist_ok=True)
    key = _inputs_digest()
    out = cache / key
    with open(cache / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (out / "index.html").is_file():
                for old in cache.iterdir():
                    if old.is_dir():
                        shutil.rmtree(old, ignore_errors=True)
                env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
                proc = subprocess.run(
                    [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                    cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
                )  # fmt: skip
                if proc.returncode != 0:
                    shutil.rmtree(out, ignore_errors=True)
                assert proc.returncode == 0, (
                    f"mkdocs build --strict failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
                )
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return out


# A script the test server adds to every page it serves (the site itself has no such thing):
# once the page has loaded and run for a while, it writes what it found into the page.
_PROBE = """<script>
window.addEventListener("load", function () {
  var players = Array.from(document.querySelectorAll(".tge-player"));
  var first = players.map(function (p) { return p.dataset.frame; });
  setTimeout(function () {
    var r = {}, col = document.querySelector(".md-content__inner") || document.body;
    var imgs = Array.from(document.images);
    r.images = imgs.length;
    r.broken = imgs.filter(function (im) { return !(im.complete && im.naturalWidth > 0); })
      .map(function (im) { return im.src.slice(0, 80); });
    r.column = col.clientWidth;
    r.columnOverflow = col.scrollWidth - col.clientWidth;
    r.pageOverflow = document.documentElement.scrollWidth - window.innerWidth;
    var right = col.getBoundingClientRect().right + 1, wide = [];
    col.querySelectorAll(".jp-OutputArea-output, .jp-RenderedSVG svg, img, .tge-player")
      .forEach(function (el) {
        var b = el.getBoundingClientRect();
        if (b.width > 0 && b.right > right) wide.push(el.className.baseVal || el.className ||
                                                      el.tagName);
      });
    r.wide = wide.slice(0, 5);
    var raw = [], walker = document.createTreeWalker(col, NodeFilter.SHOW_TEXT);
    var skip = "CODE,PRE,SCRIPT,STYLE,TEXTAREA";
    while (walker.nextNode()) {
      var n = walker.currentNode, p = n.parentElement, skipped = false;
      for (var e = p; e && e !== col; e = e.parentElement) {
        if (skip.indexOf(e.tagName) >= 0 || getComputedStyle(e).display === "none" ||
            (e.classList && e.classList.contains("katex"))) {
          skipped = true; break;
        }
      }
      if (!skipped && /\\\\[a-zA-Z]{2,}|\\$[^$\\s][^$]*\\$|\\\\\\(|\\\\\\[/.test(n.textContent))
        raw.push(n.textContent.trim().slice(0, 60));
    }
    r.rawTex = raw.slice(0, 5);
    r.katex = document.querySelectorAll(".katex").length;
    r.katexErrors = document.querySelectorAll(".katex-error").length;
    r.players = players.map(function (p, i) {
      return {frames: +p.dataset.frames, first: first[i], now: p.dataset.frame,
              playing: p.querySelector(".tge-play").textContent.indexOf("pause") >= 0};
    });
    r.external = performance.getEntriesByType("resource").map(function (e) { return e.name; })
      .filter(function (u) { return u.indexOf(location.origin) && u.indexOf("data:"); });
    var out = document.createElement("pre");
    out.id = "tge-probe";
    out.textContent = JSON.stringify(r);
    document.body.appendChild(out);
  }, 6000);
});
</script>"""


@contextlib.contextmanager
def _serve(directory):
    """Serve ``directory`` on 127.0.0.1 (pages with the probe added before ``</body>``)."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def send_head(self):  # serve pages with the probe added before </body>
            path = self.translate_path(self.path)
            if os.path.isdir(path):
                path = os.path.join(path, "index.html")
            if not path.endswith(".html") or not os.path.isfile(path):
                return super().send_head()
            body = Path(path).read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>")
            data = body.encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            return io.BytesIO(data)

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            pass  # the browser may drop a connection it no longer needs

    httpd = Server(("127.0.0.1", 0), functools.partial(Handler, directory=str(directory)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="session")
def server(site):
    with _serve(site) as url:
        yield url


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(
        "Chromium is not installed (Debian: sudo apt-get install -y chromium; make test tries "
        "and goes on without it when apt-get fails)"
    )


def _browse(tmp_path, url: str, *args: str, window=WINDOW) -> subprocess.CompletedProcess:
    cmd = [
        _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
        # the network is off: every host but this one fails at once instead of waiting
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        f"--window-size={window[0]},{window[1]}", "--virtual-time-budget=10000", *args, url,
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"chromium failed on {url}:\n{proc.stderr[-2000:]}"
    return proc


def _probe(tmp_path, url) -> dict:
    dom = _browse(tmp_path, url, "--dump-dom").stdout
    found = re.search(r'<pre id="tge-probe">(.*?)</pre>', dom, re.S)
    assert found, f"the page never finished loading: {url}"
    return json.loads(html.unescape(found.group(1)))


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


# -- the built files --------------------------------------------------------------------------
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
    assert "class Div" in ops_text and "def vjp" in ops_text and "SOLUTION" not in ops_text
    for stem in LESSONS:
        assert (site / "lessons" / stem / "index.html").is_file(), f"lesson {stem} not in site"


def test_site_loads_nothing_from_another_host(site):
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        loads = re.findall(r'<(?:script|img|iframe)\b[^>]*\ssrc="(https?:)?//', text)
        loads += re.findall(r'<link\b[^>]*\shref="(https?:)?//[^"]*"[^>]*stylesheet', text)
        assert not loads, f"{page.relative_to(site)} loads from another host"
    for css in site.rglob("*.css"):
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", css.read_text(encoding="utf-8")), css
    katex = site / "javascripts/vendor/katex"
    assert (katex / "katex.min.js").is_file() and list((katex / "fonts").glob("*.woff2"))


@pytest.mark.parametrize("stem", LESSONS)
def test_published_lessons_are_the_student_edition(site, stem):
    from tinygrad_course.lessons import Exercise, lesson_modules

    page = (site / "lessons" / stem / "index.html").read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", page)))
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    module = next(m for m in lesson_modules() if m.__name__.endswith(f"lesson{stem[:2]}"))
    # a part of a lesson in parts (09a_programs) holds the exercises whose check it runs
    source = (ROOT / "notebooks" / f"{stem}.py").read_text(encoding="utf-8")
    attrs = {ex: attr for attr, ex in vars(module).items() if isinstance(ex, Exercise)}
    own = [ex for ex in module.EXERCISES
           if stem[2] == "_" or f"ex.{attrs[ex]}.check(" in source]  # fmt: skip
    assert "raise NotImplementedError" in text or not own  # where the solutions were
    for ex in own:
        assert f"NOT SOLVED YET {ex.name}" in text, f"{ex.name} on the published page"
    assert "Traceback (most recent call last)" not in text
    # with its pictures: every lesson but the GPU one draws something
    if stem != "07_gpu":
        assert "<svg" in page or "data:image/" in page, f"{stem} has no picture"


def test_search_index_is_clean(site):
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    lessons = [d for d in index["docs"] if d["location"].startswith("lessons/0")]
    assert lessons
    text = " ".join(d["text"] for d in lessons)
    assert "Copied!" not in text and not re.search(r"In \[\d+\]:", text)
    assert "BEGIN SOLUTION" not in text


def _solution_snippets() -> dict[str, str]:
    from tinygrad_course.lessons.notebooks import solution_snippets

    return solution_snippets(sorted(ROOT.glob("tinygrad_edu/**/*.py")) +
                          sorted(ROOT.glob("notebooks/[0-9]*.py")))  # fmt: skip


def _page_text(raw: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", raw)))


def _leaks(site: Path) -> list[str]:
    """Solution snippets found in any text file of a built site or its search index."""
    lines = _solution_snippets()
    assert len(lines) > 100
    # PyTorch's training-step idiom, taught in lessons 6 and 11 before 13.2 asks for it
    lines.pop("loss.backward() opt.step()", None)
    texts = {}
    for path in site.rglob("*"):
        if path.suffix in (".html", ".json", ".js", ".txt", ".xml", ".ipynb", ".md"):
            raw = path.read_text(encoding="utf-8", errors="replace")
            texts[str(path.relative_to(site))] = _page_text(raw) + " " + re.sub(r"\s+", " ", raw)
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    texts["search index"] = _page_text(" ".join(d["text"] for d in index["docs"]))
    return [f"{where}: {line!r} (from {origin})" for line, origin in lines.items()
            for where, text in texts.items() if line in text]  # fmt: skip


def test_no_solution_line_anywhere_in_the_site(site):
    """No line of a graded or lesson solution is on any page, in any file of the site or in
    its search index (the op page once quoted A1.3's `Mul.vjp`)."""
    found = _leaks(site)
    assert not found, "\n".join(found[:20])


@pytest.mark.slow
def test_the_student_editions_own_site_builds(tmp_path):
    """`mkdocs build` in the student edition (whose library cannot run the lessons) works:
    its lesson pages show the outputs recorded when the edition was made, and no solution."""
    from tinygrad_course.grading.student import make_student_edition
    from tinygrad_course.lessons.recorded import record_lessons

    edition = tmp_path / "course-student"
    make_student_edition(ROOT, edition, record=record_lessons)
    out = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=str(edition))
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=edition, env=env, capture_output=True, text=True,
                          timeout=900)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # no page for instructors (the guide once told students what the autograder accepts)
    assert not (out / "instructors").exists() and not (out / "api" / "grading").exists()
    home = (out / "index.html").read_text(encoding="utf-8")
    assert "Instructor guide" not in home and "instructors/" not in home
    how = _page_text((out / "lessons" / "index.html").read_text(encoding="utf-8"))
    assert "How the lessons work" in how and "For instructors" not in how
    page = (out / "lessons" / "05_backward_engine" / "index.html").read_text(encoding="utf-8")
    text = _page_text(page)
    assert "NOT SOLVED YET" in text and "Traceback" not in text
    assert "<svg" in page or "data:image/" in page  # the recorded pictures
    found = _leaks(out)
    assert not found, "\n".join(found[:20])


@pytest.mark.parametrize("stem", LESSONS)
def test_every_link_inside_a_lesson_page_has_its_target(site, stem):
    """A table-of-contents entry for a heading holding code ("5. `retain_graph`") once
    pointed at an id without the code's words (``#5``)."""
    page = (site / "lessons" / stem / "index.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    broken = sorted({a for a in re.findall(r'href="#([^"]*)"', page) if a and a not in ids})
    assert not broken, f"{stem}: links to missing ids {broken}"


def test_lesson_pages_link_to_the_previous_and_next(site):
    page = (site / "lessons" / "03_ops_as_nodes" / "index.html").read_text(encoding="utf-8")
    nav = re.search(r'<nav class="md-footer__inner[^"]*"[^>]*>(.*?)</nav>', page, re.S)
    assert nav, "no previous/next links"
    assert "../02_tensors_as_nodes/" in nav.group(1) and "../04_two_forms/" in nav.group(1)


@pytest.mark.parametrize(("stem", "pictures"), [
    ("12_pytorch_graphs", ["PyTorch: its grad_fn graph", "NllLossBackward", "SumBackward"]),
    ("13_coming_from_pytorch", ["PyTorch: its grad_fn graph", "CopySlices"]),
    ("07_gpu", ["ToCopyBackward0", "grad sim:0 → cpu", "on sim:0"]),
])  # fmt: skip
def test_lesson_pages_show_their_pytorch_and_device_pictures(site, stem, pictures):
    """The docs build runs the lessons with PyTorch installed (``make docs``: EXTRAS include
    ``compare``), so lessons 12 and 13 are published with PyTorch's graphs drawn, not with
    'PyTorch is not installed'; lesson 7 with its drawing of devices."""
    page = (site / "lessons" / stem / "index.html").read_text(encoding="utf-8")
    assert "PyTorch is not installed" not in html.unescape(page)
    svgs = [html.unescape(base64.b64decode(b).decode("utf-8")) for b in
            re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", page)]  # fmt: skip
    for words in pictures:
        assert any(words in svg for svg in svgs), f"{stem}: no picture showing {words!r}"


def test_make_docs_installs_pytorch():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    extras = re.search(r"^EXTRAS \?= (.*)$", make, re.M).group(1).split(",")
    assert "compare" in extras and re.search(r"^docs: venv", make, re.M)


# -- in the browser, offline ------------------------------------------------------------------
@pytest.mark.parametrize("stem", LESSONS)
def test_lesson_page_in_the_browser(tmp_path, server, stem):
    """No raw TeX, every picture loads, nothing wider than the lesson column, nothing fetched
    from another host, and the players (the stepper, the sliders) animate."""
    r = _probe(tmp_path, f"{server}lessons/{stem}/")
    assert r["external"] == [], f"loaded from another host: {r['external']}"
    assert r["images"] > 0, "no picture"
    assert r["broken"] == [], f"pictures that did not load: {r['broken']}"
    assert r["rawTex"] == [] and r["katexErrors"] == 0, f"raw TeX: {r['rawTex']}"
    assert r["katex"] > 0 or stem == "00_setup", "no maths typeset"
    assert r["column"] >= 850, f"the lesson column is only {r['column']} px wide"
    assert r["pageOverflow"] <= 0 and r["columnOverflow"] <= 1, r
    assert r["wide"] == [], f"wider than the lesson column: {r['wide']}"
    for player in r["players"]:
        assert player["playing"] and player["now"] != player["first"], f"still: {player}"
    if stem in ("03_ops_as_nodes", "05_backward_engine", "02_tensors_as_nodes"):
        assert r["players"], f"{stem} has no stepper or slider"


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
    with contextlib.suppress(FileNotFoundError):
        shot.unlink()
    _browse(tmp_path / "shot", server + LESSON, f"--screenshot={shot}", window=(1280, 2000))
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 2000)
    colors = image.getcolors(maxcolors=1 << 20)
    assert len(colors) > 200, f"the screenshot is nearly blank ({len(colors)} colours)"
    fills = {tuple(int(f[i : i + 2], 16) for i in (1, 3, 5)) for f in page.svg_fills
             if re.fullmatch(r"#[0-9a-f]{6}", f)} - {(255, 255, 255), (0, 0, 0)}  # fmt: skip
    on_screen = {rgb for count, rgb in colors if count >= 50}
    shown = fills & on_screen
    assert len(shown) >= 2, f"graph colours {sorted(fills)} not on screen"


# -- standalone HTML of a lesson (docs/lesson_html.py, make lessons-html) --------------------
HTML_LESSONS = ("01_derivatives", "03_ops_as_nodes")  # maths and a plot; maths and a stepper


def _lesson_html():
    spec = importlib.util.spec_from_file_location("lesson_html", ROOT / "docs" / "lesson_html.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lesson_pages(tmp_path_factory) -> Path:
    """The exported student editions of ``HTML_LESSONS`` (as ``make lessons-html`` writes them)."""
    import nbconvert  # noqa: F401  (installed by make test)
    out = tmp_path_factory.mktemp("lessons-html")
    for stem in HTML_LESSONS:
        _lesson_html().export_html(ROOT / "notebooks" / f"{stem}.ipynb", out)
    return out


@pytest.mark.parametrize("stem", HTML_LESSONS)
def test_exported_lesson_html_refers_to_nothing_outside(lesson_pages, stem):
    """No script, stylesheet or font from a CDN or any other file: KaTeX is inside the page."""
    text = (lesson_pages / f"{stem}.html").read_text(encoding="utf-8")
    assert not re.findall(r"<script\b[^>]*\ssrc=", text), "a <script src=...>"
    assert not re.findall(r"<link\b[^>]*stylesheet", text), "a <link rel=stylesheet>"
    assert not re.findall(r"@import", text), "an @import"
    urls = re.findall(r"url\(\s*['\"]?([^)'\"]*)", text)
    assert urls and all(u.startswith(("data:", "#")) for u in urls), \
        [u for u in urls if not u.startswith(("data:", "#"))][:5]  # fmt: skip
    assert "mathjax" not in text.lower() and "require.min.js" not in text
    assert "renderMathInElement" in text and "font-family:KaTeX_Main" in text
    fonts = list(_lesson_html().KATEX.glob("fonts/*.woff2"))
    assert fonts and text.count("url(data:font/woff2;base64,") == len(fonts)  # all inlined
    assert "BEGIN SOLUTION" not in text and "NotImplementedError" in text  # the student edition
    assert "$" in text and ("\\frac" in text or "\\partial" in text)  # maths for KaTeX


def test_exported_lesson_html_without_the_katex_fonts_is_refused(monkeypatch, tmp_path):
    module = _lesson_html()
    css = (module.KATEX / "katex.min.css").read_text(encoding="utf-8")
    assert "url(fonts/" not in module._inline_fonts(css)
    with pytest.raises(RuntimeError, match="font reference"):
        module._inline_fonts(css + '@font-face{src:url(fonts/KaTeX_New.otf) format("opentype")}')
    monkeypatch.setattr(module, "KATEX", tmp_path)
    with pytest.raises(FileNotFoundError, match="vendor_katex.py"):
        module.katex_head()


@pytest.mark.parametrize("stem", HTML_LESSONS)
def test_exported_lesson_html_in_the_browser(tmp_path, lesson_pages, stem):
    """Offline in Chromium: the maths typeset by KaTeX, no raw TeX, every picture loads,
    nothing fetched, the players animate."""
    with _serve(lesson_pages) as url:
        r = _probe(tmp_path, f"{url}{stem}.html")
    assert r["external"] == [], f"loaded from another host: {r['external']}"
    assert r["images"] > 0 and r["broken"] == [], r["broken"]
    assert r["katex"] > 0 and r["katexErrors"] == 0, r
    assert r["rawTex"] == [], f"raw TeX: {r['rawTex']}"
    for player in r["players"]:
        assert player["playing"] and player["now"] != player["first"], f"still: {player}"
    if stem == "03_ops_as_nodes":
        assert r["players"], "the stepper is missing"
