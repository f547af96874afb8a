"""The attacks of #12 against the real autograder zip of this repository.

The zip is built once from the instructor's repository (solutions and hidden tests), unpacked
into a temporary ``AUTOGRADER_ROOT``, and a set of submissions (``attacks.py``) is graded the
way Gradescope grades: ``run_autograder`` as root, each submission with its own
``AUTOGRADER_SUBMISSION`` and ``AUTOGRADER_RESULTS``, two at a time, each slot with its own
sandbox user. Every test below reads one submission's ``results.json``:

- the reference scores 100%, the untouched student edition at most 15%;
- a hostile edition (forging with ``atexit`` and with a process that outlives the grader,
  patching pytest and numpy, peeking at the hidden tests and the reference) gets exactly the
  untouched edition's score, the results file is the grader's, and the peek finds nothing;
- an endless loop costs only its task (the other tasks score full) and says "timed out";
- a file that does not parse costs only the tasks whose code lives in it, and says where;
- a whole-repository upload and a browser-renamed ``graph (1).py`` score 100%, and the
  student's output says which file was used for what;
- tasks are graded in isolation: two submissions with alternate tasks solved score exactly
  the tasks whose own code (and the code of the tasks they use) is solved.

Built and graded once per test run (shared by the pytest-xdist workers); about a minute on
two cores.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import shared

from . import attacks

ROOT = Path(__file__).resolve().parents[2]
SUITES = "tests/assignments"
TIMEOUT = 8  # seconds per probe call in these runs (the slowest honest probe takes ~1 s)
STUDENT_SHARE = 0.15
METADATA = "student-42@example.edu"  # in submission_metadata.json: only root may read it


def _instructor_repository() -> bool:
    graph = ROOT / "tinygrad_edu" / "symbolic" / "graph.py"
    return graph.is_file() and "# BEGIN SOLUTION" in graph.read_text(encoding="utf-8")


pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not _instructor_repository(),
        reason="grading attacks need the instructor's repository (library with solutions)",
    ),
]


def _unzip(zip_path: Path, dest: Path) -> None:
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(dest)
        for info in zf.infolist():  # extractall drops the modes; Gradescope's unzip keeps them
            os.chmod(dest / info.filename, stat.S_IMODE(info.external_attr >> 16) or 0o644)


def _isolation_submissions(repo: Path, edition: Path, uses: dict) -> dict:
    """Two submissions, each solving every other task (by the tasks' order)."""
    from tinygrad_course.grading.splice import splice  # noqa: PLC0415

    tasks = sorted({t for ts in attacks.file_tasks(repo).values() for t in ts})
    halves = {"isolation_odd": set(tasks[0::2]), "isolation_even": set(tasks[1::2])}
    builders = {}
    for name, solved in halves.items():

        def build(repo, edition, out, solved=solved):
            files = {}
            for f, in_file in attacks.file_tasks(repo).items():
                ref, ed = (repo / f).read_text(), (edition / f).read_text()
                files[f] = splice(ref, ed, keep=in_file - solved, filename=f).text
            return attacks._write(out, files)

        builders[name] = (build, solved)
    return builders


def _collect_uses(source: Path, folder: Path) -> dict:
    """Task -> the tasks whose student code its tests use (from the suites' markers)."""
    plugin = folder / "collect_uses.py"
    plugin.write_text(
        "import json\n"
        "def pytest_collection_finish(session):\n"
        "    out = {}\n"
        "    for item in session.items:\n"
        "        m = item.get_closest_marker('task')\n"
        "        if m is not None:\n"
        "            uses = m.kwargs.get('uses')\n"
        "            out.setdefault(m.args[0], sorted(uses) if uses is not None else None)\n"
        f"    open({str(folder / 'uses.json')!r}, 'w').write(json.dumps(out))\n"
    )
    env = dict(os.environ, PYTHONPATH=f"{source / 'reference'}:{folder}")
    subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "collect_uses",
         "-p", "no:cacheprovider", "-c", str(source / "pytest.ini"), "--rootdir", str(source),
         SUITES],
        cwd=source, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return json.loads((folder / "uses.json").read_text())


def _grade_all(folder: Path, setup, edition: Path) -> dict:
    from tinygrad_course.grading.gradescope import build_autograder_zip  # noqa: PLC0415

    folder.mkdir(parents=True, exist_ok=True)
    build_autograder_zip(ROOT, folder / "autograder.zip")
    # NOTE: the moved /autograder is laid out as Gradescope's: root's, 0711 (setup.sh), in a
    # folder every user can reach (pytest's own temporary folders would hide it), holding the
    # source, the submissions and the results, and a world-readable submission_metadata.json
    ag = Path(tempfile.mkdtemp(prefix="tgedu-ag-"))
    try:
        return _grade_in(folder, ag, setup, edition)
    finally:
        shutil.rmtree(ag, ignore_errors=True)


def _grade_in(folder: Path, ag: Path, setup, edition: Path) -> dict:
    os.chmod(ag, 0o711)
    source = ag / "source"
    _unzip(folder / "autograder.zip", source)
    (ag / "submission_metadata.json").write_text(json.dumps({"users": [METADATA]}))
    os.chmod(ag / "submission_metadata.json", 0o644)
    uses = _collect_uses(source, folder)
    builders = {name: (fn, None) for name, fn in attacks.SUBMISSIONS.items()}
    builders.update(_isolation_submissions(ROOT, edition, uses))
    jobs = []
    for name, (build, _) in builders.items():
        build(ROOT, edition, ag / f"submission-{name}")
        os.chmod(ag / f"submission-{name}", 0o700)  # Gradescope: one submission per container
        jobs.append(name)

    def run(slot_name):
        slot, name = slot_name
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
        env.pop("PYTHONPATH", None)
        env.update(setup.env(slot))
        env.update(
            AUTOGRADER_ROOT=str(ag),
            AUTOGRADER_SUBMISSION=str(ag / f"submission-{name}"),
            AUTOGRADER_RESULTS=str(ag / f"results-{name}"),
            AUTOGRADER_TIMEOUT=str(TIMEOUT),
        )
        start = time.monotonic()
        try:
            done = subprocess.run([str(source / "run_autograder")], env=env, capture_output=True,
                                  text=True, timeout=600)  # fmt: skip
            log = done.stdout + done.stderr
        except subprocess.TimeoutExpired as e:
            log = f"run_autograder did not finish in 600 s\n{e.stdout}"
        seconds = time.monotonic() - start
        if name == "hostile":
            time.sleep(4)  # give a process that outlived the grader time to strike
        path = ag / f"results-{name}" / "results.json"
        data = json.loads(path.read_text()) if path.is_file() else None
        return name, {"results": data, "log": log[-20000:], "seconds": seconds}

    order = sorted(jobs, key=lambda n: n != "endless_loop")  # the slow one first
    with ThreadPoolExecutor(max_workers=2) as pool:
        slots = [(k % 2, n) for k, n in enumerate(order)]
        # NOTE: a slot's user serves one submission at a time: run slot 0 and 1 jobs apart
        queues = [[s for s in slots if s[0] == 0], [s for s in slots if s[0] == 1]]
        results = dict(
            kv for kvs in pool.map(lambda q: [run(s) for s in q], queues) for kv in kvs
        )  # fmt: skip
    manifest = json.loads((source / "manifest.json").read_text())
    return {
        "graded": results,
        "uses": uses,
        "file_tasks": {f: sorted(t) for f, t in attacks.file_tasks(ROOT).items()},
        "halves": {n: sorted(s) for n, (_, s) in builders.items() if s is not None},
        "manifest": manifest,
        "privileged": setup.privileged,
        "reason": setup.reason,
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory, sandbox_setup, student_edition):
    edition, _ = student_edition  # the session's (read only): submissions are built from it
    return shared(tmp_path_factory, "autograder-attacks",
                  lambda d: _grade_all(d, sandbox_setup, edition))  # fmt: skip


def _results(graded, name) -> dict:
    entry = graded["graded"][name]
    assert entry["results"] is not None, f"{name}: no results.json\n{entry['log'][-3000:]}"
    return entry["results"]


def _task(test) -> str:
    return test["name"].split(" ", 1)[0]


def _by_task(data) -> dict:
    tasks: dict[str, list] = {}
    for t in data["tests"]:
        row = tasks.setdefault(_task(t), [0, 0])
        row[0] += t["score"]
        row[1] += t["max_score"]
    return tasks


def _maximum(data) -> float:
    return sum(t["max_score"] for t in data["tests"])


def _hidden_test_names() -> list[str]:
    names = []
    for path in sorted((ROOT / SUITES).glob("test_*.py")):
        text = path.read_text()
        if "# BEGIN HIDDEN TESTS" in text:
            names += re.findall(r"def (test_\w+)", text[text.index("# BEGIN HIDDEN TESTS") :])
    return names


def _all_text(data) -> str:
    return json.dumps(data)


def test_reference_scores_full_marks(graded):
    data = _results(graded, "reference")
    failed = [f"{t['name']}: {t['output'][:800]}" for t in data["tests"] if t["status"] != "passed"]
    assert not failed, "the reference fails:\n" + "\n".join(failed)
    assert len(data["tests"]) >= 40
    assert data["score"] == _maximum(data) > 0
    tasks = _by_task(data)
    for a in ("A1", "A2", "A3"):
        assert any(t.startswith(a + ".") for t in tasks), f"no graded test of {a}"


def test_results_json_has_gradescopes_fields_only(graded):
    data = _results(graded, "reference")
    assert set(data) <= {"score", "execution_time", "output", "output_format",
                         "stdout_visibility", "tests", "visibility", "extra_data"}  # fmt: skip
    assert data["stdout_visibility"] == "hidden"
    for t in data["tests"]:
        assert set(t) <= {"name", "score", "max_score", "status", "output", "visibility"}
        assert t["status"] in ("passed", "failed")
        assert re.match(r"^A\d\.\d+ \S", t["name"]) and "::" not in t["name"], t["name"]
        assert len(t["name"]) < 90, t["name"]
    names = [t["name"] for t in data["tests"]]
    assert len(names) == len(set(names)), "test names must be unique"
    assert not any("skipped" in t["output"] for t in data["tests"]), "skipped tests are left out"


def test_untouched_edition_scores_at_most_15_percent(graded):
    data = _results(graded, "edition")
    ref = _results(graded, "reference")
    assert _maximum(data) == _maximum(ref)
    assert data["score"] <= STUDENT_SHARE * _maximum(data), data["score"]
    passed = {_task(t) for t in data["tests"] if t["status"] == "passed"}
    assert passed <= {"A1.0", "A2.0", "A3.0"}, f"tests pass without student code: {passed}"
    unsolved = [t for t in data["tests"] if t["status"] != "passed"]
    wrong = [t["name"] for t in unsolved if "write your solution here" not in t["output"]]
    assert not wrong, f"these fail for another reason than a missing solution: {wrong}"


def test_forging_gets_the_untouched_editions_score(graded):
    data = _results(graded, "hostile")
    edition = _results(graded, "edition")
    assert attacks.FORGED not in _all_text(data), "the submission wrote the results file"
    statuses = {t["name"]: t["status"] for t in edition["tests"]}
    differ = [(t["name"], statuses.get(t["name"]), t["status"], t["output"][-400:])
              for t in data["tests"] if statuses.get(t["name"]) != t["status"]]  # fmt: skip
    assert not differ, differ  # (named first: which test the forging moved)
    assert [t["name"] for t in data["tests"]] == [t["name"] for t in edition["tests"]]
    assert data["score"] == edition["score"]


def test_peeking_finds_no_hidden_test_or_solution(graded):
    data = _results(graded, "hostile")
    a11 = [t for t in data["tests"] if _task(t) == "A1.1" and t["visibility"] == "visible"]
    assert a11 and all("PEEK found" in t["output"] for t in a11), "the attack did not run"
    if not graded["privileged"]:
        pytest.skip(f"the privilege drop is not checked here: {graded['reason']}")
    text = _all_text(data)
    assert all(re.search(r"PEEK found 0\b", t["output"]) for t in a11), a11[0]["output"]
    leaked = [name for name in _hidden_test_names() if name in text]
    assert not leaked, f"hidden test names reached the results: {leaked}"
    assert "BEGIN SOLUTION" not in text
    assert METADATA not in text, "the submission read submission_metadata.json"


def test_an_endless_loop_costs_only_its_task(graded):
    data = _results(graded, "endless_loop")
    for task, (score, maximum) in _by_task(data).items():
        if task == "A3.2":
            assert score == 0
        else:
            assert score == maximum, f"{task}: {score} of {maximum}"
    looped = [t for t in data["tests"] if _task(t) == "A3.2"]
    assert looped and all("timed out" in t["output"] for t in looped), looped[0]["output"]


def test_a_syntax_error_costs_only_the_tasks_in_that_file(graded):
    data = _results(graded, "syntax_error")
    broken = set(graded["file_tasks"][attacks.SYNTAX_FILE])
    for task, (score, maximum) in _by_task(data).items():
        uses = graded["uses"].get(task)
        uses = set(uses) if uses is not None else {task}
        if uses & broken:
            assert score == 0, task
        else:
            assert score == maximum, f"{task}: {score} of {maximum}"
    failed = [t for t in data["tests"] if t["status"] != "passed"]
    assert failed and all(attacks.SYNTAX_FILE in t["output"] for t in failed)
    assert all("does not parse" in t["output"] and "line" in t["output"] for t in failed)


def test_a_whole_repository_upload_scores_full_marks(graded):
    data = _results(graded, "whole_repository")
    assert data["score"] == _maximum(data) > 0, data["output"][:3000]
    out = data["output"]
    assert "upload/tinygrad_edu-main/tinygrad_edu/eager/engine.py" in out
    ignored = re.search(r"Ignored (\d+) file\(s\)", out)
    assert ignored and int(ignored.group(1)) > 100, out[-2000:]
    assert "Problem" not in out


def test_a_renamed_file_is_used_and_the_student_is_told(graded):
    data = _results(graded, "renamed_file")
    assert data["score"] == _maximum(data) > 0, data["output"][:3000]
    assert attacks.RENAMED in data["output"] and "graph.py" in data["output"]
    assert "renamed" in data["output"]


@pytest.mark.parametrize("half", ["isolation_odd", "isolation_even"])
def test_tasks_are_graded_in_isolation(graded, half):
    solved = set(graded["halves"][half])
    data = _results(graded, half)
    regions = set(graded["manifest"]["regions"])
    for task, (score, maximum) in _by_task(data).items():
        uses = graded["uses"].get(task)
        uses = set(uses) if uses is not None else ({task} & regions)
        expect_full = uses <= solved
        assert (score == maximum) == expect_full, (
            f"{half}: {task} (uses {sorted(uses)}) scored {score} of {maximum}; solved: "
            f"{sorted(solved)}"
        )


def test_a_generic_finite_difference_rule_earns_no_derivative_points(graded):
    """One central-difference vjp for every op (no calculus) earned 13 of A1.3-A1.7's
    points when the checks compared with central differences only; it now earns none, and
    every other task keeps full marks."""
    data = _results(graded, "finite_difference")
    tasks = _by_task(data)
    for task, (score, maximum) in tasks.items():
        if task in attacks.DERIVATIVE_TASKS:
            assert score == 0, f"{task}: {score} of {maximum} for finite differences"
        else:
            assert score == maximum, f"{task}: {score} of {maximum}"
    assert set(attacks.DERIVATIVE_TASKS) <= set(tasks)
    said = " ".join(t["output"] for t in data["tests"] if _task(t) in attacks.DERIVATIVE_TASKS)
    assert "forward computation" in said  # a visible check's own message
    hidden = [t["output"] for t in data["tests"]
              if _task(t) in attacks.DERIVATIVE_TASKS and t["visibility"] != "visible"
              and t["status"] == "failed"]  # fmt: skip
    # a hidden check says what kind of difference, never its expressions or the expected values
    assert hidden and all("stay hidden" in o and "assert" not in o for o in hidden), hidden[:2]


def test_the_complex_step_with_the_forward_kept_aside_earns_no_derivative_points(graded):
    """#35, hole 3: every derivative rule takes the complex step on the op's forward kept
    aside at import. Counting calls of the forward inside the child missed it (it scored all
    of A1.3-A1.7); the verdict now comes from the rule's graph, evaluated in the grader, and
    such a rule has none to give. Every other task keeps full marks."""
    data = _results(graded, "complex_step")
    tasks = _by_task(data)
    for task, (score, maximum) in tasks.items():
        if task in attacks.DERIVATIVE_TASKS:
            assert score == 0, f"{task}: {score} of {maximum} for the complex step"
        else:
            assert score == maximum, f"{task}: {score} of {maximum}"
    assert set(attacks.DERIVATIVE_TASKS) <= set(tasks)
    said = " ".join(t["output"] for t in data["tests"] if _task(t) in attacks.DERIVATIVE_TASKS)
    assert "graph nodes" in said and "forward computation" in said
