"""The ``tinygrad-edu`` command: ``demo``, ``render``, ``grade``, ``grade-batch``,
``make-student``, ``gradescope-zip``.

The console script runs :func:`main` here: it registers the course's subcommands with the
library's parser (:func:`tinygrad_edu.cli.register`) and hands over to it, so ``render`` and
any other library command stay the library's. The course imports the library, never the other
way round. A subcommand module exposes ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import sys

from tinygrad_edu import cli as library_cli

__all__ = ["main", "COMMANDS"]

# name -> (module, one-line help)
COMMANDS = {
    "demo": ("tinygrad_course.demo", "draw the seed example, compare engines, train on digits"),
    "grade": ("tinygrad_course.grading.cli", "run graded tests and report points"),
    "grade-batch": ("tinygrad_course.grading.batch", "grade a folder of submissions, in sandboxes"),
    "make-student": ("tinygrad_course.lessons.edition", "write a student edition of a repository"),
    "gradescope-zip": ("tinygrad_course.grading.gradescope", "build a Gradescope autograder zip"),
}


def main(argv: list[str] | None = None) -> int:
    """``tinygrad-edu``: the library's commands and the course's."""
    for name, (module, help_text) in COMMANDS.items():
        library_cli.register(name, module, help_text)
    summary = __doc__.split("\n\n")[0].replace("\n", " ")  # the docstring's first paragraph
    return library_cli.main(argv, description=summary, epilog=None)


if __name__ == "__main__":
    sys.exit(main())
