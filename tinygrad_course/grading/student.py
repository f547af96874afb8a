"""Student editions: copy a repository with the marked solutions taken out.

Marker syntax (comment lines of their own, in ``.py`` files and in notebook code cells)::

    def relu_backward(x, grad):
        # BEGIN SOLUTION A1.2
        return grad * (x > 0)
        # END SOLUTION

becomes, in the student edition::

    def relu_backward(x, grad):
        raise NotImplementedError("A1.2: write your solution here")

- ``# BEGIN SOLUTION`` / ``# BEGIN SOLUTION <task>`` ... ``# END SOLUTION``: the lines from
  BEGIN to END (both included) become one ``raise NotImplementedError("<task>: ...")`` at the
  BEGIN line's indentation; the task is ``solution`` when the marker names none. Put regions
  inside function bodies, so that the student's modules still import.
- ``# BEGIN HIDDEN TESTS`` ... ``# END HIDDEN TESTS``: the lines are removed (the autograder
  keeps them; students never see them). Leave something else in the block (or ``pass``).

Markers count only as real comments: text inside strings and docstrings (like this one) is
left alone. Unbalanced or nested markers, a region at module level of a ``.py`` file (it would
raise on import) and a result that does not compile are errors naming the file and line; when
any file has an error, nothing is written.

What an edition leaves out or cleans, so that no solution reaches students by another road:

- files the repository's ``.gitignore`` files ignore (built sites, scratch outputs), version
  control, virtual environments and caches;
- build-script folders (``_build``, like ``notebooks/_build``): generators hold their lessons'
  solutions inside strings, where no marker is a comment;
- in notebooks: the outputs of every notebook with a region (they could show a solution's
  results) and the saved widget state of every notebook (``metadata.widgets``);
- jupytext ``.py`` notebooks (``# %%`` cells) are stripped like notebook cells: a region may
  sit at the top level of a cell;
- the recorded wrong answers of the lessons' exercises (``Wrong(what, answer, hint)``): many
  are the solution with one token changed, so the edition keeps their ``what`` and ``hint``,
  writes ``...`` for the answer and removes the helpers only they used
  (:mod:`~tinygrad_course.grading.wrong_answers`).

What is meant for instructors only, marked in the repository:

- a Markdown file whose first line is ``<!-- instructors only -->`` (the instructor guide) is
  left out, and in any Markdown file the lines from ``<!-- BEGIN INSTRUCTORS ONLY -->`` to
  ``<!-- END INSTRUCTORS ONLY -->`` (a page's section for instructors);
- a Python file whose first line is ``# instructors only`` (the maintainers' scripts under
  ``tools/``, which splice the reference solutions) is left out;
- in a YAML file, a line that ends with the comment ``# instructors only`` (the site's nav
  entry for the guide), so that the edition's site builds without a dead link;
- a file ``NAME.student.EXT`` becomes the edition's ``NAME.EXT`` in place of the
  instructor's (``README.student.md``: the students' README).

The edition is written to a temporary folder beside ``OUT`` and renamed into place once
complete: a run that fails (or is interrupted) leaves no half-written edition, and with
``--force`` the old edition stays as it was until the new one is whole.

Command line: ``tinygrad-edu make-student DIR [--out OUT] [--force]``.

>>> source = "def f(x):\\n    # BEGIN SOLUTION A1\\n    return x\\n    # END SOLUTION\\n"
>>> print(strip_solutions(source))
def f(x):
    raise NotImplementedError("A1: write your solution here")
<BLANKLINE>
"""

from __future__ import annotations

import ast
import io
import os
import re
import shutil
import tempfile
import tokenize
from pathlib import Path

from .gitignore import Ignore
from .wrong_answers import strip_wrong_answers_in

__all__ = [
    "MarkerError",
    "strip_solutions",
    "strip_notebook",
    "make_student_edition",
    "has_solution_markers",
    "is_jupytext",
    "strip_jupytext",
    "BUILD_DIRS",
    "solution_regions",
    "SKIP_NAMES",
    "INSTRUCTORS_ONLY",
    "for_students",
    "add_arguments",
    "run",
]

# folders and files never copied into an edition
SKIP_NAMES = frozenset({
    ".git", ".venv", "venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache",
    ".hypothesis", ".ipynb_checkpoints", "build", "dist", "site", ".tox", ".nox",
    "node_modules", ".DS_Store",
})  # fmt: skip

# folders of build scripts, never copied: a notebook generator holds its lesson's solutions in
# strings, where no marker is a comment
BUILD_DIRS = frozenset({"_build"})

# what marks material meant for instructors only (see the module's docstring)
INSTRUCTORS_ONLY = "<!-- instructors only -->"
INSTRUCTORS_ONLY_PY = "# instructors only\n"  # a Python file's first line
_INSTRUCTORS_BLOCK = ("<!-- BEGIN INSTRUCTORS ONLY -->", "<!-- END INSTRUCTORS ONLY -->")
_INSTRUCTORS_LINE = re.compile(r"#\s*instructors only\s*$")
_STUDENT_TWIN = ".student"  # NAME.student.EXT replaces NAME.EXT

_MARKER = re.compile(r"#\s*(BEGIN|END)\s+(SOLUTION|HIDDEN TESTS)\b[ \t]*(\S*)[ \t]*$")
_MESSAGE = "write your solution here"


class MarkerError(ValueError):
    """Solution or hidden-test markers that cannot be processed (file and line named)."""


def _comment_lines(text: str) -> set[int] | None:
    """1-based numbers of lines that hold only a comment (None if ``text`` does not tokenize)."""
    lines = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and not tok.line[: tok.start[1]].strip():
                lines.add(tok.start[0])
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return lines


def _find_markers(text: str, where: str):
    """(line number, kind, BEGIN/END, task, indentation) for each marker line, in order."""
    lines = text.splitlines()
    comments = _comment_lines(text)
    found = []
    for n, line in enumerate(lines, 1):
        if comments is not None and n not in comments:
            continue
        m = _MARKER.match(line.strip())
        if m:
            edge, kind, task = m.groups()
            if edge == "END" and task:
                raise MarkerError(f"{where}, line {n}: END {kind} takes no name, got {task!r}")
            if kind == "HIDDEN TESTS" and task:
                raise MarkerError(f"{where}, line {n}: BEGIN HIDDEN TESTS takes no name")
            found.append((n, kind, edge, task, line[: len(line) - len(line.lstrip())]))
    return found


def has_solution_markers(text: str) -> bool:
    """Whether ``text`` holds a ``# BEGIN SOLUTION`` comment line."""
    return any(kind == "SOLUTION" for _, kind, *_ in _find_markers(text, "<text>"))


def _regions(text: str, where: str):
    """Balanced (begin line, end line, kind, task, indentation) regions; errors otherwise."""
    regions, open_ = [], None
    for n, kind, edge, task, indent in _find_markers(text, where):
        if edge == "BEGIN":
            if open_ is not None:
                raise MarkerError(
                    f"{where}, line {n}: BEGIN {kind} inside the {open_[1]} region opened at "
                    f"line {open_[0]}; regions cannot nest (close it with END {open_[1]} first)"
                )
            open_ = (n, kind, task, indent)
        else:
            if open_ is None:
                raise MarkerError(f"{where}, line {n}: END {kind} without a BEGIN {kind}")
            if open_[1] != kind:
                raise MarkerError(
                    f"{where}, line {n}: END {kind} closes the {open_[1]} region opened at "
                    f"line {open_[0]}; expected END {open_[1]}"
                )
            regions.append((open_[0], n, kind, open_[2] or "solution", open_[3]))
            open_ = None
    if open_ is not None:
        raise MarkerError(f"{where}, line {open_[0]}: BEGIN {open_[1]} is never closed")
    return regions


def solution_regions(
    text: str, filename: str = "<string>", kind: str = "SOLUTION"
) -> list[tuple[int, int, str]]:
    """``(begin line, end line, task)`` of each solution region (lines count from 1); with
    ``kind="HIDDEN TESTS"``, of each hidden-tests block.

    Raises:
        MarkerError: unbalanced or nested markers.
    """
    return [(b, e, task) for b, e, k, task, _ in _regions(text, filename) if k == kind]


def _strip(text: str, where: str) -> tuple[str, list[int]]:
    """The stripped text and the (new) line numbers of the inserted ``raise`` lines."""
    lines = text.splitlines(keepends=True)
    out, raises, cursor = [], [], 0
    for begin, end, kind, task, indent in _regions(text, where):
        out.extend(lines[cursor : begin - 1])
        if kind == "SOLUTION":
            newline = "\r\n" if lines[begin - 1].endswith("\r\n") else "\n"
            if not lines[end - 1].endswith(("\n", "\r")):  # the END line ended the text (a
                newline = ""  # notebook cell's source): so does the raise, as jupytext pairs it
            out.append(f'{indent}raise NotImplementedError("{task}: {_MESSAGE}"){newline}')
            raises.append(len(out))
        cursor = end
    out.extend(lines[cursor:])
    return "".join(out), raises


def strip_solutions(text: str, filename: str = "<string>", check: bool = True) -> str:
    """Return the student version of one Python source text.

    Args:
        text: the source.
        filename: named in errors.
        check: also require that the result compiles and that no solution region sits at
            module level (where its ``raise`` would run on import).

    Raises:
        MarkerError: unbalanced or nested markers, or a failed check (file and line named).
    """
    result, raises = _strip(text, filename)
    if check and result != text:
        try:
            tree = ast.parse(result, filename)
        except SyntaxError as e:
            raise MarkerError(
                f"{filename}, line {e.lineno}: the student edition does not compile ({e.msg}); "
                "keep each region's lines at one indentation inside a block"
            ) from e
        bodies = [
            (node.body[0].lineno, node.end_lineno)
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        for n in raises:
            if not any(lo <= n <= hi for lo, hi in bodies):
                raise MarkerError(
                    f"{filename}: the solution region that becomes line {n} is not inside a "
                    "function, so the student's module would raise on import; move the markers "
                    "into a function body"
                )
    return result


def strip_notebook(text: str, filename: str = "<notebook>") -> str | None:
    """Return the student version of a notebook's JSON text (None when nothing changes).

    Code cells are stripped like ``.py`` files (a region at the top level of a cell is fine:
    the cell raises when the student runs it), and then every output is cleared (an output
    could show a solution's result). Saved widget state (``metadata.widgets``: the stepper's
    frames, say) is dropped from every notebook.
    """
    try:
        import nbformat
    except ImportError as e:  # pragma: no cover - nbformat comes with the notebooks extra
        raise ImportError(
            'student editions of notebooks need nbformat: pip install "tinygrad_edu[notebooks]"'
        ) from e
    nb = nbformat.reads(text, as_version=4)
    changed = False
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            where = f"{filename}, cell {i}"
            new = strip_solutions(cell.source, where, check=False)
            changed = changed or new != cell.source
            cell.source = new
    if changed:
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
    if "widgets" in nb.metadata:
        del nb.metadata["widgets"]
        changed = True
    return nbformat.writes(nb) + "\n" if changed else None


_JUPYTEXT = re.compile(r"^# %%|^# ---\n# jupyter:", re.M)


def is_jupytext(text: str) -> bool:
    """Whether a ``.py`` file is a jupytext percent-format notebook (``# %%`` cells)."""
    return bool(_JUPYTEXT.search(text))


def strip_jupytext(text: str, filename: str = "<string>") -> str:
    """The student version of a jupytext ``.py`` notebook: regions may sit at the top level
    of a cell (the cell raises when run), and the result must still compile."""
    result = strip_solutions(text, filename, check=False)
    if result != text:
        try:
            compile(result, filename, "exec")
        except SyntaxError as e:
            raise MarkerError(
                f"{filename}, line {e.lineno}: the student edition does not compile ({e.msg})"
            ) from e
    return result


def for_students(text: str, filename: str = "<string>") -> str | None:
    """The student version of a Markdown or YAML file's text: None when the whole file is
    for instructors only (Markdown whose first line is :data:`INSTRUCTORS_ONLY`), else the
    text without its instructors-only blocks (Markdown) or lines (YAML). See the module's
    docstring.

    Raises:
        MarkerError: an instructors-only block that is not closed, or nested (file and line).

    >>> for_students("# Guide\\n<!-- BEGIN INSTRUCTORS ONLY -->\\nsecret\\n"
    ...              "<!-- END INSTRUCTORS ONLY -->\\nend\\n", "page.md")
    '# Guide\\nend\\n'
    """
    lines = text.splitlines(keepends=True)
    if filename.endswith((".yml", ".yaml")):
        return "".join(line for line in lines if not _INSTRUCTORS_LINE.search(line))
    if lines and lines[0].strip() == INSTRUCTORS_ONLY:
        return None
    begin, end = _INSTRUCTORS_BLOCK
    out, opened = [], None
    for n, line in enumerate(lines, 1):
        mark = line.strip()
        if mark == begin:
            if opened is not None:
                raise MarkerError(f"{filename}, line {n}: {begin} inside the block opened at "
                                  f"line {opened}; close it with {end} first")  # fmt: skip
            opened = n
        elif mark == end:
            if opened is None:
                raise MarkerError(f"{filename}, line {n}: {end} without a {begin}")
            opened = None
        elif opened is None:
            out.append(line)
    if opened is not None:
        raise MarkerError(f"{filename}, line {opened}: {begin} is never closed")
    return "".join(out)


def _student_twin(rel: Path) -> Path | None:
    """``README.md`` for ``README.student.md`` (the file the twin replaces), else None."""
    stem = rel.name.split(".")[0] if rel.name.count(".") >= 2 else ""
    if stem and rel.name.startswith(stem + _STUDENT_TWIN + "."):
        return rel.with_name(stem + rel.name[len(stem) + len(_STUDENT_TWIN):])
    return None


def _student_text(path: Path, rel: Path, text: str) -> str | None:
    """What the edition holds for one text file: the stripped text (None: nothing changes,
    the file is copied as it is); raises :class:`_LeftOut` for a file left out."""
    if path.suffix == ".py":
        if text.startswith(INSTRUCTORS_ONLY_PY):  # a script for instructors (tools/)
            raise _LeftOut(str(rel))
        strip = strip_jupytext if is_jupytext(text) else strip_solutions
        new = strip(text, str(rel))
    elif path.suffix == ".ipynb":
        return strip_notebook(text, str(rel))
    else:  # Markdown or YAML
        new = for_students(text, str(rel))
        if new is None:
            raise _LeftOut(str(rel))
    return new if new != text else None


class _LeftOut(Exception):
    """A file meant for instructors only (not copied into the edition)."""


def _walk(src: Path, skip: set[Path], gitignore: bool = True):
    """Files under ``src`` to copy, as paths relative to it, in sorted order.

    Leaves out :data:`SKIP_NAMES`, ``*.egg-info``, build-script folders (:data:`BUILD_DIRS`),
    ``skip``, and with ``gitignore`` whatever the ``.gitignore`` files ignore."""
    rules = Ignore()
    for root, dirs, files in os.walk(src):
        root = Path(root)
        here = "" if root == src else root.relative_to(src).as_posix()
        if gitignore and (root / ".gitignore").is_file():
            rules.add(here, (root / ".gitignore").read_text(encoding="utf-8", errors="replace"))

        def rel(name: str, here: str = here) -> str:
            return f"{here}/{name}" if here else name

        dirs[:] = sorted(
            d for d in dirs
            if d not in SKIP_NAMES and d not in BUILD_DIRS and not d.endswith(".egg-info")
            and root / d not in skip and not rules.ignored(rel(d), is_dir=True)
        )  # fmt: skip
        for name in sorted(files):
            if name in SKIP_NAMES or name.endswith((".pyc", ".pyo")):
                continue
            if not rules.ignored(rel(name), is_dir=False):
                yield (root / name).relative_to(src)


def _plan(src: Path, skip: set[Path]) -> tuple[list, list[str]]:
    """``(source, target, new text or None)`` per file of the edition (relative paths), and
    the files left out as meant for instructors only. Every file is read and stripped first,
    so that an error leaves nothing written."""
    plan, errors, left_out = [], [], []
    files = list(_walk(src, skip))
    twins = {_student_twin(rel): rel for rel in files if _student_twin(rel) is not None}
    for rel in files:
        if rel in twins:
            continue  # the student twin (README.student.md) takes its place
        path, new = src / rel, None
        try:
            if path.suffix in (".py", ".ipynb", ".md", ".yml", ".yaml") and not path.is_symlink():
                new = _student_text(path, rel, path.read_text(encoding="utf-8"))
        except _LeftOut:
            left_out.append(str(rel))
            continue
        except MarkerError as e:
            errors.append(str(e))
        except UnicodeDecodeError as e:
            if path.suffix in (".py", ".ipynb"):  # other text files are copied as they are
                errors.append(f"{rel}: not UTF-8 ({e.reason} at byte {e.start})")
        plan.append((rel, _student_twin(rel) or rel, new))
    if errors:
        raise MarkerError("make-student: nothing written:\n" + "\n".join(errors))
    return _without_wrong_answers(src, plan), left_out


def _without_wrong_answers(src: Path, plan: list) -> list:
    """``plan`` with the lessons' recorded wrong answers left out of every module
    (:mod:`.wrong_answers`: across modules, since one may import another's helpers)."""
    texts, where = {}, {}
    for index, (rel, _, new) in enumerate(plan):
        path = src / rel
        if path.suffix == ".py" and not path.is_symlink():
            try:
                text = new if new is not None else path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # named as an error above
            texts[rel.as_posix()], where[rel.as_posix()] = text, index
    plan = list(plan)
    for key, text in strip_wrong_answers_in(texts).items():
        if text != texts[key]:
            rel, target, _ = plan[where[key]]
            plan[where[key]] = (rel, target, text)
    return plan


def _write(src: Path, out: Path, plan) -> dict[str, list[str]]:
    report = {"stripped": [], "copied": []}
    for rel, target_rel, new in plan:
        target = out / target_rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if (src / rel).is_symlink():
            os.symlink(os.readlink(src / rel), target)
            report["copied"].append(str(target_rel))
        elif new is None:
            shutil.copy2(src / rel, target)
            report["copied"].append(str(target_rel))
        else:
            target.write_text(new, encoding="utf-8", newline="")
            shutil.copymode(src / rel, target)
            report["stripped"].append(str(target_rel))
    return report


def make_student_edition(
    src, dst, force: bool = False, record=None
) -> dict[str, list[str]]:
    """Write a student edition of the repository ``src`` to ``dst``.

    Every file is copied except version control, virtual environments, caches and build
    outputs (:data:`SKIP_NAMES`, ``*.egg-info``), build-script folders (:data:`BUILD_DIRS`),
    what ``.gitignore`` files ignore and what is marked for instructors only; ``.py`` files
    and notebooks have their solutions replaced and hidden tests removed, notebooks their
    widget state. All files are processed before anything is written, so a marker error
    leaves ``dst`` untouched; the edition is made in a temporary folder beside ``dst`` and
    renamed into place when complete, so no failure leaves half an edition.

    Args:
        src: the instructor's repository.
        dst: the edition's folder (must not exist or be empty, unless ``force``).
        force: replace an existing ``dst``.
        record: a function ``record(src_notebooks, dst_notebooks) -> paths`` that runs each
            lesson (``notebooks/NN_name.ipynb``) once against this full library and stores
            what its cells show in the edition's ``notebooks/.recorded/``; the lessons layer
            passes ``lessons.recorded.record_lessons`` (grading does not import lessons),
            so that the edition's lessons run to their end before any assignment is written
            (:mod:`tinygrad_course.lessons.recorded`; slow the first time, then cached).

    Returns:
        ``{"stripped": [...], "copied": [...], "left_out": [...], "recorded": [...]}``:
        relative paths, sorted (``left_out``: the files for instructors only).

    Raises:
        MarkerError: listing every file and line with a marker problem.
    """
    src, dst = Path(src).resolve(), Path(dst).resolve()
    if not src.is_dir():
        raise FileNotFoundError(f"make-student: {src} is not a folder")
    if dst == src:
        raise ValueError("make-student: the edition must go to a different folder")
    if dst.exists() and any(dst.iterdir()) and not force:
        raise FileExistsError(f"make-student: {dst} exists and is not empty; pass --force")
    # an interrupted run's temporary folders (inside src when the edition is) are no input
    skip = {dst, *dst.parent.glob(f".{dst.name}.*.partial")}
    plan, left_out = _plan(src, skip)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dst.name}.", suffix=".partial", dir=dst.parent))
    try:
        report = _write(src, tmp, plan)
        report["left_out"], report["recorded"] = left_out, []
        if record is not None and (src / "notebooks").is_dir():  # record_lessons
            written = record(src / "notebooks", tmp / "notebooks")
            report["recorded"] = sorted(str(p.relative_to(tmp)) for p in written)
        _replace_dir(tmp, dst)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return report


def _replace_dir(new: Path, dst: Path) -> None:
    """Rename the folder ``new`` to ``dst``, replacing what is there; the old edition is
    moved aside first and deleted only once ``new`` is in place."""
    old = None
    if dst.exists() or dst.is_symlink():
        old = Path(tempfile.mkdtemp(prefix=f".{dst.name}.", suffix=".old", dir=dst.parent))
        os.replace(dst, old / dst.name)
    os.replace(new, dst)  # NOTE: atomic on one file system, and new is beside dst
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def add_arguments(parser) -> None:
    parser.add_argument("dir", help="the instructor's repository")
    parser.add_argument("--out", help="where to write the edition (default: DIR-student)")
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")
    parser.add_argument(
        "--no-record", action="store_true",
        help="do not run the lessons to record their outputs (the edition's lessons then stop "
        "at the first cell that needs an unwritten assignment)",
    )  # fmt: skip


def run(args) -> int:
    src = Path(args.dir)
    out = Path(args.out) if args.out else src.resolve().with_name(src.resolve().name + "-student")
    try:
        report = make_student_edition(src, out, force=args.force,
                                      record=getattr(args, "record", None))  # fmt: skip
    except (MarkerError, FileExistsError, FileNotFoundError, ValueError) as e:
        print(e)
        return 1
    for rel in report["stripped"]:
        print(f"stripped  {rel}")
    for rel in report.get("left_out", []):
        print(f"left out  {rel} (instructors only)")
    recorded = f", {len(report['recorded'])} lessons recorded" if report["recorded"] else ""
    print(
        f"student edition written to {out}: {len(report['stripped'])} files stripped, "
        f"{len(report['copied'])} copied{recorded}"
    )
    return 0
