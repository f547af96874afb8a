"""``benchmarks/engine_ab.py`` runs (tiny graphs): the engine of this checkout against the
engine at a git revision, imported side by side. Timings are never asserted."""

import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks import engine_ab

ROOT = Path(__file__).resolve().parents[1]


def _has_history() -> bool:
    if shutil.which("git") is None:
        return False
    probe = subprocess.run(
        ["git", "cat-file", "-e", "HEAD:tinygrad_edu/eager/engine.py"], cwd=ROOT,
        capture_output=True,
    )  # fmt: skip
    return probe.returncode == 0


@pytest.mark.skipif(not _has_history(), reason="needs git and the repository's history")
def test_engine_ab_quick(capsys):
    old = engine_ab.load_engine("HEAD")
    assert old.GraphTask is not None and old.execute is not None
    engine_ab.main(["--old", "HEAD", "--quick"])
    out = capsys.readouterr().out
    for name in ("small_ops", "deep_chain", "mlp_step"):
        assert name in out
    from tinygrad_edu.eager import backward, engine

    assert backward.execute is engine.execute, "the current engine is restored afterwards"
