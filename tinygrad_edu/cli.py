"""The ``tinygrad-edu`` command: ``demo``, ``render``, ``grade``, ``grade-batch``,
``make-student``, ``gradescope-zip``.

Each subcommand lives with its concept; this file only dispatches. A subcommand module
exposes ``add_arguments(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["main"]

# name -> (module, one-line help)
SUBCOMMANDS = {
    "demo": ("tinygrad_edu.demo", "draw the seed example, compare engines, train on digits"),
    "render": ("tinygrad_edu.viz.render", "draw an example graph in both forms and step backward"),
    "grade": ("tinygrad_edu.grading.cli", "run graded tests and report points"),
    "grade-batch": ("tinygrad_edu.grading.batch", "grade a folder of submissions, in sandboxes"),
    "make-student": ("tinygrad_edu.lessons.edition", "write a student edition of a repository"),
    "gradescope-zip": ("tinygrad_edu.grading.gradescope", "build a Gradescope autograder zip"),
}


def main(argv: list[str] | None = None) -> int:
    summary = __doc__.split("\n\n")[0].replace("\n", " ")  # the docstring's first paragraph
    parser = argparse.ArgumentParser(prog="tinygrad-edu", description=summary)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        p.set_defaults(_module=module)
        try:
            importlib.import_module(module).add_arguments(p)
        except ImportError:
            p.set_defaults(_missing=True)
    args = parser.parse_args(argv)
    if getattr(args, "_missing", False):
        parser.error(f"'{args.command}' is not available in this installation")
    return int(importlib.import_module(args._module).run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
