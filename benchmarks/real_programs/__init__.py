"""Published PyTorch teaching programs, run unchanged on PyTorch and on tinygrad_edu.

Each program in ``programs.PROGRAMS`` (its source stored in ``sources/`` as published) runs
twice, each time in a fresh single-threaded process: first on PyTorch, then with ``torch``
bound to ``tinygrad_edu`` (``child.py`` says how, and what the runner records). The two loss
curves and wall times are compared here; ``python -m benchmarks.real_programs`` runs them all
and writes the table in docs/performance.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from benchmarks.real_programs.programs import BY_NAME, PROGRAMS, Program

__all__ = ["PROGRAMS", "run_program", "compare", "final_loss"]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
FIRST_RTOL_EXACT = 1e-5  # same parameters, same data, same draws: only float rounding differs
# Without shared parameters (dropout programs) both first losses are those of a fresh random
# model on the same batch distribution: close to ln(classes), but each init adds a few percent.
FIRST_RTOL_FREE = 0.1
# A program that stops at a loss threshold: its first PREFIX losses must agree to PREFIX_RTOL
# (the regression example drifts by under 1e-5 over its first 100 steps; by step 300, with
# losses near 1e-3, float32 rounding has grown to 10%, and the stopping step moves with it).
PREFIX, PREFIX_RTOL = 100, 1e-4


def _child(name: str, lib: str, tmp: str, timeout: float) -> dict:
    work = os.path.join(tmp, f"work_{lib}")
    os.makedirs(work)
    out = os.path.join(tmp, f"{lib}.json")
    env = {**os.environ, **dict.fromkeys(THREADS, "1"), "PYTHONPATH": ROOT}
    cmd = [sys.executable, "-m", "benchmarks.real_programs.child", name, lib, work, out]
    try:
        proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"name": name, "lib": lib, "error": f"timed out after {timeout} s",
                "losses": [], "seconds": float("nan"), "notes": []}  # fmt: skip
    if not os.path.exists(out):
        return {"name": name, "lib": lib, "error": proc.stderr[-3000:], "losses": [],
                "seconds": float("nan"), "notes": []}  # fmt: skip
    with open(out) as f:
        result = json.load(f)
    with open(os.path.join(tmp, f"stdout_{lib}.txt")) as f:
        result["stdout"] = f.read()[-2000:]
    return result


def run_program(name: str, timeout: float = 600.0) -> tuple[dict, dict]:
    """Run program ``name`` on PyTorch, then on tinygrad_edu; the two results (losses,
    seconds, error, notes, the tail of what the program printed)."""
    with tempfile.TemporaryDirectory(prefix=f"real_{name}_") as tmp:
        theirs = _child(name, "torch", tmp, timeout)
        ours = _child(name, "tinygrad_edu", tmp, timeout)
    return theirs, ours


def final_loss(losses: list[float]) -> float:
    """The mean of the last tenth of the curve (at least one loss, at most ten): one batch's
    loss is noisy, the mean of a few is what the program converged to."""
    k = min(10, max(1, len(losses) // 10))
    return sum(losses[-k:]) / k


def compare(prog: Program, theirs: dict, ours: dict) -> dict:
    """What the table shows for one program, and whether its losses agree."""
    row = {"name": prog.name, "exact": prog.exact, "error": ours["error"] or theirs["error"],
           "t_torch": theirs["seconds"], "t_ours": ours["seconds"]}  # fmt: skip
    lt, lo = theirs["losses"], ours["losses"]
    row["steps"] = (len(lt), len(lo))
    row["ratio"] = row["t_ours"] / row["t_torch"] if row["t_torch"] else float("nan")
    if row["error"] or not lt or not lo:
        row["ok"] = False
        return row
    row.update(first=(lt[0], lo[0]), final=(final_loss(lt), final_loss(lo)))
    rtol = FIRST_RTOL_EXACT if prog.exact else FIRST_RTOL_FREE
    first_ok = abs(lo[0] - lt[0]) <= rtol * max(1.0, abs(lt[0]))
    final_ok = abs(row["final"][1] - row["final"][0]) <= prog.final_rtol * abs(row["final"][0])
    falls = row["final"][0] < lt[0] and row["final"][1] < lo[0]
    same_length = len(lt) == len(lo)
    if prog.stop_below is not None:  # see Program.stop_below
        final_ok = lt[-1] < prog.stop_below and lo[-1] < prog.stop_below
        n = min(len(lt), len(lo), PREFIX)
        same_length = all(abs(a - b) <= PREFIX_RTOL * abs(a) for a, b in zip(lt[:n], lo[:n]))
    row["checks"] = {"first": first_ok, "final": final_ok, "falls": falls,
                     "same_length": same_length}  # fmt: skip
    row["ok"] = all(row["checks"].values())
    return row


def run_all(names: list[str] | None = None, timeout: float = 600.0) -> list[dict]:
    rows = []
    for prog in PROGRAMS:
        if names and prog.name not in names:
            continue
        theirs, ours = run_program(prog.name, timeout)
        row = compare(prog, theirs, ours)
        row["notes"] = ours.get("notes", [])
        row["stdout"] = (theirs.get("stdout", ""), ours.get("stdout", ""))
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "stdout"}), flush=True)
    return rows


__all__ += ["BY_NAME", "run_all"]
