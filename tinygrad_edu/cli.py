"""The library's command line: ``python -m tinygrad_edu render``.

The library has one command of its own, ``render``. Packages built on it add theirs with
:func:`register` before calling :func:`main`: the ``tinygrad-edu`` console script is the
course's entry point, which registers its commands (``demo``, ``grade``, ``make-student`` ...)
and then runs this parser. The library never looks for them itself, so
``python -m tinygrad_edu`` knows only the library's commands.

This file only dispatches: a command module exposes ``add_arguments(parser)`` and
``run(args) -> int``, and is imported by name when the parser is built.
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["main", "register", "SUBCOMMANDS"]

# name -> (module, one-line help); register() adds to it
SUBCOMMANDS = {
    "render": ("tinygrad_edu.viz.render_command",
               "draw an example graph in both forms and step backward"),
}

_EPILOG = ("These are the library's own commands. Commands that other packages register (the "
           "course's demo, grade, make-student ...) come with the tinygrad-edu console script.")


def register(name: str, module: str, help_text: str) -> None:
    """Add the subcommand ``name``, implemented by ``module`` (``add_arguments``/``run``).

    Registering a name again replaces it, so a package may register on every start."""
    SUBCOMMANDS[name] = (module, help_text)


def main(argv: list[str] | None = None, *, description: str | None = None,
         epilog: str | None = _EPILOG) -> int:  # fmt: skip
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the chosen subcommand."""
    if description is None:
        description = __doc__.split("\n\n")[0].replace("\n", " ")  # the first paragraph
    parser = argparse.ArgumentParser(prog="tinygrad-edu", description=description, epilog=epilog)
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
