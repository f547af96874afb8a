"""``tinygrad-edu make-student``: the student edition (``grading.student``) with each lesson's
outputs recorded (``lessons.recorded``), so every lesson of the edition runs to its end before
any assignment is written. It lives in the lessons layer because it uses both: grading, below,
strips the solutions and is handed the recording function.

Recording runs every lesson in a Jupyter kernel, so before anything is written the command
checks that what the lessons need is installed (:func:`missing`): the Python packages of the
``lessons`` extra and Graphviz's ``dot`` program. What is missing is named with the command
that installs it, and nothing is written."""

from __future__ import annotations

import functools
import importlib.util
import shutil

from ..grading import student
from .recorded import RecordingError, record_lessons

__all__ = ["LESSON_MODULES", "OPTIONAL_MODULES", "missing", "add_arguments", "run"]


def add_arguments(parser) -> None:
    student.add_arguments(parser)
    parser.add_argument(
        "--jobs", type=int, default=None, metavar="N",
        help="lessons recorded at a time (default: the CPU count, at most 4)",
    )  # fmt: skip


# module -> what provides it: what running the lessons in a kernel needs (the ``lessons``
# extra in pyproject.toml): the kernel and the notebook runner, and what the lessons import
LESSON_MODULES = {
    "nbformat": "nbformat",
    "nbclient": "nbclient",
    "ipykernel": "ipykernel",
    "IPython": "ipython",
    "ipywidgets": "ipywidgets",
    "matplotlib": "matplotlib",
    "graphviz": "graphviz",
    "PIL": "pillow",
    "array_api_strict": "array-api-strict",
}
INSTALL = 'pip install -e ".[lessons]"'
TORCH_INSTALL = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
# module -> (the lessons that show more with it, its install): recorded without it, those
# lessons say that it is missing, as they will on a student's machine without it
OPTIONAL_MODULES = {
    "torch": ("12-14 and 16", TORCH_INSTALL),
    "onnxruntime": ("9", 'pip install -e ".[onnx]"'),
}
DOT_INSTALL = ("sudo apt-get install graphviz (Debian/Ubuntu), brew install graphviz (macOS) "
               "or conda install graphviz")  # fmt: skip


def missing(record: bool = True) -> list[str]:
    """What ``make-student`` needs and does not find, one line each with the command that
    installs it (empty: all there). Without ``record`` only ``nbformat`` is needed (the
    notebooks are stripped, not run)."""
    need = LESSON_MODULES if record else {"nbformat": "nbformat"}
    absent = [pip for module, pip in need.items() if importlib.util.find_spec(module) is None]
    problems = []
    if absent:
        problems.append(f"Python packages {', '.join(absent)}: {INSTALL} (the lessons extra, "
                        "in this repository's folder)")  # fmt: skip
    if record and shutil.which("dot") is None:
        problems.append(f"Graphviz's `dot` program, which draws the lessons' graphs: {DOT_INSTALL}")
    return problems


def run(args) -> int:
    """``make-student``: check what it needs, strip, then record the lessons unless
    ``--no-record``."""
    record = not getattr(args, "no_record", False)
    problems = missing(record)
    if problems:
        what = "running the lessons to record their outputs" if record else "stripping notebooks"
        print(f"make-student: nothing written: {what} needs")
        for line in problems:
            print(f"  - {line}")
        if record:
            print("  (or pass --no-record: the edition's lessons then stop at the first cell "
                  "that needs an unwritten assignment)")  # fmt: skip
        return 1
    if record:
        for module, (lessons, hint) in OPTIONAL_MODULES.items():
            if importlib.util.find_spec(module) is None:
                print(f"note: {module} is not installed, so lessons {lessons} are recorded "
                      f"without what needs it ({hint})")  # fmt: skip
    args.record = functools.partial(record_lessons, jobs=getattr(args, "jobs", None))
    if not record:
        args.record = None
    try:
        return student.run(args)
    except RecordingError as e:  # the edition is not written (nor half written)
        print(f"make-student: nothing written: {e}")
        return 1
