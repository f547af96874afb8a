"""grade-batch: a folder of submissions, each in its own sandbox, in parallel."""

import csv
import zipfile

import pytest

from tinygrad_edu.grading.batch import grade_batch, unpack_zip
from tinygrad_edu.grading.gradescope import build_autograder_zip

from . import toy


def _zip(path, entries):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            zf.writestr(info, data)


def test_unpack_zip_refuses_links_and_escapes(tmp_path):
    _zip(tmp_path / "s.zip", [
        ("repo/ops.py", "x = 1\n", 0o100644),
        ("../evil.py", "bad", 0o100644),
        ("/abs/evil2.py", "bad", 0o100644),
        ("link.py", "/etc/passwd", 0o120777),
    ])  # fmt: skip
    out = tmp_path / "out"
    unpack_zip(tmp_path / "s.zip", out)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["abs/evil2.py", "repo/ops.py"]
    assert not (tmp_path / "evil.py").exists() and not (out / "link.py").exists()


def test_grade_batch(tmp_path, sandbox_setup, monkeypatch):
    repo = toy.make(tmp_path / "repo")
    zip_path = tmp_path / "autograder.zip"
    build_autograder_zip(repo, zip_path)
    subs = tmp_path / "submissions"
    (subs / "alice" / "mine").mkdir(parents=True)
    (subs / "alice" / "mine" / "ops.py").write_text(toy.OPS)
    (subs / "alice" / "mine" / "more.py").write_text(toy.MORE)
    wrong = toy.OPS.replace("return x * square(x)", "return abs(x) * x * x")
    _zip(subs / "bob.zip", [("bob/toy/ops.py", wrong, 0o100644),
                            ("bob/toy/more.py", toy.MORE, 0o100644)])  # fmt: skip
    (subs / "carol").mkdir()
    (subs / "notes.txt").write_text("not a submission")
    out = tmp_path / "grades.csv"
    users = sandbox_setup.users or None
    monkeypatch.chdir(tmp_path)  # relative paths, as typed on a command line
    rows = grade_batch("submissions", "grades.csv", autograder=zip_path, jobs=2, timeout=5,
                       sandbox_python=sandbox_setup.python, users=users,
                       mode="user" if users else "rlimits", log=lambda line: None)  # fmt: skip
    assert [r["name"] for r in rows] == ["alice", "bob", "carol"]
    with open(out, newline="") as f:
        table = list(csv.reader(f))
    header, maxima, *lines = table
    assert header == ["submission", "score", "max_score", "T1.0", "T1.1", "T1.2", "T2.1",
                      "T2.2", "seconds", "status"]  # fmt: skip
    full = sum(toy.POINTS.values())
    assert maxima[:8] == ["(max)", str(full), str(full), "1", "2", "8", "2", "1"]
    by = {line[0]: line for line in lines}
    assert by["alice"][1:8] == [str(full), str(full), "1", "2", "8", "2", "1"]
    assert by["bob"][1:8] == [str(full - 5), str(full), "1", "2", "3", "2", "1"]  # hidden lost
    assert by["carol"][1] == "1" and by["carol"][-1] == "ok"  # only the given code's point
    assert all(line[-1] == "ok" for line in lines)
    results = out.with_name("grades-results")
    assert (results / "alice" / "results.json").is_file()
    log = (results / "bob" / "log.txt").read_text()
    if sandbox_setup.privileged:
        assert any(f"as user {u}" in log for u in sandbox_setup.users), log[:500]


def test_grade_batch_needs_submissions(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no submissions"):
        grade_batch(tmp_path / "empty", tmp_path / "g.csv", autograder=tmp_path)


def test_the_command_line_is_registered():
    from tinygrad_edu.cli import SUBCOMMANDS

    assert SUBCOMMANDS["grade-batch"][0] == "tinygrad_edu.grading.batch"
