"""The instructor guide's assignment tables, made from the graded suites themselves.

``python -m tinygrad_course.grading.tables [--write docs/instructors.md]`` prints the tables (or
replaces the block between the markers in that file): one row per assignment (tests, points,
hidden points, suite), then one table per assignment with a row per task (tests, points,
the functions holding its solution regions, their files). The numbers come from collecting
the suites with their markers; the functions from the library's solution regions. A test
(``tests/assignments/test_assignment_scores.py``) fails when the guide and the suites
disagree.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from .pytest_plugin import _natural_key, _number, grading_info
from .splice import task_functions
from .student import _walk, has_solution_markers

__all__ = ["collect", "regions", "markdown", "replace_block", "BEGIN", "END", "main"]

BEGIN = (
    "<!-- BEGIN GENERATED assignment tables: "
    "python -m tinygrad_course.grading.tables --write docs/instructors.md -->"
)
END = "<!-- END GENERATED assignment tables -->"
_NOT_LIBRARY = ("tests", "notebooks", "docs", "benchmarks")


def pytest_addoption(parser) -> None:
    parser.addoption("--tgedu-collect-json", default=None, help=argparse.SUPPRESS)


def pytest_collection_finish(session) -> None:
    path = session.config.getoption("tgedu_collect_json")
    if path:
        rows = []
        for item in session.items:
            info = grading_info(item)
            if info is not None:
                rows.append({**info, "file": item.nodeid.split("::")[0]})
        Path(path).write_text(json.dumps(rows), encoding="utf-8")


def collect(repo, paths=("tests/assignments",)) -> list[dict]:
    """The grading markers of every test under ``paths`` (pytest collection, in a
    subprocess): task, points, visibility, uses, title and file."""
    repo = Path(repo).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tests.json"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
             "-p", "no:tinygrad_edu_grading", "-p", "tinygrad_course.grading.pytest_plugin",
             "-p", "tinygrad_course.grading.tables", "--tgedu-collect-json", str(out), *paths],
            cwd=repo, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if not out.is_file():
            raise RuntimeError(f"collecting {paths} failed:\n{done.stdout[-3000:]}{done.stderr}")
        return json.loads(out.read_text(encoding="utf-8"))


def regions(repo) -> dict[str, list[tuple[str, str]]]:
    """Task -> (file, function) of each of its solution regions in the library."""
    repo = Path(repo).resolve()
    found: dict[str, list] = {}
    for rel in _walk(repo, set()):
        if rel.suffix != ".py" or rel.parts[0] in _NOT_LIBRARY:
            continue
        text = (repo / rel).read_text(encoding="utf-8")
        if has_solution_markers(text):
            for task, names in task_functions(text, rel.as_posix()).items():
                if task == "solution":  # unnamed: a lesson exercise's answer, not a graded task
                    continue
                found.setdefault(task, []).extend((rel.as_posix(), q) for q in names)
    return found


def _assignment_names(repo: Path, files) -> dict[str, str]:
    names = {}
    for f in files:
        doc = (repo / f).read_text(encoding="utf-8")
        m = re.search(r'"""\s*Assignment (A\d+): (.+?)(?: \(|\.\n|\n)', doc)
        if m:
            names[m.group(1)] = m.group(2).replace("``", "`")
    return names


def markdown(repo, paths=("tests/assignments",), tests=None) -> str:
    """The tables, as markdown; ``tests``: what :func:`collect` returns for ``paths``, when
    the caller has it already."""
    repo = Path(repo).resolve()
    tests = collect(repo, paths) if tests is None else tests
    where = regions(repo)
    files = sorted({t["file"] for t in tests})
    names = _assignment_names(repo, files)
    by_assignment: dict[str, list] = {}
    for t in tests:
        by_assignment.setdefault(t["task"].split(".")[0], []).append(t)
    lines = ["| assignment | tests | points | of them hidden | suite |", "|---|--:|--:|--:|---|"]
    for a in sorted(by_assignment, key=_natural_key):
        ts = by_assignment[a]
        points = _number(sum(t["points"] for t in ts))
        hidden = _number(sum(t["points"] for t in ts if t["visibility"] != "visible"))
        suites = ", ".join(f"`{f}`" for f in sorted({t["file"] for t in ts}))
        lines.append(f"| {a} {names.get(a, '')} | {len(ts)} | {points} | {hidden} | {suites} |")
    for a in sorted(by_assignment, key=_natural_key):
        lines += ["", f"**{a}: {names.get(a, a)}**", "",
                  "| task | tests | points (hidden) | functions to write | in |",
                  "|---|--:|--:|---|---|"]  # fmt: skip
        tasks: dict[str, list] = {}
        for t in by_assignment[a]:
            tasks.setdefault(t["task"], []).append(t)
        for task in sorted(tasks, key=_natural_key):
            ts = tasks[task]
            points = _number(sum(t["points"] for t in ts))
            hidden = _number(sum(t["points"] for t in ts if t["visibility"] != "visible"))
            shown = f"{points} ({hidden})" if hidden else f"{points}"
            uses = next((t["uses"] for t in ts if t["uses"] is not None), None)
            if task in where:
                funcs = ", ".join(f"`{q}`" for _, q in where[task])
                file_list = ", ".join(dict.fromkeys(f"`{f}`" for f, _ in where[task]))
            elif uses:
                funcs, file_list = "none: it uses " + ", ".join(uses), "—"
            else:
                funcs, file_list = "none: tests of given code", "—"
            lines.append(f"| {task} | {len(ts)} | {shown} | {funcs} | {file_list} |")
    return "\n".join(lines) + "\n"


def replace_block(text: str, tables: str) -> str:
    """``text`` with the block between :data:`BEGIN` and :data:`END` replaced by ``tables``."""
    start, end = text.find(BEGIN), text.find(END)
    if start == -1 or end == -1 or end < start:
        raise ValueError(f"no generated block ({BEGIN} ... {END}) in the file")
    return text[: start + len(BEGIN)] + "\n\n" + tables + "\n" + text[end:]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tinygrad_course.grading.tables")
    parser.add_argument("--repo", default=".", help="the instructor's repository")
    parser.add_argument("--write", metavar="FILE", help="replace the generated block in FILE")
    args = parser.parse_args(argv)
    tables = markdown(args.repo)
    if args.write:
        path = Path(args.write)
        path.write_text(replace_block(path.read_text(encoding="utf-8"), tables), encoding="utf-8")
        print(f"updated the assignment tables in {path}")
    else:
        print(tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
