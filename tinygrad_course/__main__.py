"""``python -m tinygrad_course``: the ``tinygrad-edu`` command (see :mod:`tinygrad_course.cli`)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
