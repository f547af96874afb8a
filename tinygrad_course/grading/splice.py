"""Grading one task in isolation: the student's functions for it, the reference for the rest.

A solution region (``# BEGIN SOLUTION A2.1`` ... ``# END SOLUTION``) always sits inside a
function (the student edition refuses anything else). The unit of splicing is the outermost
function around a region, named by its qualified name (``_count_dependencies``,
``Tensor._accumulate``): the student may rewrite anything inside it, add helpers around it,
and the splice still finds it.

To grade task T in a file F that the student submitted, :func:`splice` starts from the
student's F and puts back the reference version of every function that holds another task's
region; every other file is the reference's. So one unfinished or broken task costs only its
own points, and a file that does not parse costs only the tasks whose regions live in it.

>>> ref = '''def f(x):
...     # BEGIN SOLUTION T1
...     return x + 1
...     # END SOLUTION
...
... def g(x):
...     # BEGIN SOLUTION T2
...     return 2 * x
...     # END SOLUTION
... '''
>>> task_functions(ref)
{'T1': ('f',), 'T2': ('g',)}
>>> mine = "def f(x):\\n    return x + 1\\n\\ndef g(x):\\n    raise NotImplementedError\\n"
>>> print(splice(ref, mine, keep={"T1"}).text)
def f(x):
    return x + 1
<BLANKLINE>
def g(x):
    # BEGIN SOLUTION T2
    return 2 * x
    # END SOLUTION
<BLANKLINE>
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .student import solution_regions

__all__ = [
    "SpliceError",
    "SubmittedSyntaxError",
    "MissingFunction",
    "CombineError",
    "Spliced",
    "task_functions",
    "function_span",
    "splice",
]

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


class SpliceError(ValueError):
    """The reference file's regions cannot be mapped to functions (an instructor error)."""


class SubmittedSyntaxError(Exception):
    """The submitted file does not parse. ``lineno``, ``msg`` and ``line`` say where."""

    def __init__(self, filename: str, lineno: int | None, msg: str, line: str = ""):
        super().__init__(f"{filename}, line {lineno}: {msg}")
        self.filename, self.lineno, self.msg, self.line = filename, lineno, msg, line


class CombineError(Exception):
    """The submitted file parses, but combined with the reference's functions it does not:
    the grader's edit failed, not the student's file."""


class MissingFunction(Exception):
    """The submitted file lacks a function that holds the task's solution."""

    def __init__(self, filename: str, qualname: str, task: str):
        super().__init__(
            f"{filename} has no function {qualname} (it holds task {task}); keep its name and "
            "its place (module level or inside its class) as in the starter code"
        )
        self.filename, self.qualname, self.task = filename, qualname, task


@dataclass(frozen=True)
class Spliced:
    """A spliced source and, for each of its lines, where it came from.

    ``origin[i]`` is ``("submitted", n)`` or ``("reference", n)`` for line ``i + 1`` of ``text``
    (``n`` counts from 1 in that file)."""

    text: str
    origin: tuple


def _parse(text: str, filename: str) -> ast.Module:
    return ast.parse(text, filename)


def _outer_functions(tree: ast.Module):
    """(qualname, node) for every function that no other function encloses, in order.

    Functions inside classes count (``Tensor.grad``); a function inside a function does not
    (its outer function is the unit). Same-named siblings (a property's getter and setter)
    get ``#2``, ``#3`` suffixes."""
    out, stack = [], [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        seen: dict[str, int] = {}
        children = []
        for child in getattr(node, "body", ()):
            if isinstance(child, _FUNCS + (ast.ClassDef,)):
                k = seen[child.name] = seen.get(child.name, 0) + 1
                name = prefix + child.name + (f"#{k}" if k > 1 else "")
                if isinstance(child, ast.ClassDef):
                    children.append((child, name + "."))
                else:
                    out.append((name, child))
        stack.extend(reversed(children))
    return sorted(out, key=lambda qn: qn[1].lineno)


def _start(node) -> int:
    """The first line of a definition, decorators included."""
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def task_functions(text: str, filename: str = "<string>") -> dict[str, tuple[str, ...]]:
    """Task -> qualified names of the functions that hold its solution regions, in file order.

    Raises:
        SpliceError: a region outside any function, or one function holding regions of two
            tasks (they could not be graded apart).
        MarkerError: unbalanced markers (from :mod:`tinygrad_course.grading.student`).
    """
    regions = solution_regions(text, filename)
    if not regions:
        return {}
    functions = _outer_functions(_parse(text, filename))
    found: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for begin, _end, task in regions:
        hits = [qn for qn, node in functions if _start(node) <= begin <= node.end_lineno]
        if not hits:
            raise SpliceError(
                f"{filename}, line {begin}: the solution region of {task} is not inside a "
                "function; move it into the function body it belongs to"
            )
        qualname = hits[0]
        if owner.setdefault(qualname, task) != task:
            raise SpliceError(
                f"{filename}: {qualname} holds regions of both {owner[qualname]} and {task}; "
                "split it into one function per task so each task can be graded alone"
            )
        if qualname not in found.setdefault(task, []):
            found[task].append(qualname)
    return {task: tuple(names) for task, names in found.items()}


def function_span(tree: ast.Module, qualname: str, lines=()) -> tuple[int, int, int] | None:
    """(first line, last line, indentation column) of the function ``qualname`` in ``tree``,
    decorators included, or None when there is no such function.

    With the source ``lines``, the span also takes the comment lines that end the body (an
    ``# END SOLUTION`` after the last statement is part of the function)."""
    for name, node in _outer_functions(tree):
        if name == qualname:
            end = node.end_lineno
            n = end
            while n < len(lines):
                text = lines[n]
                stripped = text.strip()
                if stripped and not (stripped.startswith("#") and _indent(text) > node.col_offset):
                    break
                n += 1
                if stripped:
                    end = n
            return _start(node), end, node.col_offset
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _prefix(line: str) -> str:
    return line[: _indent(line)]


def _reindent(lines: list[str], old: str, new: str) -> list[str]:
    """Move ``lines`` from the indentation ``old`` (the donor's ``def`` line's leading
    whitespace, tabs or spaces) to ``new`` (the base's): the prefix is swapped, the rest of
    each line's indentation kept, so a function copied into a tab-indented class is indented
    as consistently as Python requires (a tab, then the function's own spaces)."""
    if old == new:
        return lines
    out = []
    for line in lines:
        if line.strip() and line.startswith(old):
            out.append(new + line[len(old) :])
        else:
            out.append(line)  # blank lines, and string continuations left of the def
    return out


def splice(reference: str, submitted: str, keep, filename: str = "<string>") -> Spliced:
    """The source of ``filename`` for grading the tasks in ``keep``.

    The submitted file is the base; each function holding a region of a task not in ``keep``
    is replaced by the reference's. When the submitted file lacks one of those functions, the
    base is the reference instead, with the kept tasks' functions taken from the submission.
    A file holding no task in ``keep`` is the reference as it is.

    Raises:
        SubmittedSyntaxError: the submitted file does not parse.
        CombineError: it parses, but the combined file does not (the grader's fault).
        MissingFunction: the submission lacks a function of a kept task.
    """
    ref_tasks = task_functions(reference, filename)
    keep = set(keep)
    ref_lines = reference.splitlines(keepends=True)
    if not keep & set(ref_tasks):
        return Spliced(reference, tuple(("reference", n) for n in range(1, len(ref_lines) + 1)))
    try:
        sub_tree = _parse(submitted, filename)
    except (SyntaxError, ValueError) as e:  # ValueError: null bytes
        raise SubmittedSyntaxError(
            filename, getattr(e, "lineno", None), getattr(e, "msg", str(e)),
            (getattr(e, "text", "") or "").rstrip(),
        ) from None  # fmt: skip
    except (RecursionError, MemoryError):
        raise SubmittedSyntaxError(filename, None, "too deeply nested to parse") from None
    ref_tree = _parse(reference, filename)
    sub_lines = submitted.splitlines(keepends=True)
    if sub_lines and not sub_lines[-1].endswith("\n"):
        sub_lines[-1] += "\n"

    def spans(tree, names, lines):
        return {q: function_span(tree, q, lines) for q in names}

    kept = [(t, q) for t, qs in ref_tasks.items() if t in keep for q in qs]
    other = [(t, q) for t, qs in ref_tasks.items() if t not in keep for q in qs]
    sub_spans = spans(sub_tree, [q for _, q in kept + other], sub_lines)
    ref_spans = spans(ref_tree, [q for _, q in kept + other], ref_lines)
    for task, q in kept:
        if sub_spans[q] is None:
            raise MissingFunction(filename, q, task)
    if all(sub_spans[q] is not None for _, q in other):
        base, base_kind, donor, donor_kind = sub_lines, "submitted", ref_lines, "reference"
        moves = [(sub_spans[q], ref_spans[q]) for _, q in other]
    else:  # the student removed or renamed another task's function: keep only theirs
        base, base_kind, donor, donor_kind = ref_lines, "reference", sub_lines, "submitted"
        moves = [(ref_spans[q], sub_spans[q]) for _, q in kept]
    lines = [(line, (base_kind, n)) for n, line in enumerate(base, 1)]
    for (b0, b1, _), (d0, d1, _) in sorted(moves, key=lambda m: -m[0][0]):
        new = _reindent(donor[d0 - 1 : d1], _prefix(donor[d0 - 1]), _prefix(base[b0 - 1]))
        new = [ln if ln.endswith("\n") else ln + "\n" for ln in new]
        lines[b0 - 1 : b1] = [(ln, (donor_kind, d0 + k)) for k, ln in enumerate(new)]
    text = "".join(line for line, _ in lines)
    try:
        _parse(text, filename)
    except SyntaxError as e:  # the submission's style defeated the splice: the grader's fault
        raise CombineError(f"{filename}, line {e.lineno} of the combined file: {e.msg}") from None
    return Spliced(text, tuple(origin for _, origin in lines))
