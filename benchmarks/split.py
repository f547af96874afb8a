"""``python -m benchmarks.split``: what the MLP step's gap to hand-written numpy is made of.

The MLP step with class-index labels (``mlp_labels`` of ``benchmarks.user``) is timed at four
sizes, each against the hand-written numpy step of the same size and PyTorch, with
interleaved repetitions as in ``benchmarks.run``:

* ``2x8x8x10``: every array is tiny, so the gap is what the framework costs per step (the
  Python of recording each op, of the engine and of each derivative rule), at any size;
* ``256x8x8x10``: the loss at the full batch, the matrix products still tiny;
* ``2x784x256x10``: the full weights, a batch of 2;
* ``256x784x256x10``: the benchmark itself.

A row's gap is the median of the implementation minus the median of the hand-written step.
The first row's gap is the fixed cost per step; what the last row adds to it grows with the
arrays. Results go into ``docs/performance.md`` between ``<!-- bench:split:start -->`` and
``<!-- bench:split:end -->``.

Options: ``--reps N`` (default 200), ``--quick`` (3 repetitions, tiny sizes only, writes
nothing unless ``--out`` is given), ``--out PATH``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys

from . import run, user  # run first: it pins BLAS to one thread before numpy is imported

__all__ = ["DIMS", "measure", "markdown", "main"]

DIMS = ((2, 8, 8, 10), (256, 8, 8, 10), (2, 784, 256, 10), (256, 784, 256, 10))
NAMES = {"numpy": "hand numpy", "eager": "tinygrad_edu eager", "torch": "PyTorch"}


def measure(reps: int, dims_list=DIMS) -> list:
    """``[(dims, {implementation: median seconds})]``, the results checked against the
    hand-written step first."""
    rows = []
    for dims in dims_list:
        case = user.CASES["mlp_labels"]("full", "cpu", dims=dims)
        run.check_agreement(case)
        rows.append((dims, run.time_case(case, reps)))
    return rows


def markdown(rows, header: str) -> str:
    """The table: each size's medians, and each implementation's gap to the hand-written step."""
    impls = [i for i in ("eager", "torch") if i in rows[0][1]]
    cols = ["hand numpy ms"] + [f"{NAMES[i]} ms (gap)" for i in impls]
    out = [header, "", "| batch x in x hidden x classes | " + " | ".join(cols) + " |",
           "|---|" + "---:|" * len(cols)]  # fmt: skip
    for dims, med in rows:
        ref = med["numpy"]
        cells = [f"{ref * 1e3:.3f}"]
        cells += [f"{med[i] * 1e3:.3f} ({(med[i] - ref) * 1e3:+.3f})" for i in impls]
        out.append(f"| {'x'.join(map(str, dims))} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.split",
                                description=__doc__.split("\n")[0])  # fmt: skip
    p.add_argument("--reps", type=int, default=200, help="interleaved repetitions per size")
    p.add_argument("--quick", action="store_true", help="3 repetitions of the tiny sizes")
    p.add_argument("--out", default=None, help=f"markdown file to update (default: {run.DOC})")
    args = p.parse_args(argv)
    if not run._THREADS_PINNED:  # numpy came first: start again with the variables set
        env = dict(os.environ, **{v: "1" for v in run._THREAD_VARS})
        argv = sys.argv[1:] if argv is None else list(argv)
        os.execve(sys.executable, [sys.executable, "-m", "benchmarks.split", *argv], env)
    if run.cases.torch is not None:
        run.cases.torch.set_num_threads(1)
    dims = DIMS[:2] if args.quick else DIMS
    rows = measure(3 if args.quick else args.reps, dims)
    header = (f"Measured {datetime.date.today().isoformat()} with `python -m benchmarks.split` "
              f"({3 if args.quick else args.reps} interleaved repetitions per size).\n"
              f"{run.machine()}.")  # fmt: skip
    text = markdown(rows, header)
    print(text)
    out = args.out or (None if args.quick else run.DOC)
    if out:
        run.write_doc(out, "split", text)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
