"""``python -m tinygrad_edu``: the ``tinygrad-edu`` command (see :mod:`tinygrad_edu.cli`)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
