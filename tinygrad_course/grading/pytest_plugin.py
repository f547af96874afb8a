"""A pytest plugin that scores tests by points and writes Gradescope's ``results.json``.

It is registered through the ``pytest11`` entry point, so it is active in every pytest run
where ``tinygrad_edu`` is installed, but it stays silent unless a test carries a ``points`` or
``task`` marker or ``--gradescope`` is given.

Markers (mark a test function, a class, or a whole module with ``pytestmark = [...]``):

- ``@pytest.mark.points(n)``: the test is worth ``n`` points (a number >= 0), earned only
  when setup, call and teardown all pass. Each collected test counts: a parametrized test with
  ``points(2)`` and three cases is worth 6. ``points(n, visibility="after_published")``
  sets Gradescope's visibility (``visible``, the default, ``hidden``, ``after_due_date`` or
  ``after_published``); ``points(n, timeout=60)`` gives each of the test's probe calls 60
  seconds in the autograder (instead of its default).
- ``@pytest.mark.task("A1.2")``: the assignment task the test belongs to (tests without one
  are grouped under ``other``). ``task("A3.5", uses=("A3.1", "A3.4"))``: in the autograder the
  test runs the student's code for those tasks and the reference for everything else (by
  default a task uses its own code, and a task with no solution region of its own, like the
  tests of given code, runs on the reference alone).
- ``@pytest.mark.hidden``: shorthand for ``visibility="after_published"``: the student sees
  the result only once the grades are published.

A test's name in ``results.json`` is its task and the first line of its docstring, with the
parameters of a parametrized case filled in (``"{op}.vjp: broadcasting"`` gives
``A1.3 mul.vjp: broadcasting``); without a docstring, its function name.

Fixtures, for graded tests written as probe and check (:mod:`tinygrad_course.grading.probe`):

- ``run(probe, **kwargs)``: run a probe on the code under test and get its plain data back
  (in this process at home; in the sandbox in the autograder).
- ``reference(probe, **kwargs)``: the same probe on the reference solution, run by the
  grader. Only hidden tests may use it: visible tests also run at home, without a reference.

Options: ``--gradescope PATH`` writes ``results.json`` (:func:`results_json`). At the end of a
run with points, the terminal shows earned/max points per task. A test skipped before it
runs (a ``skipif`` marker, e.g. a GPU test on a machine without one) is left out of
``results.json`` and out of both score and maximum; a skip raised while the test runs counts
as lost points. The plugin works under pytest-xdist (``-n 2``): workers attach each test's
points to its reports, and only the controller adds them up and writes the file.
"""

from __future__ import annotations

import json
import os
import re
import time

import pytest

from .probe import SubmissionError, call_in_process, probe_name, roundtrip

__all__ = [
    "pytest_addoption",
    "pytest_configure",
    "pytest_collection_modifyitems",
    "run",
    "reference",
    "grading_info",
    "results_json",
    "write_results",
    "VISIBILITIES",
    "DEFAULT_TASK",
    "GRADER",
]

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
DEFAULT_TASK = "other"
GRADER = "tinygrad_edu_grader"  # the plugin name under which the autograder registers itself
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
        "points(n, visibility='visible', timeout=None): the test is worth n points "
        "(tinygrad_edu grading)",
    )
    config.addinivalue_line(
        "markers",
        "task(name, uses=None): the assignment task the test belongs to, e.g. task('A1.2')",
    )
    config.addinivalue_line(
        "markers", "hidden: Gradescope shows the result only after publishing (points tests)"
    )
    config.addinivalue_line(
        "markers", "gpu: needs CuPy and a CUDA GPU (graded suites skip it without one)"
    )
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        config.pluginmanager.register(_Scoreboard(config), "tinygrad_edu_grading_scoreboard")


def _title(item) -> str:
    """The first docstring line, formatted with the case's parameters, or the test's name."""
    fn = getattr(item, "function", None)
    doc = (getattr(fn, "__doc__", None) or "").strip().splitlines()
    params = dict(getattr(getattr(item, "callspec", None), "params", {}))
    if doc:
        try:
            return doc[0].strip().format(**params)
        except (KeyError, IndexError, ValueError, AttributeError):
            return doc[0].strip()
    name = getattr(item, "originalname", None) or item.name.split("[")[0]
    name = name.removeprefix("test_").replace("_", " ")
    case = getattr(getattr(item, "callspec", None), "id", None)
    return f"{name} [{case}]" if case else name


def grading_info(item) -> dict | None:
    """Points, task, visibility, timeout, uses and title of one test (None when ungraded)."""
    points_mark = item.get_closest_marker("points")
    task_mark = item.get_closest_marker("task")
    if points_mark is None and task_mark is None:
        return None
    where = item.nodeid
    points, visibility, timeout = 0, "visible", None
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
        timeout = kwargs.pop("timeout", None)
        if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
            raise pytest.UsageError(f"{where}: points(timeout=...) must be seconds > 0")
        if kwargs:
            raise pytest.UsageError(
                f"{where}: unknown points() argument(s) {sorted(kwargs)}; only visibility= "
                "and timeout="
            )
    if item.get_closest_marker("hidden") is not None:
        visibility = "after_published"
    if visibility not in VISIBILITIES:
        raise pytest.UsageError(
            f"{where}: visibility {visibility!r} is not one of {', '.join(VISIBILITIES)}"
        )
    task, uses = DEFAULT_TASK, None
    if task_mark is not None:
        if len(task_mark.args) != 1 or not isinstance(task_mark.args[0], str):
            raise pytest.UsageError(f"{where}: @pytest.mark.task needs one name, e.g. task('A1.2')")
        task = task_mark.args[0]
        extra = dict(task_mark.kwargs)
        uses = extra.pop("uses", None)
        if extra:
            raise pytest.UsageError(f"{where}: unknown task() argument(s) {sorted(extra)}")
        if uses is not None:
            if isinstance(uses, str) or not all(isinstance(u, str) for u in uses):
                raise pytest.UsageError(f"{where}: task(uses=...) takes a tuple of task names")
            uses = sorted(set(uses))
    return {
        "points": points,
        "task": task,
        "visibility": visibility,
        "timeout": timeout,
        "uses": uses,
        "title": _title(item),
    }


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    # Runs where tests are collected (each xdist worker collects the same list in the same
    # order), after other plugins reorder, so `order` is the same on every worker.
    infos = []
    for order, item in enumerate(items):
        info = grading_info(item)
        if info is not None:
            info["order"] = order
            item.user_properties.append((_KEY, info))
        infos.append(info)
    grader = config.pluginmanager.get_plugin(GRADER)
    if grader is not None:
        # NOTE [One working copy at a time]: the grader runs the tests of one set of tasks
        # after another, each set's visible tests before its hidden ones, so a hidden test's
        # arguments reach a child only after every visible result of that child is recorded;
        # between two sets, the sandbox is swept (nothing carries over).
        keys = {id(item): grader.sort_key(info) for item, info in zip(items, infos)}
        items.sort(key=lambda item: keys[id(item)])


def _info(item) -> dict | None:
    return next((v for k, v in item.user_properties if k == _KEY), None)


#: the reason of a test that, at home, reached the stub of a task it does not grade
WAITS = "waits for"
_STUB = re.compile(r"(\S+): write your solution here(\n|$)")


def _stub_task(error: BaseException | None) -> str | None:
    """The task whose unwritten stub raised ``error`` or an error in its chain, else None."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        match = _STUB.match(str(error)) if isinstance(error, NotImplementedError) else None
        if match:
            return match.group(1)
        error = error.__cause__ or error.__context__
    return None


def waits_for(error: BaseException, info: dict) -> str | None:
    """At home: the other task whose stub stopped a test's probe (``A1.6`` for a test of
    A2.2), or None when the error is the tested code's own.

    The autograder grades each task in isolation: the student's code for the test's task
    (and its ``uses``), the reference for every other task. At home there is no reference, so
    a test that reaches another task's stub is set aside, out of score and maximum, naming the
    task it waits for, instead of failing on code that is not the one it grades."""
    task = _stub_task(error)
    own = {info.get("task"), *(info.get("uses") or ())}
    return None if task is None or task in own else task


@pytest.fixture
def run(request):
    """``run(probe, **kwargs)``: the probe's plain-data answer from the code under test."""
    grader = request.config.pluginmanager.get_plugin(GRADER)
    info = _info(request.node) or {}

    def call(probe, **kwargs):
        if grader is not None:
            return grader.call(request.node, info, probe, kwargs)
        try:
            return call_in_process(probe, kwargs)
        except SubmissionError as e:
            other = waits_for(e.__cause__, info)
            if other is None:
                raise
            pytest.skip(f"{WAITS} {other}, which is not written yet: the autograder grades "
                        f"{info.get('task', 'this task')} with the reference {other}; write "
                        f"{other} to grade it here")  # fmt: skip

    return call


@pytest.fixture
def reference(request):
    """``reference(probe, **kwargs)``: the probe's answer from the reference (hidden tests)."""
    info = _info(request.node) or {}

    def call(probe, **kwargs):
        if info.get("visibility", "visible") == "visible":
            raise RuntimeError(
                f"{request.node.nodeid}: reference() is for hidden tests; a visible test also "
                "runs at home, where there is no reference: check behaviour instead"
            )
        probe_name(probe)
        return roundtrip(probe(**roundtrip(kwargs)))

    return call


def _natural_key(text: str):
    """'A1.2' < 'A1.10': compare digit runs as numbers."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", text)]  # fmt: skip


def _number(x):
    x = round(float(x), 6)
    return int(x) if x == int(x) else x


def _failure_text(report) -> str:
    """The message of a failure: the exception's own text, not the whole traceback."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None and crash.message else report.longreprtext
    text = re.sub(r"^[\w.]*SubmissionError: ", "", text)  # its message speaks for itself
    # pytest's advice for a terminal ("Use -v to get more diff") means nothing in Gradescope
    text = re.sub(r"\n *(Use -v to get more diff|Use -vv to get more diff)[^\n]*", "", text)
    return re.sub(r"\n *\.\.\.Full output truncated[^\n]*", "", text)


def _hidden_failure_text(report) -> str:
    """What a failed test that is not ``visible`` may say: the kind of difference, never the
    expected values, the reference's data or the check's code (a student who resubmits
    could read an answer table off them). A failure raised by the submitted code itself
    (its exception, reported by the grader) keeps its message: that text is the student's."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None and crash.message else report.longreprtext
    if re.match(r"^[\w.]*SubmissionError: ", text.lstrip()):
        return re.sub(r"^[\w.]*SubmissionError: ", "", text.lstrip())[:_HIDDEN_LIMIT]
    low = text.lower()
    if "shape" in low:
        kind = "the shape of your answer differs from the expected one"
    elif "dtype" in low:
        kind = "the dtype of your answer differs from the expected one"
    elif re.search(r"\bnan\b|\binf\b", low):
        kind = "your answer has NaN or infinite values where the expected one has none, or "\
            "the other way round"  # fmt: skip
    elif report.when != "call":
        kind = "the test could not be set up"
    else:
        kind = "your answer's values differ from the expected ones"
    return f"{kind} (this test's expected values and checks stay hidden)"


_HIDDEN_LIMIT = 500  # characters of a submitted exception's message in a hidden test


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
                # runs is code under test dodging it: that still counts as lost points,
                # except the home run's own: the test reached another task's stub (`run`)
                waits = re.match(rf"(Skipped: )?{WAITS} (\S+),", reason or "")
                rec["excluded"] = report.when == "setup" or waits is not None
                if waits is not None:
                    rec["waits"] = waits.group(2)
            else:
                text = (_failure_text(report) if info.get("visibility", "visible") == "visible"
                        else _hidden_failure_text(report))  # fmt: skip
                rec["output"].append(text if report.when == "call" else f"[{report.when}] {text}")
        rec["duration"] = rec.get("duration", 0.0) + report.duration

    def records(self) -> list[dict]:
        return sorted(self.tests.values(), key=lambda r: (r["order"], r["nodeid"]))

    def table(self) -> list[str]:
        return points_table(self.records())

    def pytest_terminal_summary(self, terminalreporter) -> None:
        path = self.config.getoption("gradescope")
        if any(r["points"] for r in self.tests.values()):
            terminalreporter.write_sep("=", "points per task")
            for line in self.table():
                terminalreporter.write_line(line)
            for line in waiting_lines(self.records()):
                terminalreporter.write_line(line)
        if path:
            terminalreporter.write_line(f"Gradescope results written to {path}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus) -> None:
        # tryfirst: the file exists before the terminal summary names it
        path = self.config.getoption("gradescope")
        if path:
            write_results(path, self.records(), self.collect_errors, time.time() - self.start)


def waiting_lines(records) -> list[str]:
    """What a home run set aside (:func:`waits_for`): which tasks' tests wait for which."""
    waits: dict[str, set] = {}
    for r in records:
        if r.get("waits"):
            waits.setdefault(r["waits"], set()).add(r["task"])
    lines = []
    for other in sorted(waits, key=_natural_key):
        tasks = ", ".join(sorted(waits[other], key=_natural_key))
        count = sum(r.get("waits") == other for r in records)
        lines.append(f"{count} tests of {tasks} wait for {other}, which is not written yet: "
                     f"they count for neither score nor maximum here. The autograder grades "
                     f"each task alone, with the reference {other}; write {other} to grade "
                     "them here.")  # fmt: skip
    return lines


def points_table(records, hidden: bool = True) -> list[str]:
    """Rows 'task  tests  passed  points' in natural task order, then the total.

    With ``hidden=False`` only the tests a student may see now (visibility ``visible``)."""
    tasks: dict[str, list] = {}
    for r in records:
        if not hidden and r["visibility"] != "visible":
            continue
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


def _summary(records, collect_errors) -> str:
    """The student-visible top-level text: visible results only, and what is not shown."""
    counted = [r for r in records if not r.get("excluded")]
    lines = ["Tests you can see now:"] + points_table(counted, hidden=False)
    later = [r for r in counted if r["visibility"] != "visible"]
    if later:
        points = _number(sum(r["points"] for r in later))
        lines += [
            "",
            f"{len(later)} more tests ({points} points) show their results once grades are "
            "published. Until then Gradescope also hides your total score.",
        ]
    skipped = [r for r in records if r.get("excluded")]
    if skipped:
        tasks = ", ".join(sorted({r["task"] for r in skipped}, key=_natural_key))
        reason = next((o for r in skipped for o in r["output"]), "").removeprefix("skipped: ")
        reason = reason.removeprefix("Skipped: ")
        lines += [
            "",
            f"{len(skipped)} tests of {tasks} did not run on this machine and count for "
            f"neither your score nor the maximum ({reason}).",
        ]
    if collect_errors:
        lines += ["", "Some tests could not be loaded; they are missing from this report."]
    return "\n".join(lines)


def results_json(records, collect_errors=(), execution_time=0.0, header: str = "") -> dict:
    """Gradescope's results dictionary for the graded tests ``records``.

    Exactly Gradescope's fields: top level ``score``, ``execution_time``, ``output``,
    ``output_format``, ``stdout_visibility`` (``hidden``: the log is for instructors) and
    ``tests``, each with ``name``, ``score``, ``max_score``, ``status``, ``output`` and
    ``visibility``. Tests skipped by a marker are left out. ``header`` goes first in the
    top-level output (the autograder puts its report on the submitted files there).
    """
    tests = []
    for r in records:
        if r.get("excluded"):
            continue
        output = "\n".join(r["output"])
        if len(output) > _OUTPUT_LIMIT:
            output = output[:_OUTPUT_LIMIT] + f"\n... ({len(output) - _OUTPUT_LIMIT} more chars)"
        tests.append(
            {
                "name": f"{r['task']} {r['title']}",
                "score": _number(r["points"] if r["ok"] else 0),
                "max_score": _number(r["points"]),
                "status": "passed" if r["ok"] else "failed",
                "output": output,
                "visibility": r["visibility"],
            }
        )
    summary = _summary(records, collect_errors)
    return {
        "score": _number(sum(t["score"] for t in tests)),
        "execution_time": round(execution_time, 3),
        "output": (header.rstrip() + "\n\n" + summary) if header.strip() else summary,
        "output_format": "text",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def strict_text(value):
    """``value`` with every string made valid Unicode: a lone surrogate (``\\udcff`` from a
    file name that is not UTF-8, decoded with ``surrogateescape``) becomes the bytes it
    stands for, decoded with U+FFFD for what is not UTF-8. Strict JSON readers (Gradescope's)
    reject lone surrogates, even escaped."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            raw = value.encode("utf-8", "surrogateescape" if _escapes_only(value) else "replace")
            return raw.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {strict_text(k): strict_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_text(v) for v in value]
    return value


def _escapes_only(text: str) -> bool:
    """Whether every surrogate in ``text`` is a ``surrogateescape`` byte (U+DC80..U+DCFF)."""
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)


def write_results(path, records, collect_errors=(), execution_time=0.0, header="") -> None:
    """Write :func:`results_json` to ``path`` (creating its folder; replaced atomically), as
    strict UTF-8 JSON (:func:`strict_text`)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    data = strict_text(results_json(records, collect_errors, execution_time, header))
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)
