"""Splicing one task's functions from a submission into the reference."""

import ast
import doctest

import pytest

from tinygrad_course.grading import splice as splice_module
from tinygrad_course.grading.splice import (
    MissingFunction,
    SpliceError,
    SubmittedSyntaxError,
    splice,
    task_functions,
)
from tinygrad_course.grading.student import strip_solutions

REFERENCE = '''\
"""A module with three tasks."""

import math


class Box:
    def __init__(self, w):
        self.w = w

    @property
    def area(self):
        # BEGIN SOLUTION T1
        return self.w * self.w
        # END SOLUTION

    @area.setter
    def area(self, value):
        # BEGIN SOLUTION T2
        self.w = math.sqrt(value)
        # END SOLUTION


def helper(x):
    return x + 1


def twice(x):
    """Twice x."""
    # BEGIN SOLUTION T3
    return 2 * x
    # END SOLUTION
'''


def test_doctests():
    assert doctest.testmod(splice_module).failed == 0


def test_task_functions_name_the_outermost_function():
    assert task_functions(REFERENCE) == {"T1": ("Box.area",), "T2": ("Box.area#2",),
                                         "T3": ("twice",)}  # fmt: skip
    nested = "def outer():\n    def inner():\n        # BEGIN SOLUTION X\n        pass\n" \
             "        # END SOLUTION\n    return inner\n"  # fmt: skip
    assert task_functions(nested) == {"X": ("outer",)}


def test_regions_outside_functions_or_shared_functions_are_errors():
    with pytest.raises(SpliceError, match="not inside a function"):
        task_functions("# BEGIN SOLUTION A\nX = 1\n# END SOLUTION\n", "m.py")
    two = "def f():\n    # BEGIN SOLUTION A\n    pass\n    # END SOLUTION\n" \
          "    # BEGIN SOLUTION B\n    pass\n    # END SOLUTION\n"  # fmt: skip
    with pytest.raises(SpliceError, match="holds regions of both A and B"):
        task_functions(two, "m.py")


def test_the_submission_is_the_base_and_other_tasks_come_from_the_reference():
    student = strip_solutions(REFERENCE).replace(
        'raise NotImplementedError("T3: write your solution here")', "return helper(x) - 1 + x"
    )
    student += "\n\ndef my_helper():\n    return 42\n"
    out = splice(REFERENCE, student, {"T3"}, "m.py")
    assert "return helper(x) - 1 + x" in out.text  # theirs
    assert "self.w * self.w" in out.text and "math.sqrt" in out.text  # the others' reference
    assert "def my_helper" in out.text  # their helpers stay
    ast.parse(out.text)
    line = out.text.splitlines().index("    return helper(x) - 1 + x") + 1
    kind, n = out.origin[line - 1]
    assert kind == "submitted" and student.splitlines()[n - 1].strip() == "return helper(x) - 1 + x"
    ref_line = out.text.splitlines().index("        self.w = math.sqrt(value)") + 1
    assert out.origin[ref_line - 1][0] == "reference"


def test_a_file_without_a_kept_task_is_the_reference():
    out = splice(REFERENCE, "this is not python", {"other"}, "m.py")
    assert out.text == REFERENCE and {k for k, _ in out.origin} == {"reference"}


def test_reindented_submission():
    ref = "class A:\n    def f(self):\n        # BEGIN SOLUTION T\n        return 1\n" \
          "        # END SOLUTION\n\n    def g(self):\n        # BEGIN SOLUTION U\n" \
          "        return 2\n        # END SOLUTION\n"  # fmt: skip
    student = "class A:\n  def f(self):\n    return 10\n\n  def g(self):\n    return 20\n"
    out = splice(ref, student, {"T"}, "m.py")
    namespace: dict = {}
    exec(compile(out.text, "m.py", "exec"), namespace)
    a = namespace["A"]()
    assert (a.f(), a.g()) == (10, 2)


def test_a_missing_function_of_another_task_falls_back_to_the_reference_base():
    student = strip_solutions(REFERENCE).replace(
        'raise NotImplementedError("T3: write your solution here")', "return 3 * x"
    )
    setter = "    @area.setter\n    def area(self, value):"
    student = student.replace(setter, "    def gone(self, v):")
    out = splice(REFERENCE, student, {"T3"}, "m.py")
    assert "return 3 * x" in out.text and "math.sqrt" in out.text and "def gone" not in out.text
    with pytest.raises(MissingFunction, match="has no function twice"):
        splice(REFERENCE, "def other():\n    pass\n", {"T3"}, "m.py")


def test_a_submission_that_does_not_parse():
    with pytest.raises(SubmittedSyntaxError) as info:
        splice(REFERENCE, "def twice(x):\n    return (\n", {"T3"}, "m.py")
    assert info.value.filename == "m.py" and info.value.lineno is not None
    with pytest.raises(SubmittedSyntaxError):
        splice(REFERENCE, "x = 1\0\n", {"T3"}, "m.py")


def test_every_region_of_the_library_is_one_task_in_one_function():
    """The real library: each region sits in a function holding only its task."""
    from pathlib import Path

    import tinygrad_edu
    from tinygrad_course.grading.student import has_solution_markers

    root = Path(tinygrad_edu.__file__).resolve().parent  # the library: its solution regions
    found = {}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if has_solution_markers(text):
            for task, names in task_functions(text, str(path)).items():
                found.setdefault(task, []).extend(names)
    if not found:
        pytest.skip("a student edition: no solution regions")
    assert len(found) >= 10
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not has_solution_markers(text):
            continue
        tasks = set(task_functions(text))
        for task in tasks:  # the starter code for task, the reference for the others
            out = splice(text, strip_solutions(text), {task}, str(path)).text
            assert f'"{task}: write your solution here"' in out, (path, task)
            others = [t for t in tasks - {task} if f'"{t}: write your solution' in out]
            assert not others, (path, task, others)
            ast.parse(out)


def test_a_file_indented_with_tabs_keeps_its_tabs_when_reference_code_goes_in():
    """A correct file indented with tabs lost 9 points: the reference's space-indented
    methods went in with one space per tab, and the result did not parse (#26)."""
    mine = REFERENCE.replace("    ", "\t")
    for task in ("T1", "T2"):
        out = splice(REFERENCE, mine, keep={task})
        tree = ast.parse(out.text)  # no TabError, no IndentationError
        box = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Box")
        assert [f.name for f in box.body if isinstance(f, ast.FunctionDef)][:3] == [
            "__init__", "area", "area"]  # fmt: skip
        came = {line.strip() for line, (kind, _) in zip(out.text.splitlines(), out.origin)
                if kind == "reference" and line.strip()}  # fmt: skip
        assert came, "the other task's function comes from the reference"
        for line in out.text.splitlines():
            if line.strip() in came and line.strip().startswith("def ") and line[0].isspace():
                assert line.startswith("\t") and not line.startswith("\t ")  # a method
    ns: dict = {}
    exec(compile(splice(REFERENCE, mine, keep={"T1"}).text, "box.py", "exec"), ns)  # noqa: S102
    assert ns["Box"](3).area == 9
