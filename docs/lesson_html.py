"""Export lessons as standalone HTML files that work offline: ``make lessons-html``, or
``python docs/lesson_html.py [--reference] [-o DIR] [NOTEBOOK ...]``.

``jupyter nbconvert --to html`` writes pages that load MathJax, require.js and mermaid from a
CDN: offline, their maths stays raw ``$...$``. This exporter uses nbconvert's ``lab``
template with those three replaced by the KaTeX the docs site vendors
(``docs/javascripts/vendor/katex``, see ``docs/vendor_katex.py``), **inlined** into the page —
its stylesheet with every font as a ``data:`` URI, its script, the auto-render extension and
the site's own ``katex-init.js`` (the same delimiters as the site) and ``player.js`` (the
picture players start by themselves). One ``.html`` file per lesson, nothing to fetch.

By default a lesson is exported as the site publishes it: the **student edition** (solutions
stripped, executed against this library; cached in ``.cache/lessons`` with the docs build).
``--reference`` exports the notebooks as they are, outputs and solutions included. Without
notebook arguments, every lesson in ``notebooks/`` is exported; the files go to
``build/lessons-html`` unless ``-o`` says otherwise.
"""

from __future__ import annotations

import argparse
import base64
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "docs" / "javascripts"
KATEX = JS / "vendor" / "katex"
TEMPLATE = ROOT / "docs" / "nbconvert"
OUT = ROOT / "build" / "lessons-html"

__all__ = ["katex_head", "export_html", "main"]


def _inline_fonts(css: str) -> str:
    """KaTeX's stylesheet with each ``.woff2`` font inlined as a ``data:`` URI and the other
    formats (``.woff``, ``.ttf``, not vendored: every current browser reads ``woff2``) dropped,
    so the stylesheet refers to no file at all."""

    def woff2(match: re.Match) -> str:
        data = base64.b64encode((KATEX / "fonts" / match.group(1)).read_bytes()).decode()
        return f'url(data:font/woff2;base64,{data}) format("woff2")'

    css = re.sub(r"url\(fonts/([\w-]+\.woff2)\) format\(\"woff2\"\)", woff2, css)
    # NOTE: drop the fallbacks: ",url(fonts/X.woff) format("woff")" and the .ttf one
    css = re.sub(r',\s*url\(fonts/[\w-]+\.(?:woff|ttf)\) format\("(?:woff|truetype)"\)', "", css)
    if "url(fonts/" in css:
        raise RuntimeError("lesson_html: a KaTeX font reference was left in the stylesheet; "
                           "re-vendor KaTeX with docs/vendor_katex.py")  # fmt: skip
    return css


def _script(text: str) -> str:
    # NOTE: "</script" inside a script would end it early; KaTeX's code holds none today
    return "<script>\n" + text.replace("</script", "<\\/script") + "\n</script>"


def katex_head() -> str:
    """The ``<head>`` fragment that typesets a page's maths offline: KaTeX inlined."""
    if not (KATEX / "katex.min.js").is_file():
        raise FileNotFoundError(f"lesson_html: KaTeX is not vendored in {KATEX}; run "
                                "python docs/vendor_katex.py")  # fmt: skip
    css = _inline_fonts((KATEX / "katex.min.css").read_text(encoding="utf-8"))
    parts = [f"<style>\n{css}\n</style>"]
    for path in (KATEX / "katex.min.js", KATEX / "contrib" / "auto-render.min.js",
                 JS / "katex-init.js", JS / "player.js"):  # fmt: skip
        parts.append(_script(path.read_text(encoding="utf-8")))
    return "\n".join(parts)


def export_html(notebook, out_dir=OUT, student: bool = True) -> Path:
    """Write ``out_dir/<lesson>.html``, a standalone page of ``notebook`` that loads nothing
    from the network, and return its path.

    Args:
        notebook: a lesson ``.ipynb``.
        out_dir: where the page goes (created when missing).
        student: export the executed student edition (as the site does), not the notebook as
            it is.
    """
    import nbformat  # noqa: PLC0415
    from nbconvert import HTMLExporter  # noqa: PLC0415

    notebook, out_dir = Path(notebook), Path(out_dir)
    source = notebook
    if student:
        sys.path.insert(0, str(ROOT))  # the library the lessons teach, from this checkout
        from tinygrad_course.lessons.notebooks import executed_student_edition  # noqa: PLC0415

        source = executed_student_edition(notebook, ROOT / ".cache" / "lessons")
    nb = nbformat.read(source, as_version=4)
    nb.metadata.pop("widgets", None)  # saved widget state would load a renderer from a CDN
    exporter = HTMLExporter(template_name="offline", extra_template_basedirs=[str(TEMPLATE)])
    body, _ = exporter.from_notebook_node(
        nb, resources={"metadata": {"name": notebook.stem}, "tge_katex_head": katex_head()}
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{notebook.stem}.html"
    out.write_text(body, encoding="utf-8")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="lessons (default: all)")
    parser.add_argument("-o", "--out", type=Path, default=OUT, help=f"default: {OUT}")
    parser.add_argument("--reference", action="store_true",
                        help="export the notebooks as they are (with their solutions)")  # fmt: skip
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    for notebook in notebooks:
        print(export_html(notebook, args.out, student=not args.reference))
    return 0


if __name__ == "__main__":
    sys.exit(main())
