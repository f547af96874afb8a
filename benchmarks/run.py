"""``python -m benchmarks.run``: tinygrad_edu's engines side by side with hand-written numpy
and PyTorch, in one process, single-threaded, with interleaved repetitions.

Each repetition runs every implementation once, in a rotating order, so slow drifts of the
machine (other processes, CPU clocks) touch all of them alike; the table reports medians and
the ratio of each median to the reference implementation's. Results go into
``docs/performance.md`` between the markers ``<!-- bench:cpu:start -->`` and
``<!-- bench:cpu:end -->`` (``cuda`` with ``--device cuda``).

Options: ``--quick`` (few repetitions; prints, writes nothing unless ``--out`` is given),
``--only NAME`` (repeatable), ``--device cuda``, ``--out PATH``.
"""

from __future__ import annotations

import os
import sys

# Single-threaded BLAS for every library. The variables only take effect if they are set before
# numpy (or torch) is first imported, so they are set here, at the top, when this module is the
# program (`python -m benchmarks.run`); main() re-executes itself if that was too late.
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")  # fmt: skip
if "numpy" not in sys.modules:
    for _var in _THREAD_VARS:
        os.environ[_var] = "1"
_THREADS_PINNED = all(os.environ.get(v) == "1" for v in _THREAD_VARS)

import argparse  # noqa: E402
import datetime  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from . import cases, cnn, compiler, models, tgcompile, user  # noqa: E402

__all__ = ["main", "time_case", "check_agreement", "agreement_tolerance", "markdown"]

REPS = {"small_ops": 60, "mlp_step": 100, "deep_chain": 5, "digits": 7, **compiler.REPS,
        **cnn.REPS, **user.REPS, **models.REPS, **tgcompile.REPS}  # fmt: skip
# every module's cases, by name
ALL_CASES = {**cases.CASES, **compiler.CASES, **cnn.CASES, **user.CASES, **models.CASES,
             **tgcompile.CASES}  # fmt: skip
QUICK_REPS = 3
DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs",
                   "performance.md")  # fmt: skip


def check_agreement(case, rtol=2e-4, atol=1e-5) -> dict:
    """Run each implementation once; every result must match the reference's.

    Returns impl -> results (numpy arrays). Raises AssertionError naming the implementation
    and the result that differs.
    """
    results = {name: [cases.to_numpy(r) for r in fn()] for name, fn in case.impls.items()}
    ref = results[case.reference]
    for name, res in results.items():
        assert len(res) == len(ref), f"{case.name}: {name} returned {len(res)} results"
        for i, (a, b) in enumerate(zip(res, ref)):
            np.testing.assert_allclose(
                np.asarray(a, np.float64).reshape(-1), np.asarray(b, np.float64).reshape(-1),
                rtol=rtol, atol=atol,
                err_msg=f"{case.name}: {name} result {i} differs from {case.reference}",
            )  # fmt: skip
    return results


def agreement_tolerance(name: str) -> dict:
    """How closely benchmark ``name``'s implementations must agree (check_agreement's keywords)."""
    if name in cnn.CASES or name == "tgc_cnn_step":
        # float32 sums over 10^4 terms: compare at the results' scale
        return {"rtol": 1e-3, "atol": 1e-3}
    loose = name in ("deep_chain", "digits", "deep_f32")  # float32 over long chains
    return {"rtol": 1e-3 if loose else 2e-4}


def time_case(case, reps: int) -> dict:
    """Median seconds per implementation over ``reps`` interleaved repetitions."""
    names = list(case.impls)
    times = {n: [] for n in names}
    for n in names:  # warm-up (imports, caches, first-call costs)
        case.impls[n]()
    if case.sync:
        case.sync()
    for rep in range(reps):
        k = rep % len(names)
        for n in names[k:] + names[:k]:  # rotate the order each repetition
            t0 = time.perf_counter()
            case.impls[n]()
            if case.sync:
                case.sync()
            times[n].append(time.perf_counter() - t0)
    return {n: statistics.median(ts) for n, ts in times.items()}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    parts = [f"CPU: {cpu} ({os.cpu_count()} logical cores visible)",
             f"Python {platform.python_version()}, numpy {np.__version__}"]  # fmt: skip
    if cases.torch is not None:
        parts[-1] += f", torch {cases.torch.__version__}"
    else:
        parts[-1] += ", torch not installed"
    parts.append("threads: 1 (OMP/OPENBLAS/MKL_NUM_THREADS=1, torch.set_num_threads(1))")
    if hasattr(os, "getloadavg"):
        parts.append(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return "; ".join(parts)


def _fmt_ms(sec: float) -> str:
    ms = sec * 1e3
    return f"{ms:.3f}" if ms < 1 else (f"{ms:.2f}" if ms < 100 else f"{ms:.0f}")


def markdown(rows, device: str, header: str) -> str:
    """The results table (and the digits extras) as markdown."""
    out = [header, "",
           "| benchmark | implementation | median ms | ratio to reference | target | result |",
           "|---|---|---:|---:|---|---|"]  # fmt: skip
    for case, med, extras in rows:
        ref = med[case.reference]
        for name, sec in med.items():
            ratio = sec / ref
            target, verdict = "", ""
            if name == case.reference:
                target = "reference"
            elif name in case.targets:
                goal, milestone = case.targets[name]
                target = f"<= {goal:g}" + (f" (milestone <= {milestone:g})" if milestone else "")
                if ratio <= goal:
                    verdict = "pass"
                elif milestone and ratio <= milestone:
                    verdict = "milestone met, target missed"
                else:
                    verdict = "miss"
            label = {"numpy": "numpy (hand-written)" if device == "cpu" else "CuPy (hand-written)",
                     "torch": "PyTorch"}.get(name, f"tinygrad_edu {name}")  # fmt: skip
            extra = extras.get(name, "")
            out.append(f"| {case.title} | {label}{extra} | {_fmt_ms(sec)} | "
                       f"{ratio:.2f} | {target} | {verdict} |")  # fmt: skip
    return "\n".join(out) + "\n"


def _digits_extras(case, device) -> dict:
    extras = {}
    for name, fn in case.impls.items():
        if name == "torch" or device != "cpu":
            epochs, acc = fn()
            extras[name] = f" ({epochs} epochs, {100 * acc:.1f}%)"
            continue
        peak, (epochs, acc) = cases.peak_memory(fn)
        extras[name] = f" ({epochs} epochs, {100 * acc:.1f}%, peak {peak:.1f} MiB)"
    return extras


def write_doc(path: str, device: str, text: str) -> None:
    start, end = f"<!-- bench:{device}:start -->", f"<!-- bench:{device}:end -->"
    doc = open(path).read() if os.path.exists(path) else ""
    block = f"{start}\n{text}{end}"
    if start in doc and end in doc:
        doc = doc[: doc.index(start)] + block + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip() + ("\n\n" if doc else "") + block + "\n"
    with open(path, "w") as f:
        f.write(doc)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="few repetitions (a smoke test)")
    p.add_argument("--only", action="append", choices=sorted(ALL_CASES),
                   help="run only this benchmark (repeatable)")  # fmt: skip
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--out", default=None, help=f"markdown file to update (default: {DOC}; "
                                              "--quick writes nothing unless given)")  # fmt: skip
    args = p.parse_args(argv)
    if not _THREADS_PINNED:  # numpy was imported before us: start again with the variables set
        env = dict(os.environ, **{v: "1" for v in _THREAD_VARS})
        argv = sys.argv[1:] if argv is None else list(argv)
        os.execve(sys.executable, [sys.executable, "-m", "benchmarks.run", *argv], env)
    from tinygrad_edu import backend  # noqa: PLC0415

    device = "cuda" if backend.parse_device(args.device).type == "cuda" else "cpu"
    if device == "cuda" and not backend.cuda_available():
        print("--device cuda: skipped, no CUDA GPU with CuPy is visible on this machine "
              f"(install CuPy with {backend.GPU_INSTALL_HINT} on a GPU machine)")  # fmt: skip
        return 0
    if cases.torch is not None:
        cases.torch.set_num_threads(1)
        if device == "cuda":  # full float32 on both sides: CuPy's products do not use TF32
            cases.torch.backends.cuda.matmul.allow_tf32 = False
            cases.torch.backends.cudnn.allow_tf32 = False
    names = args.only or list(ALL_CASES)
    rows = []
    for name in names:
        case = ALL_CASES[name]("full", device)
        reps = QUICK_REPS if args.quick else REPS[name]
        print(f"{name}: {case.title} ({reps} interleaved repetitions)", flush=True)
        check_agreement(case, **agreement_tolerance(name))
        med = time_case(case, reps)
        extras = _digits_extras(case, device) if name == "digits" else {}
        if "peak" in case.extra:  # a case that measures its own peak memory
            extras = case.extra["peak"](case)
        for impl, sec in med.items():
            print(f"   {impl:>9}: {_fmt_ms(sec):>9} ms  x{sec / med[case.reference]:.2f}"
                  f"{extras.get(impl, '')}")  # fmt: skip
        rows.append((case, med, extras))
    when = datetime.date.today().isoformat()
    header = (f"Measured {when} with `python -m benchmarks.run"
              f"{' --device cuda' if device == 'cuda' else ''}` on {device.upper()}.\n"
              f"{machine()}.")  # fmt: skip
    text = markdown(rows, device, header)
    print()
    print(text)
    out = args.out or (None if args.quick or args.only else DOC)
    if out:
        write_doc(out, device, text)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
