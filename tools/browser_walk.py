# instructors only
"""Walk the student edition's lessons in a real browser, in every state a student passes through.

The lesson-state tests (``tests/test_lesson_states.py``) run the edition's lessons with
nbclient; this script runs them as a student does: JupyterLab on a fresh student edition,
each lesson opened in headless Chromium (a 900 px wide window), *Run All Cells* through
JupyterLab's own command, then what the page shows is read back: the cells that ran, the
tracebacks, the checks' PASS / FAIL / NOT SOLVED YET boxes, the notices, the widest picture.

The states: day one (no assignment written), then the assignments written in the course's
order (A1, A1-A2, ... A1-A6), each made by splicing the reference solutions of the tasks
written into the edition's stubs (``grading.splice``), as the state tests do. Day one and
the last state run every lesson; a state in between runs the lessons whose last run named
one of its new tasks (a notice "This cell needs assignment A2.1 ..." or a check's "this check
needs assignment ..."): a lesson that named none of them stops where it stopped before, and
running it again would cost minutes for nothing.

Run it from the instructor's repository (it needs the reference solutions, the ``lessons``
extra, Graphviz, JupyterLab, Chromium and ``pip install playwright``)::

    python tools/browser_walk.py --out browser-walk            # every state
    python tools/browser_walk.py --states "day one" --lessons 05 06

It writes ``walk.json``, ``walk.txt`` (one line per state and lesson, then the problems) and
a screenshot of the end of each lesson (``STATE/NN_name.png``) to ``--out``, and exits 1
when it found a problem. It is a maintainer's tool, not part of ``make test``: the report's
reading (:func:`summarize`) is tested in ``tests/test_browser_walk.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 900  # the window's width: a picture wider than this does not fit a laptop's half screen
CHROMIUM = "/usr/bin/chromium"

_COUNT = re.compile(r"\[(\d+)\]")
_NEEDS = re.compile(r"\bneeds? (?:assignment )?(A\d+\.\d+(?:(?:, | and )A\d+\.\d+)*)")
_TASK = re.compile(r"A\d+\.\d+")
_EXERCISE = re.compile(r"^Exercise (\d+\.\d+) —")


# -- reading what the page showed -----------------------------------------------------------
def execution_count(prompt: str) -> int | None:
    """The number in a cell's prompt (``[12]:``), None for ``[ ]:`` or ``[*]:``."""
    match = _COUNT.search(prompt or "")
    return int(match.group(1)) if match else None


def _first_line(source: str) -> str:
    lines = [line for line in source.splitlines() if line.strip()]
    return lines[0][:100] if lines else ""


def summarize(cells: list[dict], written=(), day_one=()) -> dict:
    """What one lesson's page showed after *Run All*, and the problems in it.

    Args:
        cells: one dict per cell, as the page reports it (:data:`_READ_PAGE`): ``type``
            (``code`` or ``markdown``), ``source``, ``prompt`` (``[3]:``), ``errors`` (the
            text of each stderr output), ``checks`` (``{"kind", "name", "text"}`` per check
            box: ``pass``, ``fail``, ``not-solved-yet`` or ``notice``), ``warnings`` (the
            output lines that show a ``...Warning:``), ``images``
            (``{"natural", "shown"}`` widths in px) and ``overflow`` (``{"scroll",
            "client"}`` per output wider than its area).
        written: the tasks written in this state (``"A2.1"`` ...).
        day_one: the exercises that answer before any assignment is written (``"5.2"`` ...).

    Returns:
        ``cells_run`` and ``cells_total`` (code cells with source), ``not_run``,
        ``tracebacks``, ``stderr`` (other error-stream output), ``warnings`` (a ``...Warning:``
        line in any output: no recorded lesson shows one), ``checks`` (count per kind),
        ``exercises`` (number -> status and message), ``named`` (the assignment tasks a
        notice or a check said it needs), ``widest_picture`` and ``problems`` (one line each,
        the cell's index and first line named).
    """
    written, day_one = set(written), set(day_one)
    out = {"cells_run": 0, "cells_total": 0, "not_run": [], "tracebacks": [], "stderr": [],
           "checks": {"pass": 0, "fail": 0, "not-solved-yet": 0, "notice": 0},
           "exercises": {}, "named": [], "notices": [], "warnings": [], "widest_picture": None,
           "problems": [], "notes": []}  # fmt: skip
    named = set()

    def problem(index, cell, what):
        out["problems"].append(f"cell {index} ({_first_line(cell.get('source', ''))!r}): {what}")

    for index, cell in enumerate(cells):
        if cell.get("type") != "code" or not cell.get("source", "").strip():
            continue  # JupyterLab runs no empty cell
        out["cells_total"] += 1
        if execution_count(cell.get("prompt", "")) is None:
            out["not_run"].append(index)
            running = "*" in (cell.get("prompt") or "")
            problem(index, cell, "still running" if running else "not run")
        else:
            out["cells_run"] += 1
        for text in cell.get("errors", []):
            if "Traceback" in text or re.search(r"^\w+(Error|Exception)\b", text, re.M):
                out["tracebacks"].append({"cell": index, "text": text[-2000:]})
                last = [line for line in text.strip().splitlines() if line.strip()]
                problem(index, cell, f"traceback: {last[-1][:200] if last else ''}")
            else:
                out["stderr"].append({"cell": index, "text": text[-500:]})
        for line in dict.fromkeys(cell.get("warnings", [])):  # none in any recorded lesson
            out["warnings"].append({"cell": index, "text": line[:300]})
            problem(index, cell, f"a warning: {line.strip()[:200]}")
        for box in cell.get("checks", []):
            kind, name, text = box.get("kind", ""), box.get("name", ""), box.get("text", "")
            if name == "Tally":
                continue  # the running count, not a check
            out["checks"][kind] = out["checks"].get(kind, 0) + 1
            found = {t for match in _NEEDS.findall(text) for t in _TASK.findall(match)}
            if kind == "notice":
                out["notices"].append({"cell": index, "text": text[:300]})
            named |= found
            for task in sorted(found & written):
                problem(index, cell, f"says it needs {task}, which is written in this state")
            exercise = _EXERCISE.match(name)
            if exercise and kind != "notice":  # a notice may name an exercise: not its check
                number = exercise.group(1)
                out["exercises"][number] = {"status": kind, "message": text[:300]}
                if kind == "pass":  # no state answers an exercise: a pass is on no answer
                    problem(index, cell, f"Exercise {number} passes with no answer written")
                elif kind == "not-solved-yet" and found and number in day_one:
                    problem(index, cell, f"Exercise {number} answers on day one, but its check "
                                         f"waits for {', '.join(sorted(found))}")  # fmt: skip
            if kind == "fail":
                problem(index, cell, f"FAIL: {text[:200]}")
        for image in cell.get("images", []):
            widest = out["widest_picture"]
            if widest is None or image.get("natural", 0) > widest["natural"]:
                out["widest_picture"] = {"cell": index, "natural": image.get("natural", 0),
                                         "shown": image.get("shown", 0)}  # fmt: skip
            if image.get("natural", 0) > WIDTH:
                problem(index, cell, f"a picture {image['natural']} px wide (the window is "
                                     f"{WIDTH} px)")  # fmt: skip
        for wide in cell.get("overflow", []):  # a note: the window, not the picture, is small
            out["notes"].append(f"cell {index} ({_first_line(cell.get('source', ''))!r}): an "
                                f"output scrolls sideways ({wide.get('scroll')} px shown in "
                                f"{wide.get('client')} px)")  # fmt: skip
    out["named"] = sorted(named)
    return out


def lessons_to_run(state_tasks, last_named: dict[str, list], lessons) -> list[str]:
    """The lessons a state in between must run: those whose last run named one of the tasks
    newly written in it (``state_tasks``). Others stop where they stopped before."""
    new = set(state_tasks)
    return [name for name in lessons if new & set(last_named.get(name, ()))]


def course_states(tasks) -> list[tuple[str, tuple[str, ...]]]:
    """Day one, then each assignment written in turn: ``[("day one", ()), ("A1", (A1's
    tasks)), ("A1-A2", ...), ...]``, assignments and tasks in natural order."""

    def key(task):
        return tuple(int(p) for p in re.findall(r"\d+", task))

    tasks = sorted(set(tasks), key=key)
    assignments = sorted({t.split(".")[0] for t in tasks}, key=key)
    states, written = [("day one", ())], ()
    for assignment in assignments:
        written += tuple(t for t in tasks if t.split(".")[0] == assignment)
        name = assignment if assignment == assignments[0] else f"{assignments[0]}-{assignment}"
        states.append((name, written))
    return states


def report_text(states: list[dict]) -> str:
    """The short text report: one line per state and lesson, then every problem."""
    lines = []
    for state in states:
        written = ", ".join(state["written"]) or "nothing"
        lines.append(f"== {state['name']} (written: {written})")
        for lesson in state["lessons"]:
            checks = " ".join(f"{k} {v}" for k, v in lesson["checks"].items() if v)
            widest = lesson["widest_picture"]
            run = f"{lesson['cells_run']:>3}/{lesson['cells_total']:<3}"
            lines.append(
                f"  {lesson['lesson']:<24} cells {run}"
                f" tracebacks {len(lesson['tracebacks'])}  checks: {checks or '-'}"
                f"  widest picture {widest['natural'] if widest else '-'} px"
                f"  {lesson['seconds']:.0f} s"
            )
    lines.append("")
    found = [(s["name"], lesson["lesson"], p) for s in states for lesson in s["lessons"]
             for p in lesson["problems"]]  # fmt: skip
    lines.append(f"{len(found)} problems" + (":" if found else ""))
    lines += [f"  [{state}] {lesson} {p}" for state, lesson, p in found]
    notes: dict[tuple[str, str], list[str]] = {}  # the same output in several states: once
    for state in states:
        for lesson in state["lessons"]:
            for note in lesson.get("notes", []):
                notes.setdefault((lesson["lesson"], note), []).append(state["name"])
    if notes:
        lines.append(f"{len(notes)} notes (outputs wider than the notebook's column):")
        lines += [f"  {lesson} {note} [{', '.join(where)}]"
                  for (lesson, note), where in notes.items()]  # fmt: skip
    return "\n".join(lines) + "\n"


# -- the edition and its states -------------------------------------------------------------
def make_edition(folder: Path) -> tuple[Path, dict]:
    """The student edition as the instructor guide makes it (``tinygrad-edu make-student``,
    which records the lessons' outputs), and its stubbed library files as made."""
    out = folder / "course-student"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "tinygrad_course", "make-student", str(ROOT),
                           "--out", str(out)], env=env, capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"make-student failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    stubbed = {rel: (out / rel).read_text(encoding="utf-8") for rel in _library_files()}
    return out, stubbed


def _library_files() -> list[str]:
    from tinygrad_course.grading.tables import regions

    return sorted({rel for places in regions(ROOT).values() for rel, _ in places})


def write_state(out: Path, stubbed: dict, written) -> None:
    """The edition with the reference solution of each task in ``written``, stubs elsewhere
    (as ``tests/test_lesson_states.py`` makes its states)."""
    from tinygrad_course.grading.splice import splice, task_functions

    for rel, text in stubbed.items():
        reference = (ROOT / rel).read_text(encoding="utf-8")
        unwritten = set(task_functions(reference)) - set(written)
        (out / rel).write_text(splice(reference, text, keep=unwritten).text, encoding="utf-8")


# -- JupyterLab -----------------------------------------------------------------------------
_SETTINGS = {
    # every cell attached to the page, so that what is read is laid out (the default,
    # contentVisibility, skips the layout of cells out of view)
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    # the lessons' files stay as made: nothing saved between states
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },  # fmt: skip
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on the edition, its kernels importing the edition's library."""

    def __init__(self, edition: Path, scratch: Path):
        self.token, self.port = secrets.token_hex(16), _free_port()
        settings = scratch / "settings"
        for rel, value in _SETTINGS.items():
            (settings / rel).parent.mkdir(parents=True, exist_ok=True)
            (settings / rel).write_text(json.dumps(value), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
        env.update(PYTHONPATH=str(edition), PYTHONDONTWRITEBYTECODE="1",
                   JUPYTER_CONFIG_DIR=str(scratch / "config"),
                   JUPYTER_RUNTIME_DIR=str(scratch / "runtime"))  # fmt: skip
        env.pop("TINYGRAD_EDU_STRICT", None)  # as a student runs it: checks only show
        jupyter = Path(sys.executable).with_name("jupyter")
        self.log = open(scratch / "lab.log", "w")  # noqa: SIM115
        self.process = subprocess.Popen(
            [str(jupyter), "lab", "--no-browser", f"--port={self.port}", "--ip=127.0.0.1",
             f"--ServerApp.token={self.token}", f"--ServerApp.root_dir={edition}",
             "--LabApp.expose_app_in_browser=True", f"--LabApp.user_settings_dir={settings}",
             *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
             f"--LabApp.workspaces_dir={scratch / 'workspaces'}"],
            cwd=edition, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.base = f"http://127.0.0.1:{self.port}"
        try:
            self._wait(scratch)
        except BaseException:
            self.close()
            raise

    def _wait(self, scratch: Path) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=2)
                return
            except OSError:
                time.sleep(0.5)
        self.log.flush()
        log = (scratch / "lab.log").read_text(encoding="utf-8", errors="replace")
        how = "stopped" if self.process.poll() is not None else "did not answer in 120 s"
        raise SystemExit(f"jupyter lab {how}:\n{log[-3000:]}")

    def close(self) -> None:
        if self.log.closed:
            return
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


_OPEN = """async (path) => {
  const app = window.jupyterapp;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  await panel.context.ready;
  await panel.sessionContext.ready;
  app.shell.activateById(panel.id);
  return panel.id;
}"""

# not awaited: the walk polls, so that a cell that never ends meets the lesson's timeout
_RUN_ALL = "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"

_STATUS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  const prompts = [...panel.node.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
  return {kernel: kernel ? kernel.status : 'none',
          running: prompts.filter(p => p.textContent.includes('*')).length};
}"""

# per cell: what a student sees (see summarize)
_READ_PAGE = r"""() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets.map(cell => {
    const node = cell.node;
    const code = cell.model.type === 'code';
    const outputs = [...node.querySelectorAll('.jp-OutputArea-output')];
    return {
      type: cell.model.type,
      source: cell.model.sharedModel.getSource(),
      prompt: code ? (node.querySelector('.jp-InputArea-prompt') || {}).textContent || '' : '',
      errors: outputs.filter(o => o.dataset.mimeType === 'application/vnd.jupyter.stderr')
                     .map(o => o.innerText),
      checks: [...node.querySelectorAll('.tge-check')].map(box => {
        const kind = [...box.classList].find(c => c.startsWith('tge-') && c !== 'tge-check');
        const heads = box.querySelectorAll(':scope > b');
        return {kind: kind ? kind.slice(4) : '', name: heads.length > 1 ? heads[1].innerText : '',
                text: box.innerText};
      }),
      images: [...node.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output svg')]
        .filter(i => !i.closest('.tge-check'))
        .map(i => ({natural: i.naturalWidth || Math.round(i.getBoundingClientRect().width),
                    shown: Math.round(i.getBoundingClientRect().width)})),
      warnings: outputs.filter(o => !o.querySelector('.tge-check'))
        .flatMap(o => o.innerText.split('\n').filter(l => /\b[A-Z]\w*Warning: /.test(l))),
      overflow: outputs.filter(o => o.scrollWidth > o.clientWidth + 2)
                       .map(o => ({scroll: o.scrollWidth, client: o.clientWidth})),
    };
  });
}"""

_CLOSE = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.shutdown();
  panel.context.model.dirty = false;
  panel.dispose();
}"""


def walk_lesson(page, name: str, shot: Path, timeout: float) -> tuple[list, float, bool]:
    """Open ``notebooks/NAME.ipynb``, run all its cells, wait for the kernel, read the page
    and save a screenshot of its end: (cells as read, seconds, finished in time)."""
    page.evaluate(_OPEN, f"notebooks/{name}.ipynb")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext"
                           ".session.kernel.status === 'idle'", timeout=120_000)  # fmt: skip
    start = time.monotonic()
    page.evaluate(_RUN_ALL)
    idle, finished = 0, False
    while time.monotonic() - start < timeout:
        time.sleep(1.0)
        status = page.evaluate(_STATUS)
        idle = idle + 1 if status["kernel"] == "idle" and status["running"] == 0 else 0
        if idle >= 3:  # idle for three polls in a row: Run All has reached the end
            finished = True
            break
    seconds = time.monotonic() - start
    page.wait_for_timeout(500)  # the last outputs' pictures load
    cells = page.evaluate(_READ_PAGE)
    page.evaluate("() => { const w = window.jupyterapp.shell.currentWidget.content.widgets; "
                  "w[w.length - 1].node.scrollIntoView({block: 'end'}); }")  # fmt: skip
    page.wait_for_timeout(300)
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))
    page.evaluate(_CLOSE)
    return cells, seconds, finished


def walk_state(edition: Path, scratch: Path, lessons, out: Path, written, day_one,
               timeout: float, state: str, chromium: str = CHROMIUM) -> list[dict]:  # fmt: skip
    from playwright.sync_api import sync_playwright

    lab = Lab(edition, scratch)
    results = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
            page.goto(f"{lab.base}/lab?reset&token={lab.token}")
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started"
                                   " !== undefined", timeout=120_000)  # fmt: skip
            page.evaluate("async () => { await window.jupyterapp.started; "
                          "await window.jupyterapp.restored; "
                          "window.jupyterapp.shell.collapseLeft(); }")  # fmt: skip
            for name in lessons:
                shot = out / _slug(state) / f"{name}.png"
                cells, seconds, finished = walk_lesson(page, name, shot, timeout)
                summary = summarize(cells, written, day_one)
                if not finished:
                    summary["problems"].insert(0, f"Run All did not finish in {timeout:.0f} s")
                summary.update(lesson=name, seconds=round(seconds, 1),
                               screenshot=str(shot.relative_to(out)))  # fmt: skip
                results.append(summary)
                print(
                    f"  {name}: {summary['cells_run']}/{summary['cells_total']} cells, "
                    f"{len(summary['problems'])} problems, {seconds:.0f} s",
                    flush=True,
                )
            browser.close()
    finally:
        lab.close()
    return results


def _slug(state: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "_", state).strip("_")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="browser-walk", help="the report's folder")
    parser.add_argument("--states", nargs="*", help="only these states (default: all)")
    parser.add_argument("--lessons", nargs="*", help="only the lessons whose names start so")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per lesson")
    parser.add_argument("--chromium", default=CHROMIUM, help="the browser's executable")
    args = parser.parse_args(argv)
    # a stopped walk (kill, Ctrl-C) still stops its JupyterLab and deletes its edition
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.path.insert(0, str(ROOT))
    from tests.test_lesson_states import DAY_ONE
    from tinygrad_course.grading.tables import regions

    if not _library_files():
        raise SystemExit("no solution regions here: run this in the instructor's repository")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    lessons = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
    if args.lessons:
        lessons = [n for n in lessons if n.startswith(tuple(args.lessons))]
    states = course_states(regions(ROOT))
    if args.states:
        states = [s for s in states if s[0] in args.states]
    report, last_named = [], {}
    with tempfile.TemporaryDirectory(prefix="browser-walk-") as tmp:
        edition, stubbed = make_edition(Path(tmp))
        # the lessons as made, with their times: JupyterLab's jupytext refuses a notebook
        # newer than its paired .py when the two differ
        notebooks = {p: (p.read_bytes(), p.stat()) for p in (edition / "notebooks").iterdir()
                     if p.suffix in (".ipynb", ".py")}  # fmt: skip
        for index, (state, written) in enumerate(states):
            first_or_last = state == "day one" or index == len(states) - 1
            new = tuple(t for t in written if t not in (states[index - 1][1] if index else ()))
            run = lessons if first_or_last or not last_named else \
                lessons_to_run(new, last_named, lessons)  # fmt: skip
            print(f"{state}: {len(run)} lessons", flush=True)
            write_state(edition, stubbed, written)
            for path, (data, stat) in notebooks.items():
                path.write_bytes(data)
                os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            scratch = Path(tmp) / f"lab-{index}"
            results = walk_state(edition, scratch, run, out, written, DAY_ONE, args.timeout,
                                 state, args.chromium) if run else []  # fmt: skip
            for lesson in results:
                last_named[lesson["lesson"]] = lesson["named"]
            report.append({"name": state, "written": list(written), "lessons": results,
                           "skipped": [n for n in lessons if n not in run]})  # fmt: skip
            (out / "walk.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    text = report_text(report)
    (out / "walk.txt").write_text(text, encoding="utf-8")
    print(text)
    return 1 if any(lesson["problems"] for s in report for lesson in s["lessons"]) else 0


if __name__ == "__main__":
    sys.exit(main())
