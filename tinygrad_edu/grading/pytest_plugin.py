"""A pytest plugin that scores tests by points and writes Gradescope's ``results.json``.

It is registered through the ``pytest11`` entry point, so it is active in every pytest run
where ``tinygrad_edu`` is installed, but it stays silent unless a test carries a ``points`` or
``task`` marker or ``--gradescope`` is given.

Markers (mark a test function, a class, or a whole module with ``pytestmark = [...]``):

- ``@pytest.mark.points(n)``: the test is worth ``n`` points (a number >= 0), earned only
  when setup, call and teardown all pass. Each collected test counts: a parametrized test with
  ``points(2)`` and three cases is worth 6. ``points(n, visibility="after_published")``
  sets Gradescope's visibility (``visible``, the default, ``hidden``, ``after_due_date`` or
  ``after_published``).
- ``@pytest.mark.task("A1.2")``: the assignment task the test belongs to (tests without one
  are grouped under ``other``).
- ``@pytest.mark.hidden``: shorthand for ``visibility="after_published"``: the student sees
  the result only once the grades are published.

Example::

    import pytest

    pytestmark = pytest.mark.task("A1.2")        # every test in this file

    @pytest.mark.points(2)
    def test_mul_backward():
        ...

    @pytest.mark.hidden
    @pytest.mark.points(3)
    def test_mul_backward_broadcast():
        ...

Options: ``--gradescope PATH`` writes ``results.json`` (top-level ``score``, ``max_score``,
``execution_time``, ``output`` and a ``tests`` list with ``name``, ``score``, ``max_score``,
``status``, ``output`` and ``visibility``). At the end of a run with points, the terminal shows
earned/max points per task. A test skipped before it runs (a ``skipif`` marker, e.g. a GPU test
on a machine without one) counts for neither score nor maximum; a skip raised while the test
runs counts as lost points. The plugin works under pytest-xdist (``-n 2``): workers attach each
test's points to its reports, and only the controller adds them up and writes the file.
"""

from __future__ import annotations

import json
import os
import re
import time

import pytest

__all__ = [
    "pytest_addoption",
    "pytest_configure",
    "pytest_collection_modifyitems",
    "results_json",
    "write_results",
    "VISIBILITIES",
    "DEFAULT_TASK",
]

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
DEFAULT_TASK = "other"
_KEY = "tinygrad_edu_grading"  # user_properties key: xdist forwards these with each report
_OUTPUT_LIMIT = 4000  # characters of failure text per test in results.json


def pytest_addoption(parser) -> None:
    group = parser.getgroup("tinygrad_edu grading", "points per task, Gradescope results")
    group.addoption(
        "--gradescope",
        metavar="PATH",
        default=None,
        help="write Gradescope's results.json to PATH (scores from @pytest.mark.points)",
    )


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "points(n, visibility='visible'): the test is worth n points (tinygrad_edu grading)",
    )
    config.addinivalue_line(
        "markers", "task(name): the assignment task the test belongs to, e.g. task('A1.2')"
    )
    config.addinivalue_line(
        "markers", "hidden: Gradescope shows the result only after publishing (points tests)"
    )
    config.addinivalue_line(
        "markers", "gpu: needs CuPy and a CUDA GPU (graded suites skip it without one)"
    )
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        config.pluginmanager.register(_Scoreboard(config), "tinygrad_edu_grading_scoreboard")


def _grading_info(item) -> dict | None:
    """Points, task and visibility of one test from its markers (None when it has none)."""
    points_mark = item.get_closest_marker("points")
    task_mark = item.get_closest_marker("task")
    if points_mark is None and task_mark is None:
        return None
    where = item.nodeid
    points, visibility = 0, "visible"
    if points_mark is not None:
        args, kwargs = points_mark.args, dict(points_mark.kwargs)
        if len(args) != 1 or isinstance(args[0], bool) or not isinstance(args[0], int | float):
            raise pytest.UsageError(
                f"{where}: @pytest.mark.points needs one number, e.g. points(2); got {args}"
            )
        if args[0] < 0:
            raise pytest.UsageError(f"{where}: points must be >= 0, got {args[0]}")
        points = args[0]
        visibility = kwargs.pop("visibility", visibility)
        if kwargs:
            raise pytest.UsageError(
                f"{where}: unknown points() argument(s) {sorted(kwargs)}; only visibility="
            )
    if item.get_closest_marker("hidden") is not None:
        visibility = "after_published"
    if visibility not in VISIBILITIES:
        raise pytest.UsageError(
            f"{where}: visibility {visibility!r} is not one of {', '.join(VISIBILITIES)}"
        )
    task = DEFAULT_TASK
    if task_mark is not None:
        if len(task_mark.args) != 1 or not isinstance(task_mark.args[0], str):
            raise pytest.UsageError(f"{where}: @pytest.mark.task needs one name, e.g. task('A1.2')")
        task = task_mark.args[0]
    return {"points": points, "task": task, "visibility": visibility}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    # Runs where tests are collected (each xdist worker collects the same list in the same
    # order), after other plugins reorder, so `order` is the same on every worker.
    for order, item in enumerate(items):
        info = _grading_info(item)
        if info is not None:
            info["order"] = order
            item.user_properties.append((_KEY, info))


def _natural_key(text: str):
    """'A1.2' < 'A1.10': compare digit runs as numbers."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", text)]  # fmt: skip


def _number(x):
    x = round(float(x), 6)
    return int(x) if x == int(x) else x


class _Scoreboard:
    """Collects the reports of graded tests on the controller and reports the totals."""

    def __init__(self, config) -> None:
        self.config = config
        self.tests: dict[str, dict] = {}  # nodeid -> record
        self.collect_errors: list[str] = []
        self.start = time.time()

    def pytest_sessionstart(self, session) -> None:
        self.start = time.time()

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.collect_errors.append(f"{report.nodeid or '<session>'}\n{report.longreprtext}")

    def pytest_runtest_logreport(self, report) -> None:
        info = next((v for k, v in report.user_properties if k == _KEY), None)
        if info is None:
            return
        rec = self.tests.setdefault(
            report.nodeid, {**info, "nodeid": report.nodeid, "ok": True, "output": []}
        )
        if report.failed or (report.skipped and report.when != "teardown"):
            rec["ok"] = False
            if report.skipped:
                reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
                rec["output"].append(f"skipped: {reason}")
                # A skip decided before the test runs (a skipif marker: no GPU on this
                # machine) leaves the test out of max_score. A skip raised while the test
                # runs is code under test dodging it: that still counts as lost points.
                rec["excluded"] = report.when == "setup"
            else:
                rec["output"].append(f"[{report.when}] {report.longreprtext}")
        rec["duration"] = rec.get("duration", 0.0) + report.duration

    def records(self) -> list[dict]:
        return sorted(self.tests.values(), key=lambda r: (r["order"], r["nodeid"]))

    def table(self) -> list[str]:
        """Rows 'task  tests  passed  points' in natural task order, then the total."""
        tasks: dict[str, list] = {}
        for r in self.records():
            row = tasks.setdefault(r["task"], [0, 0, 0.0, 0.0])
            row[0] += 1
            row[1] += r["ok"]
            row[2] += r["points"] if r["ok"] else 0
            row[3] += 0 if r.get("excluded") else r["points"]
        rows = [(t, *tasks[t]) for t in sorted(tasks, key=_natural_key)]
        total = [sum(col) for col in zip(*(r[1:] for r in rows))] if rows else [0, 0, 0, 0]
        rows.append(("total", *total))
        width = max(len("task"), *(len(r[0]) for r in rows))
        lines = [f"{'task':<{width}}  {'tests':>5}  {'passed':>6}  {'points':>13}"]
        for name, n, ok, earned, maximum in rows:
            if name == "total":
                lines.append("-" * len(lines[0]))
            score = f"{_number(earned)} / {_number(maximum)}"
            lines.append(f"{name:<{width}}  {n:>5}  {ok:>6}  {score:>13}")
        return lines

    def pytest_terminal_summary(self, terminalreporter) -> None:
        path = self.config.getoption("gradescope")
        if any(r["points"] for r in self.tests.values()):
            terminalreporter.write_sep("=", "points per task")
            for line in self.table():
                terminalreporter.write_line(line)
        if path:
            terminalreporter.write_line(f"Gradescope results written to {path}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus) -> None:
        # tryfirst: the file exists before the terminal summary names it
        path = self.config.getoption("gradescope")
        if path:
            write_results(path, self.records(), self.collect_errors, time.time() - self.start,
                          self.table())  # fmt: skip


def results_json(records, collect_errors=(), execution_time=0.0, table=()) -> dict:
    """Gradescope's results dictionary for the graded tests ``records``."""
    tests = []
    for r in records:
        output = "\n".join(r["output"])
        if len(output) > _OUTPUT_LIMIT:
            output = output[:_OUTPUT_LIMIT] + f"\n... ({len(output) - _OUTPUT_LIMIT} more chars)"
        tests.append(
            {
                "name": f"{r['task']}: {r['nodeid']}",
                "score": _number(r["points"] if r["ok"] else 0),
                "max_score": _number(0 if r.get("excluded") else r["points"]),
                "status": "passed" if r["ok"] else "failed",
                "output": output,
                "visibility": r["visibility"],
            }
        )
    summary = "\n".join(table)
    if collect_errors:
        errors = "\n\n".join(collect_errors)[:_OUTPUT_LIMIT]
        summary += "\n\nSome tests could not be collected (they score 0):\n" + errors
    return {
        "score": _number(sum(t["score"] for t in tests)),
        "max_score": _number(sum(t["max_score"] for t in tests)),
        "execution_time": round(execution_time, 3),
        "output": summary,
        "tests": tests,
    }


def write_results(path, records, collect_errors=(), execution_time=0.0, table=()) -> None:
    """Write :func:`results_json` to ``path`` (creating its folder)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    data = results_json(records, collect_errors, execution_time, table)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
