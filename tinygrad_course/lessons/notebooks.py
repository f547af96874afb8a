"""The lesson notebooks as files: the exercise convention, and ``.py`` / ``.ipynb`` pairs.

An exercise in a lesson is two cells. The first holds the learner's code, a function whose
body is the reference solution between marker comments; the student edition (``tinygrad-edu
make-student``) replaces everything between the markers with ``raise NotImplementedError``::

    def derivative_of_square(x):
        # BEGIN SOLUTION
        return 2 * x
        # END SOLUTION

The second cell, *after* the solution cell and never inside it, checks the answer with the
exercise's check (``ex.derivative_of_square.check(derivative_of_square)``).

Each lesson is a jupytext percent-format ``NN_name.py`` (the source of truth) paired with the
executed ``NN_name.ipynb``. A lesson too long for one sitting comes in parts, one pair each,
lettered after the number (``09a_programs``, ``09b_passes``, ``09c_codegen``): each part runs
on its own from the top, and all of them share the lesson's one exercise module (``lesson09``),
so no later lesson or exercise is renumbered. :func:`lesson_notebooks` finds them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = [
    "LESSON_GLOB",
    "lesson_notebooks",
    "lesson_number",
    "SOLUTION_BEGIN",
    "SOLUTION_END",
    "lint_notebook",
    "pair_problems",
    "student_edition",
    "execute_notebook",
    "executed_student_edition",
    "solution_snippets",
]

SOLUTION_BEGIN = "# BEGIN SOLUTION"
SOLUTION_END = "# END SOLUTION"


#: the glob of a lesson notebook's name without its suffix: ``NN_name`` or a part, ``NNa_name``
LESSON_GLOB = "[0-9][0-9]*_*"
_LESSON_NAME = re.compile(r"^(\d\d)([a-z]?)_")


def lesson_number(name: str) -> int:
    """The lesson a notebook belongs to: 9 for ``09a_programs`` as for a whole ``09_x``.

    >>> lesson_number("09b_passes.ipynb"), lesson_number("14_gpt")
    (9, 14)
    """
    match = _LESSON_NAME.match(Path(name).name)
    if match is None:
        raise ValueError(f"{name!r} is not a lesson notebook's name: NN_name or NNa_name "
                         "(two digits, a letter for a part of a lesson, then _)")  # fmt: skip
    return int(match.group(1))


def lesson_notebooks(folder, lesson: int | None = None, suffix: str = ".ipynb") -> list[Path]:
    """The lesson notebooks in ``folder`` (``NN_name`` and lettered parts ``NNa_name``), in
    order; with ``lesson``, only that lesson's: one path, or one per part.

    Args:
        folder: a ``notebooks/`` folder.
        lesson: a lesson number (9), or None for every lesson.
        suffix: ``.ipynb`` (the executed notebooks) or ``.py`` (their sources).
    """
    found = [p for p in Path(folder).glob(LESSON_GLOB + suffix) if _LESSON_NAME.match(p.name)]
    if lesson is not None:
        found = [p for p in found if lesson_number(p.name) == lesson]
    return sorted(found)


def _is_marker(line: str, marker: str) -> bool:
    """``# BEGIN SOLUTION``, optionally followed by a label (``# BEGIN SOLUTION A1.3``)."""
    return line == marker or line.startswith(marker + " ")


def lint_notebook(notebook) -> list[str]:
    """Problems with a lesson notebook's exercises (an empty list when there are none).

    Checks the convention: markers come in ``# BEGIN SOLUTION`` / ``# END SOLUTION`` pairs in
    code cells, no solution cell calls ``check*`` itself (the student edition would lose the
    check), and each solution cell is followed, later in the notebook, by a cell that does.

    Args:
        notebook: a path to an ``.ipynb`` file, or the notebook as a dict.
    """
    if not isinstance(notebook, dict):
        with open(notebook, encoding="utf-8") as fh:
            notebook = json.load(fh)
    cells = notebook.get("cells", [])
    problems = []
    pending = None
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        lines = [line.strip() for line in source.splitlines()]
        begins = sum(_is_marker(line, SOLUTION_BEGIN) for line in lines)
        ends = sum(_is_marker(line, SOLUTION_END) for line in lines)
        calls_check = "check(" in source or "check_gradient(" in source or "check_true(" in source
        if begins != ends:
            problems.append(f"cell {index}: {begins} '{SOLUTION_BEGIN}' but {ends} "
                            f"'{SOLUTION_END}' markers")  # fmt: skip
        if begins:
            if calls_check:
                problems.append(f"cell {index}: a solution cell also calls a check; move the "
                                "check into its own cell after it")  # fmt: skip
            if pending is not None:
                problems.append(f"cell {pending}: solution cell has no check cell after it")
            pending = index
        elif calls_check:
            pending = None
    if pending is not None:
        problems.append(f"cell {pending}: solution cell has no check cell after it")
    return problems


def _cell_texts(cells) -> list[tuple[str, str]]:
    """(type, source) per cell; trailing newlines do not count (jupytext drops them)."""
    return [(c["cell_type"], ("".join(c["source"]) if isinstance(c["source"], list)
             else c["source"]).rstrip("\n")) for c in cells]  # fmt: skip


def pair_problems(source) -> list[str]:
    """Differences between a lesson's ``.py`` source and its paired ``.ipynb`` (empty: in sync).

    A lesson is a jupytext percent-format ``.py`` file, the source of truth, paired with an
    ``.ipynb`` that keeps the executed outputs. After editing the ``.py``, run
    ``jupytext --sync notebooks/NN_name.py`` and execute the notebook in place
    (``jupyter nbconvert --to notebook --execute --inplace notebooks/NN_name.ipynb``).

    Args:
        source: the path of the ``.py`` file (the notebook is the same path with ``.ipynb``).
    """
    import pathlib  # noqa: PLC0415

    import jupytext  # noqa: PLC0415  (the notebooks extra)

    source = pathlib.Path(source)
    notebook = source.with_suffix(".ipynb")
    if not notebook.is_file():
        return [f"{notebook.name} is missing: run `jupytext --sync {source}`"]
    with open(notebook, encoding="utf-8") as fh:
        nb = json.load(fh)
    problems = []
    formats = nb.get("metadata", {}).get("jupytext", {}).get("formats")
    if formats != "ipynb,py:percent":
        problems.append(f"{notebook.name} is not paired (jupytext formats {formats!r}); run "
                        f"`jupytext --set-formats ipynb,py:percent {notebook}`")  # fmt: skip
    want, got = _cell_texts(jupytext.read(source).cells), _cell_texts(nb.get("cells", []))
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            first = w[1].splitlines()[0] if w[1] else "(empty)"
            problems.append(f"cell {i} ({w[0]}, starting {first!r}) differs in {notebook.name}")
    if len(want) != len(got):
        problems.append(f"{source.name} has {len(want)} cells, {notebook.name} has {len(got)}")
    if problems:
        problems.append(f"run `jupytext --sync {source}`, then execute the notebook in place")
    return problems


def student_edition(notebook) -> dict:
    """The student edition of a lesson notebook, as a dict: every solution region replaced
    by ``raise NotImplementedError`` (``tinygrad-edu make-student``'s rule), outputs cleared.

    Args:
        notebook: the path of the reference ``.ipynb``.
    """
    import pathlib  # noqa: PLC0415

    from ..grading.student import strip_notebook  # noqa: PLC0415

    path = pathlib.Path(notebook)
    text = path.read_text(encoding="utf-8")
    stripped = strip_notebook(text, path.name)
    nb = json.loads(stripped if stripped is not None else text)
    nb.get("metadata", {}).pop("widgets", None)  # saved widget state: a page would fetch a CDN
    return nb


def execute_notebook(
    nb: dict, cwd, strict: bool = False, timeout: int = 300, env: dict | None = None,
    root=None,
) -> dict:
    """Run a notebook (a dict) top to bottom in a fresh kernel and return it with outputs.

    A cell that raises stops the run (``nbclient``'s ``CellExecutionError``), so a notebook
    that comes back has run every cell. The kernel gets ``TINYGRAD_EDU_STRICT=1`` or ``0``
    from ``strict`` (a student edition runs with its exercises unsolved: not strict), and
    sees the same ``tinygrad_edu`` as this process, or with ``root`` (a student edition's
    folder) only the one in that folder.
    """
    import os  # noqa: PLC0415
    import pathlib  # noqa: PLC0415

    import nbformat  # noqa: PLC0415
    from nbclient import NotebookClient  # noqa: PLC0415

    if root is not None:
        paths = [str(pathlib.Path(root).resolve())]
    else:
        paths = [str(pathlib.Path(__file__).resolve().parents[2])]
        paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    kernel_env = dict(os.environ, **(env or {}))
    kernel_env["TINYGRAD_EDU_STRICT"] = "1" if strict else "0"
    kernel_env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    node = nbformat.reads(json.dumps(nb), as_version=4)
    # The kernel's log stops at errors: each kernel would otherwise warn on the terminal that
    # it talks over local TCP without encryption, once per lesson, about nothing the reader
    # can act on. Errors in the cells come back as the cells' outputs, as before.
    client = NotebookClient(node, timeout=timeout, kernel_name="python3", record_timing=False,
                            extra_arguments=["--IPKernelApp.log_level=ERROR"])  # fmt: skip
    client.execute(cwd=str(cwd), env=kernel_env)
    return json.loads(nbformat.writes(node))


def _package_digest() -> str:
    """A digest of the library's and the course's source: an executed lesson is reused only
    with the same."""
    import hashlib  # noqa: PLC0415
    import pathlib  # noqa: PLC0415

    import tinygrad_edu  # noqa: PLC0415

    digest = hashlib.sha256()
    for root in (pathlib.Path(tinygrad_edu.__file__).resolve().parent,
                 pathlib.Path(__file__).resolve().parents[1]):  # fmt: skip
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root.parent)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def executed_student_edition(notebook, cache_dir, timeout: int = 300):
    """The student edition of a lesson, executed against this library (not strict, so its
    unsolved exercises say NOT SOLVED YET and the lesson runs on), as a path to an ``.ipynb``.

    The result is kept in ``cache_dir`` under a name made from the stripped notebook and the
    library's source, so the docs build and the tests run each lesson once between edits.

    Args:
        notebook: the path of the reference ``.ipynb``.
        cache_dir: where executed editions are kept (created when missing).
        timeout: seconds a cell may run.
    """
    import hashlib  # noqa: PLC0415
    import os  # noqa: PLC0415
    import pathlib  # noqa: PLC0415

    notebook, cache_dir = pathlib.Path(notebook), pathlib.Path(cache_dir)
    nb = student_edition(notebook)
    cells = json.dumps([(c["cell_type"], c["source"]) for c in nb["cells"]], sort_keys=True)
    key = hashlib.sha256((cells + _package_digest()).encode()).hexdigest()[:16]
    out = cache_dir / f"{notebook.stem}-{key}.ipynb"
    if out.is_file():
        return out
    done = execute_notebook(nb, notebook.parent, strict=False, timeout=timeout)
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(done, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, out)  # NOTE: atomic, so a reader never sees half a notebook
    for old in cache_dir.glob(f"{notebook.stem}-*.ipynb"):
        if old != out:
            old.unlink(missing_ok=True)
    return out


def solution_snippets(paths, min_length: int = 16) -> dict[str, str]:
    """What would give a solution away: ``{snippet: "file:line"}`` for every solution region
    in ``paths`` (``.py`` files, jupytext lessons), whitespace collapsed.

    A snippet is two consecutive code lines of a region (a line alone, ``node = stack.pop()``,
    is common teaching code), or the one code line of a one-line region when it has at least
    ``min_length`` characters. Comment lines do not count. Tests look for these in the
    published pages, their search index and the hints.
    """
    import pathlib  # noqa: PLC0415
    import re  # noqa: PLC0415

    from ..grading.student import solution_regions  # noqa: PLC0415

    found: dict[str, str] = {}
    for path in map(pathlib.Path, paths):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for begin, end, _ in solution_regions(text, str(path)):
            code = [(n, re.sub(r"\s+", " ", lines[n - 1]).strip()) for n in range(begin + 1, end)]
            code = [(n, c) for n, c in code if c and not c.startswith("#")]
            if len(code) == 1 and len(code[0][1]) >= min_length:
                found.setdefault(code[0][1], f"{path.name}:{code[0][0]}")
            for (n, first), (_, second) in zip(code, code[1:]):
                found.setdefault(f"{first} {second}", f"{path.name}:{n}")
    return found
