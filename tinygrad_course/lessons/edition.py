"""``tinygrad-edu make-student``: the student edition (``grading.student``) with each lesson's
outputs recorded (``lessons.recorded``), so every lesson of the edition runs to its end before
any assignment is written. It lives in the lessons layer because it uses both: grading, below,
strips the solutions and is handed the recording function."""

from __future__ import annotations

from ..grading import student
from .recorded import record_lessons

__all__ = ["add_arguments", "run"]

add_arguments = student.add_arguments


def run(args) -> int:
    """``make-student``: strip, then record the lessons unless ``--no-record``."""
    args.record = None if getattr(args, "no_record", False) else record_lessons
    return student.run(args)
