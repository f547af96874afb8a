"""The points plugin, run on small example suites with pytester."""

import json

import pytest

from tinygrad_course.grading import pytest_plugin


@pytest.fixture(autouse=True)
def _load_the_plugin(request):
    """The plugin loads only where grading happens (no entry point: installing the package
    changes no other project's pytest), so each small session made here names it, as this
    repository's pyproject.toml and the Gradescope zip's run script do."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeconftest(
            f"pytest_plugins = [{pytest_plugin.__name__!r}]\n"
        )

EXAMPLE = '''
import pytest

pytestmark = pytest.mark.task("A1.10")

@pytest.mark.points(2)
def test_pass():
    assert True

@pytest.mark.points(3)
def test_fail():
    assert 1 + 1 == 3, "one plus one"

@pytest.mark.hidden
@pytest.mark.points(1.5)
def test_hidden_pass():
    pass

@pytest.mark.task("A1.2")
@pytest.mark.points(4, visibility="after_due_date")
@pytest.mark.parametrize("k", [1, 2])
def test_param(k):
    assert k == 1

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

@pytest.mark.task("A1.2")
@pytest.mark.points(1)
def test_setup_error(broken):
    pass

def test_ungraded():
    pass
'''


def _table(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "points per task" in line)
    return [line.split() for line in lines[start + 1 : start + 6]]


def _expected_results():
    # (name, score, max, status, visibility), in file order
    return [
        ("A1.10 pass", 2, 2, "passed", "visible"),
        ("A1.10 fail", 0, 3, "failed", "visible"),
        ("A1.10 hidden pass", 1.5, 1.5, "passed", "after_published"),
        ("A1.2 param [1]", 4, 4, "passed", "after_due_date"),
        ("A1.2 param [2]", 0, 4, "failed", "after_due_date"),
        ("A1.2 setup error", 0, 1, "failed", "visible"),
        ("A1.10 ungraded", 0, 0, "passed", "visible"),  # in task A1.10 through pytestmark
    ]


def _check_results(path):
    data = json.loads(path.read_text())
    expected = _expected_results()
    assert [t["name"] for t in data["tests"]] == [e[0] for e in expected]
    for test, (_, score, max_score, status, visibility) in zip(data["tests"], expected):
        assert (test["score"], test["max_score"]) == (score, max_score)
        assert (test["status"], test["visibility"]) == (status, visibility)
        assert set(test) == {"name", "score", "max_score", "status", "output", "visibility"}
    # Gradescope's top-level fields, and no others
    assert set(data) == {"score", "execution_time", "output", "output_format",
                         "stdout_visibility", "tests"}  # fmt: skip
    assert data["stdout_visibility"] == "hidden" and data["output_format"] == "text"
    assert data["score"] == sum(e[1] for e in expected) == 7.5
    assert "one plus one" in data["tests"][1]["output"]
    assert "fixture broke" in data["tests"][5]["output"]
    assert data["tests"][0]["output"] == ""
    assert isinstance(data["execution_time"], float) and data["execution_time"] >= 0
    return data


def test_summary_table_and_results_json(pytester):
    pytester.makepyfile(test_example=EXAMPLE)
    out = pytester.runpytest("--gradescope", "out/results.json")
    out.assert_outcomes(passed=4, failed=2, errors=1)
    rows = _table(out.stdout.str())
    # natural task order: A1.2 before A1.10
    assert rows[0] == ["task", "tests", "passed", "points"]
    assert rows[1] == ["A1.2", "3", "1", "4", "/", "9"]
    assert rows[2] == ["A1.10", "4", "3", "3.5", "/", "6.5"]
    assert rows[4] == ["total", "7", "4", "7.5", "/", "15.5"]
    data = _check_results(pytester.path / "out" / "results.json")
    # the student's summary: visible tests only, and a word on the others
    assert "A1.10" in data["output"] and "total" in data["output"]
    assert "3 more tests (9.5 points) show their results once grades are published" in data[
        "output"
    ]
    assert "Gradescope also hides your total score" in data["output"]


def test_xdist_controller_collects_and_writes(pytester):
    import xdist  # noqa: F401  (installed by make test)
    pytester.makepyfile(test_example=EXAMPLE)
    out = pytester.runpytest_subprocess("-n", "2", "-p", "xdist", "--gradescope", "r.json")
    out.assert_outcomes(passed=4, failed=2, errors=1)
    assert _table(out.stdout.str())[4] == ["total", "7", "4", "7.5", "/", "15.5"]
    _check_results(pytester.path / "r.json")


def test_silent_without_markers(pytester):
    pytester.makepyfile(test_plain="def test_a():\n    assert True\n")
    out = pytester.runpytest()
    out.assert_outcomes(passed=1)
    assert "points per task" not in out.stdout.str()
    assert "Gradescope" not in out.stdout.str()
    assert not list(pytester.path.glob("*.json"))


def test_gradescope_without_points_writes_zero_score(pytester):
    pytester.makepyfile(test_plain="def test_a():\n    assert True\n")
    pytester.runpytest("--gradescope", "results.json").assert_outcomes(passed=1)
    data = json.loads((pytester.path / "results.json").read_text())
    assert (data["score"], data["tests"]) == (0, [])


def test_collection_error_is_reported(pytester):
    pytester.makepyfile(
        test_ok="import pytest\n\n@pytest.mark.points(1)\ndef test_a():\n    pass\n",
        test_broken="import student_module_that_does_not_exist\n",
    )
    pytester.runpytest("--gradescope", "results.json")
    data = json.loads((pytester.path / "results.json").read_text())
    assert data["score"] == 0 and data["tests"] == []  # collection errors stop the session
    assert "could not be loaded" in data["output"]


def test_long_output_is_truncated(pytester):
    pytester.makepyfile(
        test_long="import pytest\n\n@pytest.mark.points(1)\n"
        "def test_a():\n    assert False, 'x' * 20000\n"
    )
    pytester.runpytest("--gradescope", "results.json")
    (test,) = json.loads((pytester.path / "results.json").read_text())["tests"]
    assert len(test["output"]) < 5000 and "more chars" in test["output"]


class _Item:
    """Just enough of a pytest item for the marker reader."""

    nodeid = "test_x.py::test_a"
    name = "test_a"

    def __init__(self, *marks):
        self.marks = {m.name: m for m in (mark.mark for mark in marks)}

    def get_closest_marker(self, name):
        return self.marks.get(name)


@pytest.mark.parametrize(
    "marks, message",
    [
        ([pytest.mark.points("two")], "needs one number"),
        ([pytest.mark.points(True)], "needs one number"),
        ([pytest.mark.points(-1)], ">= 0"),
        ([pytest.mark.points(1, visibility="secret")], "is not one of"),
        ([pytest.mark.points(1, weight=2)], "unknown points() argument"),
        ([pytest.mark.task(1)], "needs one name"),
        ([pytest.mark.task("A", uses="A1.1")], "tuple of task names"),
        ([pytest.mark.task("A", weight=1)], "unknown task() argument"),
        ([pytest.mark.points(1, timeout=0)], "seconds > 0"),
    ],
)
def test_bad_markers_name_the_test(marks, message):
    with pytest.raises(pytest.UsageError, match="test_x.py::test_a") as info:
        pytest_plugin.grading_info(_Item(*marks))
    assert message in str(info.value)


def test_marker_reading():
    read = pytest_plugin.grading_info
    assert read(_Item()) is None
    base = {"task": "other", "visibility": "visible", "timeout": None, "uses": None}
    assert read(_Item(pytest.mark.points(2))) == {**base, "points": 2, "title": "a"}
    hidden = read(_Item(pytest.mark.points(1), pytest.mark.hidden, pytest.mark.task("A1.2")))
    assert hidden == {**base, "points": 1, "task": "A1.2", "visibility": "after_published",
                      "title": "a"}  # fmt: skip
    assert read(_Item(pytest.mark.task("B")))["points"] == 0
    uses = read(_Item(pytest.mark.task("A3.5", uses=("A3.4", "A3.1"))))
    assert uses["uses"] == ["A3.1", "A3.4"]
    assert read(_Item(pytest.mark.points(1, timeout=60)))["timeout"] == 60


def test_bad_marker_stops_the_run(pytester):
    source = "import pytest\n\n@pytest.mark.points(-2)\ndef test_a():\n    pass\n"
    pytester.makepyfile(test_bad=source)
    out = pytester.runpytest()
    assert out.ret == pytest.ExitCode.USAGE_ERROR
    assert "test_bad.py::test_a: points must be >= 0" in out.stderr.str()


def test_markers_are_registered(pytester):
    pytester.makepyfile(test_m="import pytest\n\n@pytest.mark.task('A')\ndef test_a():\n    pass\n")
    pytester.runpytest("--strict-markers").assert_outcomes(passed=1)
    text = pytester.runpytest("--markers").stdout.str()
    assert "points(n" in text and "task(name" in text and "hidden:" in text


def test_natural_task_order():
    names = ["A1.10", "A2", "A1.2", "B", "A1.1"]
    assert sorted(names, key=pytest_plugin._natural_key) == ["A1.1", "A1.2", "A1.10", "A2", "B"]


def test_marker_skips_leave_max_score_but_runtime_skips_do_not(pytester):
    pytester.makepyfile(
        test_skips="""
        import pytest

        @pytest.mark.points(2)
        def test_ok():
            pass

        @pytest.mark.points(3)
        @pytest.mark.skipif(True, reason="needs a GPU")
        def test_gpu():
            pass

        @pytest.mark.points(4)
        def test_dodges():
            pytest.skip("student code skipped itself")
        """
    )
    out = pytester.path / "results.json"
    pytester.runpytest("--gradescope", str(out), "-p", "no:cacheprovider")
    data = json.loads(out.read_text())
    by = {t["name"]: t for t in data["tests"]}
    assert "other gpu" not in by, "a test skipped by its marker is left out"
    assert by["other dodges"]["max_score"] == 4 and by["other dodges"]["score"] == 0
    assert data["score"] == 2
    assert "1 tests of other did not run on this machine" in data["output"]
    assert "needs a GPU" in data["output"]


RUN_AND_REFERENCE = """
import pytest

def double(x):
    return [2 * v for v in x]

def boom():
    raise ValueError("bad input")

@pytest.mark.points(1)
def test_run(run):
    \"\"\"double of {{1, 2}}\"\"\"
    assert run(double, x=(1, 2)) == [2, 4]

@pytest.mark.points(1)
def test_error(run):
    run(boom)

@pytest.mark.points(1)
def test_visible_reference(reference):
    reference(double, x=[1])

@pytest.mark.hidden
@pytest.mark.points(1)
def test_hidden_reference(run, reference):
    assert run(double, x=[3]) == reference(double, x=[3])
"""


def test_run_and_reference_fixtures_at_home(pytester):
    pytester.makepyfile(test_fixtures=RUN_AND_REFERENCE)
    out = pytester.path / "results.json"
    pytester.runpytest("--gradescope", str(out), "-p", "no:cacheprovider")
    by = {t["name"]: t for t in json.loads(out.read_text())["tests"]}
    assert by["other double of {1, 2}"]["status"] == "passed"
    error = by["other error"]["output"]
    assert error.startswith("your code raised ValueError: bad input") and "in boom" in error
    assert "reference() is for hidden tests" in by["other visible reference"]["output"]
    assert by["other hidden reference"]["status"] == "passed"


HIDDEN_FAILURES = """
import numpy as np
import pytest

from tgedu_fake_probe import SubmissionError

REFERENCE = np.array([0.12345678901234567, 2.5])

@pytest.mark.task("A1.3")
@pytest.mark.hidden
@pytest.mark.points(1)
def test_values():
    np.testing.assert_allclose(np.array([0.5, 2.5]), REFERENCE, rtol=1e-12)

@pytest.mark.task("A1.3")
@pytest.mark.points(1, visibility="after_due_date")
def test_expression():
    expected = float(REFERENCE[0])
    assert 0.5 == expected, f"wanted {expected!r}"

@pytest.mark.task("A1.3")
@pytest.mark.hidden
@pytest.mark.points(1)
def test_shape():
    np.testing.assert_allclose(np.zeros(3), REFERENCE)

@pytest.mark.task("A1.3")
@pytest.mark.hidden
@pytest.mark.points(1)
def test_raised():
    raise SubmissionError("ZeroDivisionError: division by zero (ops.py, line 3)")

@pytest.mark.task("A1.3")
@pytest.mark.points(1)
def test_visible():
    assert 0.5 == float(REFERENCE[0])
"""


def test_hidden_tests_never_show_expected_values(pytester):
    """A hidden test's failure used to show the reference's values to 17 digits and the
    check's expressions; with resubmissions that is an answer table."""
    pytester.makepyfile(tgedu_fake_probe="class SubmissionError(AssertionError):\n    pass\n")
    pytester.makepyfile(test_hidden=HIDDEN_FAILURES)
    pytester.runpytest("-p", "tinygrad_course.grading.pytest_plugin", "--gradescope",
                       "r.json").assert_outcomes(failed=5)  # fmt: skip
    by = {t["name"]: t["output"] for t in json.loads((pytester.path / "r.json").read_text())[
        "tests"]}  # fmt: skip
    for name in ("A1.3 values", "A1.3 expression", "A1.3 shape"):
        assert "0.1234" not in by[name] and "REFERENCE" not in by[name], by[name]
        assert "expected" not in by[name].split("(")[0] or "differ" in by[name], by[name]
        assert "stay hidden" in by[name]
    assert "values differ" in by["A1.3 values"] and "shape" in by["A1.3 shape"]
    assert by["A1.3 raised"].startswith("ZeroDivisionError: division by zero (ops.py, line 3)")
    assert "0.1234" in by["A1.3 visible"]  # a visible test's data is the student's to see
