"""MkDocs hooks: put the lessons and the API reference pages into the site.

* Every lesson ``notebooks/NN_name.ipynb`` is published from its **student edition**: the
  solutions stripped (as ``tinygrad-edu make-student`` does), then executed against this
  library (``tinygrad_course.lessons.notebooks.executed_student_edition``, kept in
  ``.cache/lessons`` until the lesson or the library changes), so the page has every output
  and picture and no answer. The executed edition becomes ``lessons/<name>.ipynb`` in the
  site's file list and mkdocs-jupyter renders it; a page that still shows a solution marker
  stops the build.
* On lesson pages, the copy buttons and the hidden copy of each cell's source are left out of
  the search index, so a search hit shows the lesson's words.
* Every subpackage of ``tinygrad_edu`` listed in ``API_MODULES`` that exists gets a generated
  page ``api/<name>.md`` holding one mkdocstrings directive (``::: tinygrad_edu.<name>``).
* ``<!-- op-source: FILE CLASS -->`` in a page becomes the source of that class, read from
  the file when the site is built and stripped as the student edition is (a graded
  solution in it shows as its ``raise NotImplementedError`` stub).
* In a student edition (``notebooks/.recorded`` exists) lesson pages show the outputs
  recorded when the edition was made.
* The nav entries ``Lessons`` and ``API reference`` are filled with those pages (after any
  pages listed in ``mkdocs.yml`` itself), in file-name order.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from mkdocs.plugins import CombinedEvent, event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LESSON_CACHE = ROOT / ".cache" / "lessons"
PACKAGE = ROOT / "tinygrad_edu"
API_MODULES = (
    "eager", "symbolic", "ops", "backend", "nn", "optim", "data", "viz", "compiler",
)  # fmt: skip
# the course's packages (beside the library, in tinygrad_course/), after the library's; the
# grading kit's is for instructors, so a student edition's site (lessons recorded) leaves it out
COURSE_MODULES = ("grading", "lessons")
INSTRUCTOR_MODULES = ("grading",)


def _notebooks() -> list[Path]:
    return sorted(p for p in NOTEBOOKS.glob("*.ipynb") if not p.name.startswith("_"))


_published: dict[str, Path] = {}


def _published_lesson(path: Path) -> Path:
    """The executed student edition of a lesson (made once per build, cached across builds).

    In a student edition (``notebooks/.recorded`` exists; its library's graded functions are
    stubs, so the lessons cannot run) the page shows the outputs recorded when the edition
    was made."""
    if path.name not in _published:
        import json  # noqa: PLC0415
        import sys  # noqa: PLC0415

        sys.path.insert(0, str(ROOT))  # the library the lessons teach, from this checkout
        from tinygrad_course.lessons import recorded  # noqa: PLC0415
        from tinygrad_course.lessons.notebooks import executed_student_edition  # noqa: PLC0415

        recordings = NOTEBOOKS / recorded.RECORDED_DIR
        if recordings.is_dir():
            nb = recorded.recorded_notebook(path, recorded.load_recordings(recordings))
            out = LESSON_CACHE / f"{path.stem}-recorded.ipynb"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", "utf-8")
            _published[path.name] = out
        else:
            _published[path.name] = executed_student_edition(path, LESSON_CACHE)
    return _published[path.name]


def _api_modules() -> list[str]:
    """``tinygrad_edu`` itself, then each listed module that exists as a package or file, then
    the course's."""
    found = [
        f"tinygrad_edu.{name}"
        for name in API_MODULES
        if (PACKAGE / name / "__init__.py").is_file() or (PACKAGE / f"{name}.py").is_file()
    ]
    edition = (NOTEBOOKS / ".recorded").is_dir()
    course = [f"tinygrad_course.{name}" for name in COURSE_MODULES
              if (ROOT / "tinygrad_course" / name / "__init__.py").is_file()
              and not (edition and name in INSTRUCTOR_MODULES)]  # fmt: skip
    return ["tinygrad_edu", *found, *course]


def _api_page(module: str) -> str:
    return f"api/{module.removeprefix('tinygrad_edu.') if '.' in module else 'index'}.md"


def _fill(nav, title: str, pages: list) -> None:
    for item in nav:
        if isinstance(item, dict) and title in item:
            listed = item[title] if isinstance(item[title], list) else [item[title]]
            item[title] = listed + [p for p in pages if p not in listed]


def on_config(config):
    _fill(config["nav"], "Lessons", [f"lessons/{p.name}" for p in _notebooks()])
    _fill(config["nav"], "API reference", [
        {("tinygrad_edu" if m == "tinygrad_edu" else m.removeprefix("tinygrad_edu.")): _api_page(m)}
        for m in _api_modules()
    ])  # fmt: skip
    return config


@event_priority(100)  # before mkdocs-jupyter's on_files, which picks the notebooks up
def _add_files(files, config):
    for path in _notebooks():
        source = _published_lesson(path)
        files.append(File.generated(config, f"lessons/{path.name}", abs_src_path=str(source)))
    for module in _api_modules():
        title = "The top-level API" if module == "tinygrad_edu" else f"`{module}`"
        content = f"# {title}\n\n::: {module}\n"
        files.append(File.generated(config, _api_page(module), content=content))
    return files


@event_priority(-100)  # after mkdocs-jupyter wrapped the notebooks
def _after_jupyter(files, config):
    # The wrapper recomputes abs_src_path from src_dir, which a generated file lacks: give
    # each lesson page its published notebook's path again.
    for path in _notebooks():
        file = files.get_file_from_path(f"lessons/{path.name}")
        if file is not None:
            file.__dict__["abs_src_path"] = str(_published_lesson(path))
    return files


on_files = CombinedEvent(_add_files, _after_jupyter)

_OP_SOURCE = re.compile(r"<!-- op-source: (\S+) (\w+) -->")


def _class_source(match) -> str:
    import sys  # noqa: PLC0415

    sys.path.insert(0, str(ROOT))
    from tinygrad_course.grading.student import strip_solutions  # noqa: PLC0415

    path, name = ROOT / match.group(1), match.group(2)
    # the student edition's text: a graded solution inside the class becomes its stub, as
    # `tinygrad-edu make-student` writes it (the site is for students)
    text = strip_solutions(path.read_text(encoding="utf-8"), str(path), check=False)
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            lines = text.splitlines()[start - 1 : node.end_lineno]
            return "```python\n" + "\n".join(lines) + "\n```"
    raise ValueError(f"op-source: no class {name} in {match.group(1)}")


def on_page_markdown(markdown, page, config, files):
    return _OP_SOURCE.sub(_class_source, markdown)


_SEARCH_NOISE = re.compile(r'<div class="(zeroclipboard-container|clipboard-copy-txt)"')
_MARKER = re.compile(r"#\s*(BEGIN|END)\s+SOLUTION")


def on_page_content(html, page, config, files):
    if not page.file.src_uri.startswith("lessons/") or not page.file.src_uri.endswith(".ipynb"):
        return html
    if _MARKER.search(html):
        raise ValueError(f"{page.file.src_uri}: the published lesson shows a solution marker")
    # copy buttons and the hidden copy of the source: not what a search should find
    return _SEARCH_NOISE.sub(lambda m: m.group(0) + " data-search-exclude", html)


_ID = re.compile(r'\bid="([^"]+)"')
_LOCAL_LINK = re.compile(r'href="#([^"]*)"')


def _heading_for(anchor: str, ids: list[str]) -> str | None:
    """The id a table-of-contents anchor meant. Two spellings miss the page's ids:
    mkdocs-jupyter's contents leave the code out of a heading's slug (``5`` for "5.
    `retain_graph`", whose id is ``5-retain_graph``; ``a-branch-as-two-blocks`` for "`cond`: a
    branch as two blocks"), and a link written in a lesson for JupyterLab keeps the heading's
    case and punctuation (``#1.-Programs,-blocks-and-scopes``). The one id that has the anchor's
    words (lower case, without punctuation) in order, preferring ids that start with the same
    word."""
    words = [w for w in (re.sub(r"[^\w]", "", w.lower()) for w in anchor.split("-")) if w]
    if not words:
        return None
    found, later = [], []
    for candidate in ids:
        parts = candidate.split("-")
        it = iter(parts)
        if all(any(w == p for p in it) for w in words):
            (found if parts[0] == words[0] else later).append(candidate)
    found = found or later
    return found[0] if len(found) == 1 else None


def on_post_page(output, page, config):
    """Lesson pages: point each table-of-contents link whose heading holds code at that
    heading's real id."""
    if not page.file.src_uri.startswith("lessons/") or not page.file.src_uri.endswith(".ipynb"):
        return output
    ids = _ID.findall(output)
    known = set(ids)

    def fix(match):
        anchor = match.group(1)
        if not anchor or anchor in known:
            return match.group(0)
        target = _heading_for(anchor, ids)
        return f'href="#{target}"' if target else match.group(0)

    return _LOCAL_LINK.sub(fix, output)
