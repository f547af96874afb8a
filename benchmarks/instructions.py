"""``python -m benchmarks.instructions``: instructions per step, counted by valgrind.

On a shared, busy machine timings move by tens of percent from run to run; the number of
instructions a step executes does not. This runs one implementation of a benchmark case in a
child process under ``valgrind --tool=callgrind`` twice, once with ``k`` timed steps and once
with none (both after the same set-up and one warm-up step), and reports the difference
divided by ``k``: the instructions of one step, set-up and imports cancelled out.

Instructions are not time (a matrix product retires several multiply-adds per cycle, Python's
interpreter far fewer), so compare one implementation before and after a change with it, and
implementations against each other with ``benchmarks.run``'s interleaved timings.

Options: ``--only CASE`` (repeatable; any case of ``benchmarks.run``), ``--impl NAME``
(repeatable; default: every implementation but ``symbolic``), ``--reps k`` (default 2),
``--size tiny`` (a smoke test), ``--json`` (one JSON line per measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

__all__ = ["count", "main"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def _child(case: str, impl: str, size: str, reps: int) -> None:
    """Set up ``case``, run ``impl`` once, then ``reps`` more times (what is counted)."""
    if impl != "torch":  # the cases then run without PyTorch: a faster start under valgrind
        sys.modules.setdefault("torch", None)  # (unless it is imported already)
    from .cases import torch  # noqa: PLC0415
    from .run import ALL_CASES  # noqa: PLC0415

    c = ALL_CASES[case](size, "cpu")
    if impl not in c.impls:
        raise SystemExit(f"{case} has no implementation {impl!r} (it has {sorted(c.impls)})")
    if torch is not None:
        torch.set_num_threads(1)
    fn = c.impls[impl]
    fn()
    for _ in range(reps):
        fn()


def _run(case, impl, size, reps) -> int:
    path = ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONPATH=path)  # fmt: skip
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
           sys.executable, "-m", "benchmarks.instructions", "--child", case, impl, size,
           str(reps)]  # fmt: skip
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    found = _COLLECTED.findall(out.stderr)
    if out.returncode or not found:
        raise RuntimeError(f"{case}/{impl}: valgrind failed:\n{out.stderr[-3000:]}")
    return int(found[-1])


def count(case: str, impl: str, size: str = "full", reps: int = 2) -> int:
    """Instructions of one step of ``impl`` in benchmark ``case`` (see the module docstring)."""
    if shutil.which("valgrind") is None:
        raise RuntimeError("benchmarks.instructions needs valgrind (apt-get install valgrind)")
    return (_run(case, impl, size, reps) - _run(case, impl, size, 0)) // reps


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[2], argv[3], int(argv[4]))
        return 0
    from .run import ALL_CASES  # noqa: PLC0415

    p = argparse.ArgumentParser(prog="python -m benchmarks.instructions",
                                description=__doc__.split("\n")[0])  # fmt: skip
    p.add_argument("--only", action="append", choices=sorted(ALL_CASES), required=True)
    p.add_argument("--impl", action="append", help="implementation (repeatable)")
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--size", default="full", choices=["full", "tiny"])
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    for name in args.only:
        impls = args.impl or [i for i in ALL_CASES[name]("tiny", "cpu").impls if i != "symbolic"]
        for impl in impls:
            n = count(name, impl, args.size, args.reps)
            if args.json:
                print(json.dumps({"case": name, "impl": impl, "instructions": n}), flush=True)
            else:
                print(f"{name:<16} {impl:<9} {n / 1e6:12.3f} M instructions per step", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
