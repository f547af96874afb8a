"""``tinygrad-edu grade [PATHS ...] [--gradescope PATH] [-n N] [-k EXPR]``: run graded tests.

Runs pytest on the given paths (default ``tests/assignments``) with the points plugin
(:mod:`tinygrad_course.grading.pytest_plugin`), which prints earned/max points per task at the end
and, with ``--gradescope PATH``, writes Gradescope's ``results.json``. The exit code is
pytest's: 0 when every test passed, 1 when some failed.
"""

from __future__ import annotations

__all__ = ["add_arguments", "run", "pytest_args"]

PLUGIN = "tinygrad_course.grading.pytest_plugin"


def add_arguments(parser) -> None:
    parser.add_argument(
        "paths", nargs="*", default=["tests/assignments"], help="test files or folders"
    )
    parser.add_argument("--gradescope", metavar="PATH", help="write Gradescope's results.json")
    parser.add_argument("-n", "--workers", type=int, default=0, help="run on N processes (xdist)")
    parser.add_argument("-k", dest="keyword", help="only tests matching this pytest expression")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every test")


def pytest_args(args) -> list[str]:
    """The pytest command line for these arguments."""
    # The entry point may or may not be installed (or autoloading may be off): block it by
    # name and load the module explicitly, so the plugin is there exactly once.
    argv = ["-p", "no:tinygrad_edu_grading", "-p", PLUGIN, "-p", "no:cacheprovider"]
    # the plugin and the library are imported before pytest could rewrite their asserts (they
    # assert nothing a test relies on): its three warnings on every run say nothing useful
    argv += ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
    argv.append("-v" if args.verbose else "-q")
    if args.gradescope:
        argv += ["--gradescope", args.gradescope]
    if args.workers:
        argv += ["-p", "xdist", "-n", str(args.workers)]
    if args.keyword:
        argv += ["-k", args.keyword]
    return argv + list(args.paths)


def run(args) -> int:
    import pytest

    return int(pytest.main(pytest_args(args)))
