"""grade-batch: a folder of submissions, each in its own sandbox, in parallel."""

import csv
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from tinygrad_course.grading import batch
from tinygrad_course.grading.batch import grade_batch, unpack_zip
from tinygrad_course.grading.gradescope import build_autograder_zip

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
    (subs / "dave.zip").write_bytes(b"not a zip at all")
    # Gradescope's metadata: in a submission (only the grader reads it), or at the top
    (subs / "alice" / "submission_metadata.json").write_text(json.dumps(
        {"users": [{"name": "Alice Ames", "email": "Alice@Example.edu", "sid": "1001"}]}))
    (subs / "submission_metadata.json").write_text(json.dumps(
        {"bob": {":submitters": [{":name": "Bob Brown", ":sid": "1002"}]}}))
    (tmp_path / "roster.csv").write_text(
        "Name,Email,SID\nAlice Ames,alice@example.edu,1001\nBob Brown,bob@example.edu,1002\n"
        "Zoe Zhu,zoe@example.edu,1009\n")
    out = tmp_path / "grades.csv"
    users = sandbox_setup.users or None
    monkeypatch.chdir(tmp_path)  # relative paths, as typed on a command line
    rows = grade_batch("submissions", "grades.csv", autograder=zip_path, jobs=2, timeout=5,
                       sandbox_python=sandbox_setup.python, users=users,
                       mode="user" if users else "rlimits", log=lambda line: None,
                       roster="roster.csv")  # fmt: skip
    assert [r["name"] for r in rows] == ["alice", "bob", "carol", "dave", ""]
    with open(out, newline="") as f:
        table = list(csv.reader(f))
    header, maxima, *lines = table
    assert header == ["submission", "name", "email", "sid", "score", "max_score", "T1.0",
                      "T1.1", "T1.2", "T2.1", "T2.2", "seconds", "status"]  # fmt: skip
    full = sum(toy.POINTS.values())
    assert maxima[4:11] == [str(full), str(full), "1", "2", "8", "2", "1"]
    by = {line[0] or line[1]: line for line in lines}
    assert by["alice"][1:4] == ["Alice Ames", "Alice@Example.edu", "1001"]
    assert by["alice"][4:11] == [str(full), str(full), "1", "2", "8", "2", "1"]
    assert by["bob"][1:4] == ["Bob Brown", "bob@example.edu", "1002"]  # the roster fills in
    assert by["bob"][4:11] == [str(full - 5), str(full), "1", "2", "3", "2", "1"]  # hidden lost
    assert by["carol"][4] == "1" and by["carol"][-1] == "ok"  # only the given code's point
    # an unreadable submission is 0 out of the course's total, not 0 out of 0
    assert by["dave"][4:6] == ["0", str(full)] and by["dave"][-1].startswith("unreadable")
    assert by["Zoe Zhu"][4:6] == ["0", str(full)] and by["Zoe Zhu"][-1] == "no submission"
    assert all(by[n][-1] == "ok" for n in ("alice", "bob", "carol"))
    used = json.loads((out.with_name("grades-results") / "alice" / "results.json").read_text())
    assert "submission_metadata" not in used["output"]  # never copied for the sandbox
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
    from tinygrad_course.cli import COMMANDS

    assert COMMANDS["grade-batch"][0] == "tinygrad_course.grading.batch"


def test_a_batch_that_ran_to_the_end_exits_0_and_names_its_failures(monkeypatch, capsys):
    rows = [{"name": "a", "status": "ok"}, {"name": "b", "status": "no results (boom)"},
            {"name": "", "status": "no submission"}]  # fmt: skip
    monkeypatch.setattr(batch, "grade_batch", lambda *a, **k: rows)
    parser = __import__("argparse").ArgumentParser()
    batch.add_arguments(parser)
    assert batch.run(parser.parse_args(["subs", "--roster", "r.csv"])) == 0
    said = capsys.readouterr().out
    assert "2 submissions graded to the end, 1 fully" in said
    assert "not graded fully: b: no results (boom)" in said and "1 student(s)" in said


def test_a_roster_needs_an_email_or_id_column(tmp_path):
    (tmp_path / "r.csv").write_text("Name,Section\nAl,1\n")
    with pytest.raises(ValueError, match="no email or student id"):
        batch.read_roster(tmp_path / "r.csv")


_KEYS = '''
import ctypes as _ct
import os as _os

_LIBC = _ct.CDLL(None, use_errno=True)
_LIBC.syscall.restype = _ct.c_long
_ADD, _KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[_os.uname().machine]


def _leave():
    for ring in (-3, -4, -5):  # session, user, user-session keyrings
        _LIBC.syscall(_ct.c_long(_ADD), b"user", b"tgedu-answer", b"x", _ct.c_size_t(1),
                      _ct.c_long(ring))


def _found():
    for ring in (-3, -4, -5):
        if _LIBC.syscall(_ct.c_long(_KEYCTL), _ct.c_long(10), _ct.c_long(ring), b"user",
                         b"tgedu-answer", _ct.c_long(0)) >= 0:
            return True
    return False
'''


@pytest.mark.slow
def test_a_key_one_submission_leaves_is_gone_for_the_next_in_its_slot(tmp_path, sandbox_setup):
    """Keys left by one student were read by a later student in the same slot (#26)."""
    if not sandbox_setup.privileged:
        pytest.skip(f"no sandbox user here: {sandbox_setup.reason}")
    repo = toy.make(tmp_path / "repo")
    zip_path = tmp_path / "autograder.zip"
    build_autograder_zip(repo, zip_path)
    subs = tmp_path / "submissions"
    leaver = toy.OPS.replace("    return x * x\n", "    _leave()\n    return x * x\n") + _KEYS
    reader = toy.OPS.replace("return x * square(x)",
                             "return x * square(x) if _found() else 0 * x") + _KEYS
    for name, ops in (("a_leaver", leaver), ("b_reader", reader)):
        (subs / name).mkdir(parents=True)
        (subs / name / "ops.py").write_text(ops)
        (subs / name / "more.py").write_text(toy.MORE)
    rows = grade_batch(subs, tmp_path / "g.csv", autograder=zip_path, jobs=1, timeout=5,
                       sandbox_python=sandbox_setup.python, users=sandbox_setup.users[:1],
                       mode="user", log=lambda line: None)  # fmt: skip
    by = {r["name"]: r for r in rows}
    assert by["a_leaver"]["tasks"]["T1.1"] == (2, 2)  # it ran, and scored its own square
    assert by["b_reader"]["tasks"]["T1.2"][0] == 0, "the reader found the leaver's key"


def test_no_students_name_reaches_a_command_line(tmp_path, monkeypatch):
    """Each grader's command line is in /proc for every process (the other slot's sandboxed
    code) to read: it used to hold the submission's name (in the paths it was given)."""
    subs = tmp_path / "submissions"
    for name in ("zelda-secretname", "yann-othername"):
        (subs / name).mkdir(parents=True)
        (subs / name / "ops.py").write_text("x = 1\n")
    (tmp_path / "ag").mkdir()
    seen = []

    def fake_run(cmd, env, **kwargs):
        seen.append(" ".join(cmd) + " " + " ".join(env.values()))
        results = Path(env["AUTOGRADER_RESULTS"])
        results.mkdir(parents=True, exist_ok=True)
        (results / "results.json").write_text(json.dumps(
            {"tests": [{"name": "T1.1 x", "score": 1, "max_score": 1}]}))  # fmt: skip
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(batch.subprocess, "run", fake_run)
    monkeypatch.setattr(batch, "_autograder_source", lambda src, work, log: tmp_path / "ag")
    rows = grade_batch(subs, tmp_path / "grades.csv", autograder=tmp_path / "ag", jobs=2,
                       mode="rlimits", log=lambda line: None)  # fmt: skip
    assert len(seen) == 2 and all(r["status"] == "ok" and r["score"] == 1 for r in rows)
    for line in seen:
        assert "secretname" not in line and "othername" not in line, line
    assert (tmp_path / "grades-results" / "zelda-secretname" / "results.json").is_file()
