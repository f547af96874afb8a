"""The ``tinygrad-edu`` command as a user first meets it: ``--help``, also as ``python -m``.

The console script is the course's command line (the library's parser with the course's
commands registered); ``python -m tinygrad_edu`` runs the library's own commands only."""

import subprocess
import sys
from pathlib import Path

import tomllib

from tinygrad_course.cli import COMMANDS
from tinygrad_edu.cli import SUBCOMMANDS

REPO = Path(__file__).resolve().parents[1]


def _run(*args, check=True):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          timeout=120, check=check)  # fmt: skip


def test_the_console_script_is_the_courses_command_line():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"]["tinygrad-edu"] == "tinygrad_course.cli:main"


def test_python_dash_m_runs_the_command_and_its_help_is_whole():
    out = _run("tinygrad_course", "--help").stdout
    text = " ".join(out.split())  # argparse wraps lines (and may break a name at its hyphen)
    listed = out.split("positional arguments")[1]
    for name in ["render", *COMMANDS]:
        assert name in listed, name
    # the description is the docstring's whole first paragraph, not its first line
    assert text.rstrip().count("gradescope-zip") >= 2 and "``make-student``" in text


def test_the_library_alone_has_its_own_commands_and_says_where_the_others_are():
    out = _run("tinygrad_edu", "--help").stdout
    listed = out.split("positional arguments")[1]
    assert "render" in listed and "render" in SUBCOMMANDS
    assert "grade-batch" not in listed.split("\n\n")[0]
    assert "console script" in " ".join(out.split())
    done = _run("tinygrad_edu", "grade", check=False)
    assert done.returncode == 2 and "invalid choice: 'grade'" in done.stderr
