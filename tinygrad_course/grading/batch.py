"""Grading a whole class: ``tinygrad-edu grade-batch SUBMISSIONS/ --out grades.csv``.

Each entry of ``SUBMISSIONS/`` (a folder or a ``.zip`` file, named after its student) is
graded like one Gradescope submission: the autograder zip's own ``run_autograder``, with its
paths moved, in its own sandbox. Several run at once (``--jobs``); each parallel slot has its
own sandbox user (``tgsandbox``, ``tgsandbox1``, ..., created when missing), so two
submissions never share a user, and a sweep after one never touches another.

The CSV has one row per submission: its score, the maximum, the points of every task, the
seconds it took and a status (``ok``, or why there are no results); the first row after the
header gives each task's maximum. Each submission's ``results.json`` and log are kept in
``--results DIR`` (default: next to the CSV).

Without root the submissions run as your own user with resource limits only (the log says
so): fine for a quick look, not a boundary against hostile code.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import queue
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

from .pytest_plugin import _natural_key
from .sandbox import DEFAULT_USER, ensure_user
from .sandbox_sweep import remove_tree

__all__ = ["grade_batch", "unpack_zip", "add_arguments", "run", "MAX_UNPACKED"]

MAX_UNPACKED = 64 << 20  # bytes a submitted zip may unpack to


def unpack_zip(path, dest) -> None:
    """Unpack a submitted zip safely: regular files only, no paths outside ``dest``, no
    links, at most :data:`MAX_UNPACKED` bytes in all."""
    dest = Path(dest)
    total = 0
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            name = info.filename.replace("\\", "/")
            parts = [p for p in name.split("/") if p not in ("", ".")]
            mode = info.external_attr >> 16
            if info.is_dir() or not parts or ".." in parts or stat.S_ISLNK(mode):
                continue
            total += info.file_size
            if total > MAX_UNPACKED:
                raise ValueError(f"{path} unpacks to more than {MAX_UNPACKED >> 20} MiB")
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)


def _autograder_source(autograder, work: Path, log) -> Path:
    """The unpacked autograder: a folder as it is, a zip unpacked, or built from ``.``."""
    if autograder is not None and Path(autograder).is_dir():
        return Path(autograder).resolve()
    source = work / "source"
    if autograder is None:
        from .gradescope import build_autograder_zip  # noqa: PLC0415

        autograder = work / "autograder.zip"
        build_autograder_zip(".", autograder)
        log(f"built {autograder} from this repository")
    with zipfile.ZipFile(autograder) as zf:
        zf.extractall(source)
        for info in zf.infolist():
            os.chmod(source / info.filename, stat.S_IMODE(info.external_attr >> 16) or 0o644)
    return source


def _totals(data: dict | None) -> tuple[dict, dict]:
    """Points earned and possible per task, from a results.json."""
    earned, possible = {}, {}
    for t in (data or {}).get("tests", []):
        task = str(t.get("name", "")).split(" ", 1)[0]
        earned[task] = earned.get(task, 0) + t.get("score", 0)
        possible[task] = possible.get(task, 0) + t.get("max_score", 0)
    return earned, possible


def _number(x):
    return int(x) if float(x) == int(x) else round(float(x), 4)


METADATA = "submission_metadata.json"


def _people(metadata) -> list[dict]:
    """Name, email and student id of each submitter in Gradescope's submission metadata
    (``{"users": [{"name", "email", "sid"}, ...]}``, the autograder's file, or an export's
    ``{":submitters": [...]}``); nothing for anything else."""
    if not isinstance(metadata, dict):
        return []
    users = metadata.get("users", metadata.get(":submitters", metadata.get("submitters", [])))
    out = []
    for u in users if isinstance(users, list) else []:
        if isinstance(u, dict):
            get = lambda k, u=u: str(u.get(k, u.get(":" + k, "")) or "")  # noqa: E731
            out.append({"name": get("name"), "email": get("email"),
                        "sid": get("sid") or get("student_id")})  # fmt: skip
    return out


def _metadata(submissions: Path, entries) -> dict:
    """Entry name -> its submitters: from ``submission_metadata.json`` inside the entry (as
    Gradescope gives each submission), or from one at the top of the folder mapping entry
    names to metadata (an export). Read by the grader only: never copied for the sandbox."""
    out = {}
    top = submissions / METADATA
    table = {}
    if top.is_file():
        try:
            table = json.loads(top.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ValueError(f"grade-batch: {top} is not JSON ({e})") from None
    for entry in entries:
        name = entry.stem if entry.suffix == ".zip" else entry.name
        people = _people(table.get(name)) if isinstance(table, dict) else []
        inner = entry / METADATA
        if not people and entry.is_dir() and inner.is_file():
            try:
                people = _people(json.loads(inner.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                people = []
        out[name] = people
    return out


def read_roster(path) -> list[dict]:
    """A roster CSV: one student a row, with columns for some of name, email and student id
    (``sid``, ``student_id``, ``id``; any case). Returns dicts with those three keys."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    out = []
    for row in rows:
        low = {str(k).strip().lower(): (v or "").strip() for k, v in row.items() if k}
        first_last = " ".join(x for x in (low.get("first name"), low.get("last name")) if x)
        out.append({
            "name": low.get("name") or low.get("full name") or first_last,
            "email": low.get("email") or low.get("e-mail") or "",
            "sid": low.get("sid") or low.get("student_id") or low.get("student id")
            or low.get("id") or "",
        })  # fmt: skip
    if rows and not any(r["email"] or r["sid"] for r in out):
        raise ValueError(f"grade-batch: the roster {path} has no email or student id column")
    return out


def _join(rows: list[dict], metadata: dict, roster) -> list[dict]:
    """Name the rows' students (metadata first, the roster fills in), and add a row for each
    roster student with no submission."""
    by_email = {r["email"].lower(): r for r in roster or () if r["email"]}
    by_sid = {r["sid"]: r for r in roster or () if r["sid"]}
    seen = set()
    for row in rows:
        people = metadata.get(row["name"], [])
        found = []
        for p in people or [{"name": "", "email": "", "sid": ""}]:
            match = by_email.get(p["email"].lower()) or by_sid.get(p["sid"]) or {}
            found.append({k: p[k] or match.get(k, "") for k in ("name", "email", "sid")})
            if match:
                seen.add(id(match))
        row["people"] = found
    for student in roster or ():
        if id(student) not in seen:
            rows.append({"name": "", "people": [student], "score": 0, "max_score": 0,
                         "tasks": {}, "seconds": 0.0, "status": "no submission"})  # fmt: skip
    return rows


def grade_batch(submissions, out_csv, autograder=None, jobs: int = 2, timeout: float = 30.0,
                results=None, sandbox_python: str | None = None, user: str = DEFAULT_USER,
                mode: str = "auto", users=None, log=print, roster=None) -> list[dict]:  # fmt: skip
    """Grade every submission in the folder ``submissions``; write ``out_csv``.

    Args:
        submissions: a folder of submissions (folders or ``.zip`` files).
        out_csv: the CSV to write.
        autograder: the autograder zip or its unpacked folder (default: build one from the
            repository in the current folder).
        jobs: submissions graded at once.
        timeout: seconds per probe call.
        results: where each submission's results.json and log go (default: the CSV's name
            without ``.csv``, plus ``-results``).
        sandbox_python: the interpreter the sandboxed children run (default: this one; as
            root it must be readable by the sandbox users).
        user: the first sandbox user's name (the others get 1, 2, ... appended).
        mode: the sandbox mode (``auto``, ``user`` or ``rlimits``).
        users: the sandbox users, one per slot (instead of ``user``'s names).
        roster: a roster CSV (:func:`read_roster`) to join on email or student id.

    Returns:
        One dict per submission: ``name``, ``score``, ``max_score``, ``tasks``, ``seconds``,
        ``status``.
    """
    submissions, out_csv = Path(submissions).resolve(), Path(out_csv).resolve()
    entries = sorted(p for p in submissions.iterdir() if p.is_dir() or p.suffix == ".zip")
    if not entries:
        raise ValueError(f"grade-batch: no submissions (folders or .zip files) in {submissions}")
    results = Path(results).resolve() if results else out_csv.with_name(out_csv.stem + "-results")
    results.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        os.chmod(results, 0o700)  # logs and results of every student: not for sandboxed code
    jobs = max(1, min(jobs, len(entries)))
    users = _sandbox_users(jobs, user, users, mode, log)
    metadata = _metadata(submissions, entries)
    with tempfile.TemporaryDirectory(prefix="tgedu-batch-") as tmp:
        work = Path(tmp)
        source = _autograder_source(autograder, work, log)

        def grade(entry, slot):
            return _grade_one(entry, source, work, results, slot, users[slot], sandbox_python,
                              timeout, mode)  # fmt: skip

        rows = _run_slots(entries, jobs, grade, log)
    total = max((r["max_score"] for r in rows if r["status"] == "ok"), default=0)
    rows.sort(key=lambda r: r["name"])
    rows = _join(rows, metadata, read_roster(roster) if roster else None)
    for r in rows:  # one that could not be graded, or is missing, is out of the course's total
        if r["max_score"] == 0:
            r["max_score"] = total
    _write_csv(out_csv, rows)
    return rows


def _sandbox_users(jobs: int, user: str, users, mode: str, log) -> list:
    """One sandbox user per slot (created where missing), or None per slot where submissions
    run as the caller (not root, or ``--sandbox rlimits``)."""
    root = os.geteuid() == 0 and mode != "rlimits"
    if not root:
        why = "--sandbox rlimits" if os.geteuid() == 0 else "not root"
        log(f"grade-batch: {why}, so submissions run as you, with resource limits only")
        return [None] * jobs
    if users is None:
        users = [user if k == 0 else f"{user}{k}" for k in range(jobs)]
    elif len(users) < jobs:
        raise ValueError(f"grade-batch: {jobs} jobs need {jobs} sandbox users, got {users}")
    for name in filter(None, users):
        ensure_user(name)
    return users


def _run_slots(entries, jobs: int, grade, log) -> list[dict]:
    """``grade(entry, slot)`` for every entry, on ``jobs`` threads (a slot is a thread, with
    its own sandbox user); logs each row as it comes."""
    todo: queue.Queue = queue.Queue()
    for entry in entries:
        todo.put(entry)
    rows: list[dict] = []
    lock = threading.Lock()

    def worker(slot: int) -> None:
        while True:
            try:
                entry = todo.get_nowait()
            except queue.Empty:
                return
            row = grade(entry, slot)
            with lock:
                rows.append(row)
                log(f"{row['name']}: {row['score']} / {row['max_score']} "
                    f"({row['seconds']:.0f} s, {row['status']})")  # fmt: skip

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return rows


def _grade_one(entry: Path, source: Path, work: Path, results: Path, slot: int, user,
               sandbox_python, timeout, mode) -> dict:  # fmt: skip
    name = entry.stem if entry.suffix == ".zip" else entry.name
    safe = re.sub(r"[^\w.-]", "_", name)
    out = results / safe
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    start = time.monotonic()
    status = "ok"
    # NOTE: every submission is graded from a private copy (the batch's work folder is
    # root's, 0700): one student's sandboxed code must not reach another's files. The copy
    # and the results folder the grader writes are named by slot, never by student: their
    # paths reach the grader's command line, which every process can read in /proc.
    submission, written = work / f"submission{slot}", work / f"results{slot}"
    for folder in (submission, written):
        remove_tree(folder)
    try:
        if entry.suffix == ".zip":
            unpack_zip(entry, submission)
        else:
            shutil.copytree(entry, submission, symlinks=True,
                            ignore=shutil.ignore_patterns(METADATA))  # fmt: skip
    except (zipfile.BadZipFile, ValueError, OSError, shutil.Error) as e:
        status = f"unreadable submission: {e}"
    data = None
    if status == "ok":
        env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOGRADER_")}
        env.pop("PYTHONPATH", None)
        env.update(
            AUTOGRADER_ROOT=str(work / f"root{slot}"), AUTOGRADER_SOURCE=str(source),
            AUTOGRADER_SUBMISSION=str(submission), AUTOGRADER_RESULTS=str(written),
            AUTOGRADER_PYTHON=sys.executable,
            AUTOGRADER_SANDBOX_PYTHON=sandbox_python or sys.executable,
            AUTOGRADER_SANDBOX="rlimits" if user is None else mode,
            AUTOGRADER_TIMEOUT=str(timeout),
        )  # fmt: skip
        if user is not None:
            env["AUTOGRADER_SANDBOX_USER"] = user
        with open(out / "log.txt", "w", encoding="utf-8") as logfile:
            subprocess.run(["bash", str(source / "run_autograder")], env=env, stdout=logfile,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)  # fmt: skip
        with contextlib.suppress(OSError):
            for item in written.iterdir():
                if item.is_file() and not item.is_symlink():
                    shutil.move(item, out / item.name)
        for folder in (submission, written):
            remove_tree(folder)
        try:
            data = json.loads((out / "results.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            status = f"no results ({e})"
    earned, possible = _totals(data)
    if data is not None and not data.get("tests"):
        status = "not graded (see log.txt)"
    return {
        "name": name,
        "score": _number(sum(earned.values())),
        "max_score": _number(sum(possible.values())),
        "tasks": {t: (_number(earned[t]), _number(possible[t])) for t in earned},
        "seconds": time.monotonic() - start,
        "status": status,
    }


def _write_csv(path: Path, rows: list[dict]) -> None:
    tasks = sorted({t for r in rows for t in r["tasks"]}, key=_natural_key)
    maxima = {}
    for r in rows:
        for t, (_, m) in r["tasks"].items():
            maxima[t] = max(maxima.get(t, 0), m)
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["submission", "name", "email", "sid", "score", "max_score", *tasks,
                      "seconds", "status"])  # fmt: skip
        best = _number(sum(maxima.values()))
        out.writerow(["(max)", "", "", "", best, best, *(maxima[t] for t in tasks), "", ""])
        for r in rows:
            people = r.get("people") or [{"name": "", "email": "", "sid": ""}]
            who = ["; ".join(p[k] for p in people if p[k]) for k in ("name", "email", "sid")]
            out.writerow([r["name"], *who, r["score"], r["max_score"],
                          *(r["tasks"].get(t, (0, 0))[0] for t in tasks),
                          f"{r['seconds']:.1f}", r["status"]])  # fmt: skip


def add_arguments(parser) -> None:
    parser.add_argument("submissions", help="a folder of submissions (folders or .zip files)")
    parser.add_argument("--out", default="grades.csv", help="the CSV to write")
    parser.add_argument("--autograder", help="the autograder zip or folder (default: build one)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="submissions at once")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per probe call")
    parser.add_argument("--results", help="folder for each submission's results.json and log")
    parser.add_argument("--sandbox-python", help="the interpreter of the sandboxed children")
    parser.add_argument("--sandbox-user", default=DEFAULT_USER, help="the first sandbox user")
    parser.add_argument("--sandbox", default="auto", choices=["auto", "user", "rlimits"])
    parser.add_argument("--roster", help="a roster CSV (name, email, sid) to join the rows with")


def run(args) -> int:
    try:
        rows = grade_batch(args.submissions, args.out, args.autograder, args.jobs,
                           args.timeout, args.results, args.sandbox_python,
                           args.sandbox_user, args.sandbox,
                           roster=getattr(args, "roster", None))  # fmt: skip
    except (ValueError, OSError, zipfile.BadZipFile) as e:
        print(e)
        return 1
    graded = [r for r in rows if r["status"] != "no submission"]
    failed = [r for r in graded if r["status"] != "ok"]
    print(f"wrote {args.out}: {len(graded)} submissions graded to the end, "
          f"{len(graded) - len(failed)} fully")  # fmt: skip
    for r in failed:
        print(f"  not graded fully: {r['name']}: {r['status']}")
    missing = len(rows) - len(graded)
    if missing:
        print(f"  {missing} student(s) on the roster have no submission")
    return 0  # the batch ran to the end: the failures are in the report
