"""The ``tinygrad-edu`` command as a user first meets it: ``--help``, also as ``python -m``."""

import subprocess
import sys

from tinygrad_edu.cli import SUBCOMMANDS


def test_python_dash_m_runs_the_command_and_its_help_is_whole():
    out = subprocess.run([sys.executable, "-m", "tinygrad_edu", "--help"], capture_output=True,
                         text=True, timeout=120, check=True).stdout  # fmt: skip
    text = " ".join(out.split())  # argparse wraps lines (and may break a name at its hyphen)
    for name in SUBCOMMANDS:
        assert name in out.split("positional arguments")[1], name
    # the description is the docstring's whole first paragraph, not its first line
    assert text.rstrip().count("gradescope-zip") >= 2 and "``make-student``" in text
