"""The page cache as a channel between children, and how it is emptied
(see :mod:`tinygrad_course.grading.sandbox`).

Every file a child reads leaves its pages in the kernel's page cache, and any later process
can tell which pages are there without reading them (``preadv2`` with ``RWF_NOWAIT`` fails on
a page that is not cached; ``mincore`` on a mapping). A child that runs another task's
reference code warms pages of the modules, and of the library code, that the reference uses;
the next child, graded on that task, reads the pattern back. The working copies are fresh
files for each child, but the interpreter, the standard library and numpy are shared.

Before each child starts, :func:`evict` asks the kernel to drop the cached pages of every
file the child can read code from (``POSIX_FADV_DONTNEED``): what is left cached is what
the grader itself has mapped, the same whatever earlier children ran.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess

__all__ = ["code_paths", "evict"]

_PATHS: dict[str, tuple[str, ...]] = {}


_SHARED = ("numpy", "numpy.libs")
# below those: test suites, other environments' packages, tools no probe imports
_SKIP = {"test", "tests", "site-packages", "dist-packages", "idlelib", "tkinter", "turtledemo",
         "lib2to3", "ensurepip"}  # what the library's code runs on in every child


def code_paths(python: str) -> tuple[str, ...]:
    """The shared code a child of ``python -I`` runs: its standard library and numpy.

    Not the whole of site-packages: an instructor's environment may hold a hundred thousand
    files (advising each takes seconds per child), and the graded library depends on numpy
    alone (``setup.sh`` installs nothing else in the autograder's environment)."""
    if python not in _PATHS:
        entries: list[str] = []
        with contextlib.suppress(OSError, subprocess.SubprocessError, ValueError):
            done = subprocess.run(
                [python, "-I", "-c", "import json, sys; print(json.dumps(sys.path))"],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            entries = [p for p in json.loads(done.stdout) if p and os.path.isdir(p)]
        found = []
        for entry in entries:
            if os.path.basename(entry) in ("site-packages", "dist-packages"):
                found += [os.path.join(entry, n) for n in _SHARED
                          if os.path.isdir(os.path.join(entry, n))]  # fmt: skip
            else:
                found.append(entry)
        _PATHS[python] = tuple(found)
    return _PATHS[python]


def evict(paths) -> int:
    """Drop the cached pages of every regular file under ``paths`` (links are not
    followed); returns how many files were advised. Errors are skipped: a file we cannot
    open is one the child cannot read either, or one that is gone."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return 0
    count, seen = 0, set()
    for top in paths:
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d not in _SKIP and not d.startswith("config-")]
            for name in files:
                path = os.path.join(folder, name)
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                except OSError:
                    continue
                try:
                    st = os.fstat(fd)
                    if (st.st_dev, st.st_ino) not in seen and st.st_size:
                        seen.add((st.st_dev, st.st_ino))
                        advise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                        count += 1
                except OSError:
                    pass
                finally:
                    os.close(fd)
    return count
