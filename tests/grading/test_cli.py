"""The grade command: pytest with the points plugin, from the command line."""

import argparse
import json
import subprocess
import sys

from tinygrad_course.grading import cli

SUITE = '''\
import pytest

pytestmark = pytest.mark.task("A2.1")


@pytest.mark.points(1)
def test_ok():
    pass


@pytest.mark.points(2)
def test_wrong():
    assert False


@pytest.mark.points(1)
def test_long_lists():
    assert list(range(100)) == list(range(1, 101))
'''


def _args(argv):
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    return parser.parse_args(argv)


def test_pytest_args():
    assert cli.pytest_args(_args([]))[-1] == "tests/assignments"
    argv = cli.pytest_args(_args(["a.py", "--gradescope", "r.json", "-n", "2", "-k", "x"]))
    assert argv[:4] == ["-p", "no:tinygrad_edu_grading", "-p", cli.PLUGIN]
    assert argv[argv.index("--gradescope") + 1] == "r.json"
    assert argv[argv.index("-n") + 1] == "2" and argv[argv.index("-k") + 1] == "x"
    assert argv[-1] == "a.py"


def test_grade_command(tmp_path):
    (tmp_path / "test_suite.py").write_text(SUITE)
    done = subprocess.run(
        [sys.executable, "-m", "tinygrad_course", "grade", "test_suite.py",
         "--gradescope", "out/results.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # two tests fail
    lines = done.stdout.splitlines()
    assert ["A2.1", "3", "1", "1", "/", "4"] in [line.split() for line in lines]
    assert "Warning" not in done.stdout + done.stderr  # no assertion-rewrite warnings (#26)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["score"] == 1 and sum(t["max_score"] for t in data["tests"]) == 4
    long = next(t for t in data["tests"] if "long lists" in t["name"])
    assert "At index 0 diff" in long["output"] and "-v" not in long["output"], long["output"]


def test_a_full_disk_says_what_filled_it():
    from tinygrad_course.grading.probe import format_error  # noqa: PLC0415

    text = format_error({"type": "OSError", "message": "[Errno 28] No space left on device"}, [])
    assert "your code filled the space" in text
    text = format_error({"type": "OSError", "message": "[Errno 27] File too large"}, [])
    assert "larger than the grader allows" in text
