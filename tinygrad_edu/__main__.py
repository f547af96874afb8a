"""``python -m tinygrad_edu``: the library's own commands (see :mod:`tinygrad_edu.cli`); the
``tinygrad-edu`` console script adds the course's."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
