"""``python -m benchmarks.gpu_check`` (``make gpu-check``): the CuPy backend checked on a GPU
in one prepared run, each part in a process of its own under its own time limit.

Parts, in order (``--only NAME`` runs some of them):

* ``env``: the GPU, its driver and the versions of CUDA, CuPy, PyTorch and numpy.
* ``pytest``: ``pytest -m gpu`` over every file that holds a ``gpu`` test (``tests/gpu/`` and
  the others found by their marker), with counts and a JUnit XML file.
* ``bench``: the measurements of ``python -m benchmarks.run --device cuda`` for the MLP, CNN
  and GPT training steps, eager and ``tg.compile``d, against PyTorch CUDA in the same process,
  each benchmark on its own (one that fails does not stop the others).
* ``lesson07``, ``lesson14``: the lessons' jupytext sources executed cell by cell on the GPU
  (see :func:`run_lesson`: no Jupyter needed; drawings are skipped without the ``graphviz``
  package, and a failed exercise check raises).
* ``memory``: 1,000 training steps, eager and compiled, while CuPy's memory pool must stay
  flat after a warm-up.
* ``dlpack``: tensors both ways between this library and PyTorch CUDA (values, device,
  shared memory) and a gradient carried across by hand.

Without a GPU every part gets as far as it can (the tests are collected and skip, the loop
and the DLPack exchange run on the CPU as a stand-in) and says ``no GPU found: ...``.
``--dry-run`` is the quick version of that for CI (under half a minute).

Results go to ``--out`` (default ``$OUT``, else ``build/gpu-check``): ``summary.json`` (the
shape is :data:`SUMMARY_KEYS`), ``summary.md`` (rows for ``docs/gpu.md``), ``gpu-check.log``
(every part's output), ``junit-gpu.xml`` and ``bench-cuda.md``. Exit status: 0 when every
part that ran passed (parts that need a GPU and found none count as passed), 1 when a part
failed or ran out of time, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Seconds per part; they add up to 450, inside the 8 minutes a GPU session allows for the
# whole run with room for the interpreter starts. --budget scales them all.
PARTS = {"env": 20, "pytest": 150, "bench": 110, "lesson07": 35, "lesson14": 75,
         "memory": 35, "dlpack": 25}  # fmt: skip
# --dry-run: limits, not expected times (the whole takes about 15 s), loose for a loaded CI
DRY_RUN_PARTS = {"env": 30, "pytest": 90, "bench": 30, "lesson07": 30, "lesson14": 30,
                 "memory": 45, "dlpack": 30}  # fmt: skip
LESSONS = {"lesson07": "notebooks/07_gpu.py", "lesson14": "notebooks/14_gpt.py"}
BENCHMARKS = ("mlp_step", "tgc_mlp_step", "cnn_step", "tgc_cnn_step", "gpt_step",
              "tgc_gpt_step")  # fmt: skip
STATUSES = ("pass", "fail", "timeout", "no-gpu", "not run")
SUMMARY_KEYS = ("schema", "started", "seconds", "dry_run", "gpu", "parts", "exit_code")
PART_KEYS = ("status", "seconds", "line", "details")
RESULT = "GPU_CHECK_RESULT "  # a child's last line: this prefix, then its JSON result
# packages a lesson may go without: its cells that need them are skipped, not failed
OPTIONAL = {"graphviz": "drawings", "array_api_strict": "the strict array-API stand-in"}


# -- the GPU ----------------------------------------------------------------------------------
def gpu_status() -> tuple[bool, str]:
    """(found, why not): a usable CUDA device through CuPy, or the reason there is none."""
    try:
        import cupy  # noqa: PLC0415
    except ImportError as e:
        return False, f"CuPy is not installed ({e})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - any driver failure means no GPU here
        return False, f"CuPy sees no CUDA driver ({type(e).__name__}: {e})"
    if count < 1:
        return False, "CuPy sees no CUDA device"
    return True, ""


def _no_gpu(reason: str, more: str = "") -> dict:
    """A part that needs a GPU and found none; or, with a GPU, one left out by --dry-run
    (``reason`` is then empty)."""
    if not reason:
        return {"status": "not run", "line": "--dry-run" + (f": {more}" if more else "")}
    return {"status": "no-gpu", "line": f"no GPU found: {reason}" + (f"; {more}" if more else "")}


# -- parts run in child processes -------------------------------------------------------------
def part_env(dry_run: bool) -> dict:
    import platform  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    info = {"python": platform.python_version(), "numpy": np.__version__}
    try:
        import torch  # noqa: PLC0415

        info["torch"] = torch.__version__
        info["torch_cuda"] = torch.version.cuda
        info["torch_sees_gpu"] = bool(torch.cuda.is_available())
    except ImportError:
        info["torch"] = None
    found, why = gpu_status()
    if not found:
        return {**_no_gpu(why), "details": info}
    import cupy  # noqa: PLC0415

    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])

    def version(v):
        return f"{v // 1000}.{v % 1000 // 10}"

    info.update(name=name, devices=rt.getDeviceCount(), cupy=cupy.__version__,
                cuda_driver=version(rt.driverGetVersion()),
                cuda_runtime=version(rt.runtimeGetVersion()),
                memory_gib=round(props["totalGlobalMem"] / 2**30, 1),
                compute_capability=f"{props['major']}.{props['minor']}")  # fmt: skip
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)  # fmt: skip
        info["driver"] = out.stdout.strip().splitlines()[0] if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, IndexError):
        info["driver"] = None
    line = (f"{name}, driver {info['driver'] or info['cuda_driver']}, CUDA runtime "
            f"{info['cuda_runtime']}, CuPy {info['cupy']}, PyTorch {info['torch']}")  # fmt: skip
    return {"status": "pass", "line": line, "details": info}


def _mlp(tg, device, seed=0):
    """A 784-128-10 MLP, its data (batch 64) and SGD: the memory loop's model."""
    import numpy as np  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    x = tg.tensor(rng.standard_normal((64, 784)).astype(np.float32), device=device)
    y = tg.tensor(rng.integers(0, 10, 64), device=device)
    tg.manual_seed(seed)
    model = tg.nn.Sequential(tg.nn.Linear(784, 128), tg.nn.ReLU(), tg.nn.Linear(128, 10))
    model.to(device)
    opt = tg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def step(xb, yb):
        opt.zero_grad()
        loss = tg.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    return step, x, y


def part_memory(dry_run: bool, steps: int = 1000, warmup: int = 100) -> dict:
    """``steps`` training steps, eager then compiled; after ``warmup`` steps the bytes in use
    in CuPy's pool must not grow (a leak of one small array per step would show as a line)."""
    import tinygrad_edu as tg  # noqa: PLC0415

    found, why = gpu_status()
    if not found or dry_run:
        steps = 20
        losses = {}
        for kind in ("eager", "compiled"):
            step, x, y = _mlp(tg, "cpu")
            fn = tg.compile(step) if kind == "compiled" else step
            first = fn(x, y).item()
            for _ in range(steps - 1):
                last = fn(x, y).item()
            if not last < first:
                return {"status": "fail", "line": f"{kind} loop on the CPU: the loss did not "
                        f"fall ({first:.4f} -> {last:.4f})"}  # fmt: skip
            losses[kind] = [first, last]
        return {**_no_gpu(why, f"the loop ran {steps} steps on the CPU instead (eager and "
                          "compiled, the loss fell); the pool check needs CuPy"),
                "details": {"cpu_losses": losses}}  # fmt: skip
    import gc  # noqa: PLC0415

    import cupy  # noqa: PLC0415

    pool = cupy.get_default_memory_pool()
    details, problems = {}, []
    for kind in ("eager", "compiled"):
        step, x, y = _mlp(tg, "cuda")
        fn = tg.compile(step) if kind == "compiled" else step
        used, settled = [], {}
        for i in range(steps):
            loss = fn(x, y)
            if i in (0, steps - 1):
                settled["loss_first" if i == 0 else "loss_last"] = loss.item()
            del loss
            if i in (warmup, steps - 1):  # the live set alone: nothing left for the collector
                gc.collect()
                cupy.cuda.runtime.deviceSynchronize()
                settled[i] = int(pool.used_bytes())
            used.append(int(pool.used_bytes()))
        growth = settled[steps - 1] - settled[warmup]
        peak = max(used[warmup:]) - settled[warmup]
        details[kind] = {"used_bytes_after_warmup": settled[warmup], "end_growth_bytes": growth,
                         "peak_above_warm_bytes": peak, "pool_total_bytes": pool.total_bytes(),
                         "loss_first": settled["loss_first"], "loss_last": settled["loss_last"],
                         "used_bytes_samples": used[:: max(1, steps // 20)]}  # fmt: skip
        # flat: the same live set at the end as after the warm-up (64 KiB of slack: a leak of
        # even one 512-byte block per step would be 450 KiB by then)
        if growth > 64 * 2**10:
            problems.append(f"{kind}: {growth} bytes more in use at step {steps} than at step "
                            f"{warmup}")  # fmt: skip
        if not settled["loss_last"] < settled["loss_first"]:
            problems.append(f"{kind}: the loss did not fall ({settled['loss_first']:.4f} -> "
                            f"{settled['loss_last']:.4f})")  # fmt: skip
    if problems:
        return {"status": "fail", "line": "; ".join(problems), "details": details}
    line = "; ".join(f"{k}: {v['used_bytes_after_warmup'] / 2**20:.2f} MiB in use at steps "
                     f"{warmup} and {steps} ({v['end_growth_bytes']:+d} bytes), peak "
                     f"+{v['peak_above_warm_bytes'] / 2**20:.2f} MiB within a step"
                     for k, v in details.items())  # fmt: skip
    return {
        "status": "pass",
        "line": f"flat after {warmup} warm-up steps ({line})",
        "details": details,
    }


def dlpack_round_trip(tg, torch, tdev: str) -> dict:
    """Both ways between the libraries on ``tdev`` (PyTorch's name), checked; returns facts."""
    import numpy as np  # noqa: PLC0415

    facts = {}
    a = torch.arange(6, dtype=torch.float32, device=tdev).reshape(2, 3)
    t = tg.from_dlpack(a)  # PyTorch -> here: the same memory
    facts["into_device"] = str(t.device)
    assert t.shape == (2, 3) and str(t.dtype).endswith("float32"), (t.shape, t.dtype)
    assert np.array_equal(t.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    a[0, 0] = 42.0  # a write on one side shows on the other
    assert t[0, 0].item() == 42.0, "from_dlpack copied instead of sharing"
    u = tg.tensor(np.linspace(0, 1, 5, dtype=np.float64), device=t.device)
    b = torch.from_dlpack(u)  # here -> PyTorch
    facts["out_device"] = str(b.device)
    assert b.device.type == ("cuda" if tdev == "cuda" else "cpu"), b.device
    assert b.dtype == torch.float64 and torch.allclose(
        b.cpu(), torch.linspace(0, 1, 5, dtype=torch.float64)
    )
    b[1] = -1.0
    assert u[1].item() == -1.0, "torch.from_dlpack copied instead of sharing"
    # a gradient carried across by hand: PyTorch's part, then ours, then back
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((4, 3))
    x0 = rng.standard_normal((5, 4))
    w = torch.tensor(w0, requires_grad=True, device=tdev)
    x = torch.tensor(x0, device=tdev)
    h = torch.tanh(x @ w)  # PyTorch's half
    ht = tg.from_dlpack(h.detach()).requires_grad_()  # ours starts from its values
    loss = (ht.exp() * ht).sum()
    loss.backward()
    h.backward(torch.from_dlpack(ht.grad.detach()))  # our gradient into PyTorch's graph
    w_ref = torch.tensor(w0, requires_grad=True)
    h_ref = torch.tanh(torch.tensor(x0) @ w_ref)
    (h_ref.exp() * h_ref).sum().backward()
    assert torch.allclose(w.grad.cpu(), w_ref.grad, rtol=1e-10, atol=1e-12), "gradient across"
    facts["gradient_across"] = "matches PyTorch alone (float64)"
    return facts


def part_dlpack(dry_run: bool) -> dict:
    import tinygrad_edu as tg  # noqa: PLC0415

    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return {"status": "fail", "line": "PyTorch is not installed: the exchange needs it"}
    found, why = gpu_status()
    if not found or dry_run or not torch.cuda.is_available():
        facts = dlpack_round_trip(tg, torch, "cpu")
        reason = why or ("" if dry_run else "PyTorch sees no CUDA device")
        return {**_no_gpu(reason, "the exchange passed on the CPU (values, shared memory, a "
                          "gradient across)"), "details": facts}  # fmt: skip
    facts = dlpack_round_trip(tg, torch, "cuda")
    return {"status": "pass", "line": f"PyTorch CUDA -> {facts['into_device']}, "
            f"{facts['into_device']} -> PyTorch {facts['out_device']}, shared memory both ways, "
            f"gradient across {facts['gradient_across']}", "details": facts}  # fmt: skip


def part_bench(dry_run: bool, out: Path) -> dict:
    """The training-step benchmarks on CUDA, as ``python -m benchmarks.run --device cuda``
    runs them, but each on its own: one that fails (its implementations disagree, or it
    raises) is reported and the others are still timed. The table goes to bench-cuda.md."""
    found, why = gpu_status()
    if not found:
        return _no_gpu(why, "python -m benchmarks.run --device cuda would run "
                       + ", ".join(BENCHMARKS))  # fmt: skip
    from . import run as bench  # noqa: PLC0415
    from .cases import torch  # noqa: PLC0415

    if torch is not None:  # as benchmarks.run does on CUDA: full float32 on both sides
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    rows, failures, vs_torch = [], [], {}
    for name in BENCHMARKS:
        try:
            case = bench.ALL_CASES[name]("full", "cuda")
            bench.check_agreement(case, **bench.agreement_tolerance(name))
            reps = bench.QUICK_REPS if dry_run else bench.REPS[name]
            med = bench.time_case(case, reps)
            rows.append((case, med, {}))
            if "torch" in med:  # the targets are ratios to PyTorch CUDA
                vs_torch[name] = {k: round(v / med["torch"], 3) for k, v in med.items()
                                  if k != "torch"}  # fmt: skip
            print(f"{name}: " + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in med.items()),
                  flush=True)  # fmt: skip
        except Exception as e:  # noqa: BLE001 - named in the line, the traceback in the log
            traceback.print_exc()
            failures.append(f"{name}: {type(e).__name__}: {(str(e).splitlines() or [''])[0]}")
    header = (f"Measured {datetime.date.today().isoformat()} with `make gpu-check` on CUDA.\n"
              f"{bench.machine()}.")  # fmt: skip
    text = bench.markdown(rows, "cuda", header) if rows else header + "\n"
    (out / "bench-cuda.md").write_text(text)
    print(text, flush=True)
    ratios = {}
    for row in text.splitlines():
        cols = [c.strip() for c in row.strip().strip("|").split("|")]
        if row.startswith("| ") and len(cols) >= 6 and cols[0] != "benchmark" and "---" not in row:
            ratios[f"{cols[0]} / {cols[1]}"] = dict(zip(("ms", "ratio", "target", "result"),
                                                        cols[2:6]))  # fmt: skip
    details = {"ratios": ratios, "vs_torch": vs_torch, "failures": failures}
    misses = [k for k, v in ratios.items() if v["result"] == "miss"]
    against = "; ".join(f"{n} " + ", ".join(f"{k} {r:.2f}x" for k, r in v.items())
                        for n, v in vs_torch.items())  # fmt: skip
    line = f"{len(rows)} of {len(BENCHMARKS)} benchmarks timed (bench-cuda.md)" + (
        f"; time / PyTorch CUDA's: {against}" if against else "") + (
        f"; targets missed: {'; '.join(misses)}" if misses else "")  # fmt: skip
    if failures:
        return {"status": "fail", "line": f"{line}; failed: {'; '.join(failures)}",
                "details": details}  # fmt: skip
    return {"status": "pass", "line": line, "details": details}


# -- lessons ----------------------------------------------------------------------------------
def lesson_cells(path: Path) -> list[tuple[int, str]]:
    """The code cells of a jupytext percent script: (1-based line of the cell, source)."""
    cells, current, start, kind = [], [], 1, "code"
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("# %%"):
            if kind == "code" and "".join(current).strip():
                cells.append((start, "\n".join(current)))
            current, start = [], n + 1
            kind = "markdown" if "[markdown]" in line else "code"
            continue
        current.append(line)
    if kind == "code" and "".join(current).strip():
        cells.append((start, "\n".join(current)))
    return [(s, c) for s, c in cells if not c.lstrip().startswith("# ---\n# jupyter:")]


def missing_imports(path: Path) -> list[str]:
    """Top-level packages the lesson imports that are not installed."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:  # not the guarded ones (``if HAS_GPU: import cupy``, try/except)
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names if not _installed(n))


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _missing_optional(e: BaseException) -> str | None:
    """The optional package an error is about, else None: an ImportError of it (the library's
    drawing error names ``graphviz`` in words), or an exercise check that failed only because
    it could not import it (lesson 7's check also runs the answer on ``array_api_strict``)."""
    if isinstance(e, ImportError):
        name = (getattr(e, "name", None) or "").split(".")[0]
        if name in OPTIONAL:
            return name
        return next((p for p in OPTIONAL if f"`{p}`" in str(e) or f"'{p}'" in str(e)), None)
    if isinstance(e, AssertionError):
        return next((p for p in OPTIONAL if f"No module named '{p}'" in str(e)), None)
    return None


def run_lesson(path: Path, need_gpu: bool = True) -> dict:
    """Execute a lesson's code cells in order in one namespace, as a notebook kernel would.

    Failed exercise checks raise (``TINYGRAD_EDU_STRICT=1``). A cell that needs a package from
    :data:`OPTIONAL` that is not installed is skipped, and so is a later cell that fails only
    because a name from a skipped cell is missing; anything else stops the lesson as a failure.
    With ``need_gpu`` the lesson must have put arrays on the GPU.
    """
    os.environ["TINYGRAD_EDU_STRICT"] = "1"
    os.environ.setdefault("MPLBACKEND", "Agg")
    cells = lesson_cells(path)
    ns = {"__name__": "__main__", "__file__": str(path)}
    skipped, missing = [], set()
    start = time.perf_counter()
    for i, (line, source) in enumerate(cells, 1):
        try:
            exec(compile(source, f"{path.name} (cell {i}, line {line})", "exec"), ns)  # noqa: S102
        except Exception as e:  # noqa: BLE001 - reported, with its traceback
            package = _missing_optional(e)
            if package or (missing and isinstance(e, NameError)):
                missing.add(package) if package else None
                skipped.append(f"cell {i} (line {line}): " + (
                    f"needs {package} ({OPTIONAL[package]})" if package
                    else f"needs a cell skipped above ({e})"))  # fmt: skip
                print(f"[skipped] {skipped[-1]}", flush=True)
                continue
            traceback.print_exc()
            return {"status": "fail", "line": f"{path.name}: cell {i} (line {line}) raised "
                    f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
                    "details": {"cells": len(cells), "ran": i - 1 - len(skipped),
                                "skipped": skipped}}  # fmt: skip
    details = {"cells": len(cells), "ran": len(cells) - len(skipped), "skipped": skipped,
               "missing_packages": sorted(missing),
               "seconds": round(time.perf_counter() - start, 1)}  # fmt: skip
    if need_gpu:
        import cupy  # noqa: PLC0415

        held = cupy.get_default_memory_pool().total_bytes()
        details["gpu_pool_bytes"] = held
        if held == 0:
            return {"status": "fail", "line": f"{path.name} ran, but put nothing on the GPU",
                    "details": details}  # fmt: skip
    note = f", {len(skipped)} skipped (missing: {', '.join(sorted(missing))})" if skipped else ""
    return {
        "status": "pass",
        "details": details,
        "line": f"{path.name}: {details['ran']} of {len(cells)} cells ran{note} in "
        f"{details['seconds']} s" + (" on the GPU" if need_gpu else " on the CPU"),
    }


def part_lesson(path: Path, dry_run: bool) -> dict:
    missing = [m for m in missing_imports(path) if m not in OPTIONAL]
    optional = [m for m in missing_imports(path) if m in OPTIONAL]
    found, why = gpu_status()
    if missing:
        return {"status": "fail", "line": f"{path.name} imports {', '.join(missing)}, which "
                "is not installed (carry it as a wheel: docs/gpu.md)"}  # fmt: skip
    cells = lesson_cells(path)
    for i, (line, source) in enumerate(cells, 1):
        compile(source, f"{path.name} (cell {i}, line {line})", "exec")  # a syntax error fails
    if not found or dry_run:
        absent = f"; without {', '.join(optional)} their cells would be skipped" if optional else ""
        return _no_gpu(why, f"{path.name}'s {len(cells)} code cells compile and its "
                       f"imports resolve{absent}")  # fmt: skip
    return run_lesson(path, need_gpu=True)


# -- the parent: children under time limits ---------------------------------------------------
def _stop(proc: subprocess.Popen) -> None:
    """Interrupt the child's process group (pytest then writes its report), then kill it."""
    for sig, wait in ((signal.SIGINT, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_child(cmd: list[str], timeout: float, log) -> tuple[int | None, str, float]:
    """Run ``cmd`` in its own process group with its output into ``log``; returns (exit code
    or None on a timeout, the output, seconds)."""
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
        PYTHONUNBUFFERED="1",
    )
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    out: list[str] = []

    def pump():
        for line in proc.stdout:
            out.append(line)
            log.write(line)
            log.flush()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        code = None
    reader.join(10)
    return code, "".join(out), time.perf_counter() - start


def _child_result(code, output: str) -> dict | None:
    for line in reversed(output.splitlines()):
        if line.startswith(RESULT):
            return json.loads(line[len(RESULT) :])
    return None


def _tail(output: str, n: int = 3) -> str:
    lines = [ln for ln in output.strip().splitlines() if ln.strip() and
             not ln.startswith(RESULT)]  # fmt: skip
    return " | ".join(lines[-n:])


def gpu_test_files() -> list[str]:
    """``tests/gpu/`` first (its device tests before the op table), then every other test file
    that holds a ``gpu`` mark."""
    own = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "gpu").glob("test_*.py"))
    others = []
    for p in sorted((ROOT / "tests").rglob("test_*.py")):
        rel = str(p.relative_to(ROOT))
        if rel.startswith(os.path.join("tests", "gpu")):
            continue
        if re.search(r"pytest\.mark\.gpu\b", p.read_text(encoding="utf-8")):
            others.append(rel)
    return own + others


def _pytest_counts(output: str, junit: Path) -> dict:
    counts = {}
    if junit.exists():
        text = junit.read_text(encoding="utf-8", errors="replace")
        m = re.search(r"<testsuite [^>]*", text)
        if m:
            for key in ("tests", "failures", "errors", "skipped"):
                k = re.search(rf'\b{key}="(\d+)"', m.group(0))
                counts[key] = int(k.group(1)) if k else 0
            counts["passed"] = (
                counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
            )
    m = re.findall(r"^=+ (.*(?:passed|failed|skipped|error|deselected|no tests ran).*?) =+$",
                   output, re.M)  # fmt: skip
    if m:
        counts["line"] = m[-1]
    reasons = re.findall(r"^SKIPPED \[(\d+)\] [^:]+:\d+: (.*)$", output, re.M)
    if reasons:
        by = {}
        for n, why in reasons:
            by[why] = by.get(why, 0) + int(n)
        counts["skip_reasons"] = by
    return counts


def _grading_plugin_args() -> list[str]:
    """The graded A4 tests use the grading plugin's fixtures: pyproject.toml's ``addopts``
    loads it for every pytest run from the repository's root, as this one is."""
    return []


def parent_pytest(out: Path, timeout: float, log, dry_run: bool, found: bool, why: str) -> dict:
    junit = out / "junit-gpu.xml"
    files = gpu_test_files()
    cmd = [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-rs", "-p", "no:cacheprovider",
           f"--junitxml={junit}", *_grading_plugin_args(), *files]  # fmt: skip
    if _installed("pytest_randomly"):
        cmd[3:3] = ["-p", "no:randomly"]  # in file order: the op table after the device tests
    if _installed("pytest_timeout"):
        cmd[3:3] = ["--timeout=60"]  # one hung test fails alone instead of using up the part
    code, output, sec = run_child(cmd, timeout, log)
    counts = _pytest_counts(output, junit)
    counts["files"] = len(files)
    summary = counts.get("line", _tail(output, 1))
    if code is None:
        return {
            "status": "timeout",
            "seconds": sec,
            "details": counts,
            "line": f"stopped after {timeout:.0f} s (interrupted; counts so far: {summary})",
        }
    tests = counts.get("tests", 0)
    if code not in (0, 5) or counts.get("failures") or counts.get("errors"):
        return {
            "status": "fail",
            "seconds": sec,
            "details": counts,
            "line": f"pytest -m gpu: {summary} (exit {code})",
        }
    if not found or counts.get("skipped", 0) == tests:
        return {**_no_gpu(why or "every gpu test skipped", f"pytest -m gpu collected {tests} "
                          f"tests in {len(files)} files and skipped them ({summary})"),
                "seconds": sec, "details": counts}  # fmt: skip
    return {
        "status": "pass",
        "seconds": sec,
        "details": counts,
        "line": f"pytest -m gpu: {summary}",
    }


def parent_child(part: str, timeout: float, log, dry_run: bool, out: Path) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.gpu_check", "--child", part, "--out", str(out)]
    if dry_run:
        cmd.append("--dry-run")
    code, output, sec = run_child(cmd, timeout, log)
    if code is None:
        return {
            "status": "timeout",
            "seconds": sec,
            "line": f"stopped after {timeout:.0f} s: {_tail(output, 2) or 'no output'}",
        }
    result = _child_result(code, output)
    if result is None:
        return {
            "status": "fail",
            "seconds": sec,
            "line": f"exited {code} without a result: {_tail(output, 2) or 'no output'}",
        }
    result["seconds"] = sec
    return result


def child_main(part: str, dry_run: bool, out: Path) -> int:
    try:
        if part == "bench":
            result = part_bench(dry_run, out)
        elif part == "env":
            result = part_env(dry_run)
        elif part == "memory":
            result = part_memory(dry_run)
        elif part == "dlpack":
            result = part_dlpack(dry_run)
        elif part in LESSONS:
            result = part_lesson(ROOT / LESSONS[part], dry_run)
        else:
            raise ValueError(f"unknown part {part!r}")
    except Exception as e:  # noqa: BLE001 - one line for the summary, the traceback in the log
        traceback.print_exc()
        first = str(e).splitlines()[0] if str(e) else ""
        result = {"status": "fail", "line": f"{type(e).__name__}: {first}"}
    print(RESULT + json.dumps(result, default=str), flush=True)
    return 0


def markdown_rows(summary: dict) -> str:
    """The rows of docs/gpu.md's results table, from a summary."""
    gpu = summary["gpu"]
    lines = [f"Run {summary['started']}, {summary['seconds']:.0f} s: "
             + (gpu.get("line") or "no GPU"), "",
             "| part | result | seconds | what it found |", "|---|---|---:|---|"]  # fmt: skip
    for name, part in summary["parts"].items():
        line = part.get("line", "").replace("|", "\\|")
        lines.append(f"| {name} | {part['status']} | {part.get('seconds', 0):.0f} | {line} |")
    vs_torch = summary["parts"].get("bench", {}).get("details", {}).get("vs_torch", {})
    if vs_torch:
        lines += ["", "| benchmark | implementation | time / PyTorch CUDA's |", "|---|---|---:|"]
        for name, impls in vs_torch.items():
            lines += [f"| {name} | {impl} | {r:.2f} |" for impl, r in impls.items()]
    ratios = summary["parts"].get("bench", {}).get("details", {}).get("ratios", {})
    if ratios:
        lines += ["", "| benchmark / implementation | median ms | ratio | target | result |",
                  "|---|---:|---:|---|---|"]  # fmt: skip
        for k, v in ratios.items():
            lines.append(f"| {k} | {v['ms']} | {v['ratio']} | {v['target']} | {v['result']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gpu_check",
                                description=__doc__.split("\n")[0])  # fmt: skip
    p.add_argument(
        "--out",
        default=os.environ.get("OUT") or "build/gpu-check",
        help="folder for the results (default: $OUT, else build/gpu-check)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="quick: no part longer than a few seconds; the CI check",
    )
    p.add_argument("--only", action="append", choices=list(PARTS), help="run only this part")
    p.add_argument(
        "--budget",
        type=float,
        default=1.0,
        help="scale every part's time limit (default 1.0: 450 s in all)",
    )
    p.add_argument(
        "--child",
        choices=[k for k in PARTS if k != "pytest"],
        help=argparse.SUPPRESS,
    )  # a part run in its own process
    args = p.parse_args(argv)
    if args.child:
        return child_main(args.child, args.dry_run, Path(args.out))
    out = Path(args.out)
    if not out.is_absolute():
        out = ROOT / out
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("junit-gpu.xml", "bench-cuda.md"):
        (out / stale).unlink(missing_ok=True)
    limits = DRY_RUN_PARTS if args.dry_run else PARTS
    found, why = gpu_status()
    started = datetime.datetime.now().isoformat(timespec="seconds")
    t0 = time.perf_counter()
    print(f"gpu-check: results in {out}" + (" (dry run)" if args.dry_run else ""))
    print("GPU: found" if found else f"no GPU found: {why}", flush=True)
    parts: dict = {}
    with open(out / "gpu-check.log", "w", encoding="utf-8") as log:
        for name in PARTS:
            if args.only and name not in args.only:
                continue
            limit = limits[name] * args.budget
            log.write(f"\n===== {name} (limit {limit:.0f} s) =====\n")
            log.flush()
            print(f"[{name}] running (limit {limit:.0f} s) ...", flush=True)
            try:
                if name == "pytest":
                    result = parent_pytest(out, limit, log, args.dry_run, found, why)
                else:
                    result = parent_child(name, limit, log, args.dry_run, out)
            except Exception as e:  # noqa: BLE001 - one part failing does not stop the others
                traceback.print_exc(file=log)
                result = {"status": "fail", "line": f"{type(e).__name__}: {e}"}
            result = {
                "status": result["status"],
                "seconds": round(result.get("seconds", 0), 1),
                "line": result.get("line", ""),
                "details": result.get("details", {}),
            }
            parts[name] = result
            print(f"[{name}] {result['status']}: {result['line']}", flush=True)
    failed = [n for n, r in parts.items() if r["status"] in ("fail", "timeout")]
    env = parts.get("env", {})
    summary = {
        "schema": 1, "started": started, "seconds": round(time.perf_counter() - t0, 1),
        "dry_run": args.dry_run,
        "gpu": {"found": found, "reason": why, "line": env.get("line", ""),
                **env.get("details", {})},
        "parts": parts, "exit_code": 1 if failed else 0,
    }  # fmt: skip
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    rows = markdown_rows(summary)
    (out / "summary.md").write_text(rows)
    print()
    print(rows)
    verdict = f"FAILED: {', '.join(failed)}" if failed else "OK"
    print(f"gpu-check {verdict} in {summary['seconds']:.0f} s; summary: {out / 'summary.json'}")
    return summary["exit_code"]


if __name__ == "__main__":
    sys.exit(main())
