"""``python -m benchmarks.fusion_compile``: what the fusing backend costs before its first fast
step, for the GPT training step of ``benchmarks.models`` (2 layers, 4 heads, AdamW).

Each measurement is a fresh Python process (numba keeps compiled kernels in memory too):

* **first compile**: an empty kernel cache directory; the first calls trace the step (and
  run it eagerly; the optimizer's state made by the first step is a new specialisation),
  the first compiled call generates, compiles and runs every kernel;
* **cached**: the same directory again, as a lesson's second run: the kernels' machine code
  is loaded from disk instead of compiled.

The first four calls are timed, and the plain numpy backend's alongside, for reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

__all__ = ["main", "measure"]

_CHILD = """
import json, time
from benchmarks.models import adamw, gpt, model_impls
import benchmarks.models as M
backend = {backend!r}
real = M.tg.compile
M.tg.compile = lambda f, **kw: real(f, **{{**kw, "backend": backend}})
impls, _ = model_impls(gpt, adamw, "full", compiled=True)
step = impls["compiled"]
times = []
for _ in range(4):
    t0 = time.perf_counter(); step(); times.append(time.perf_counter() - t0)
ex = step.compiled.explain()
print(json.dumps({{"calls_s": times, "kernels": len(ex.kernels), "traces": ex.compile_times,
                  "kernel_s": sum(k.compile_seconds or 0.0 for k in ex.kernels),
                  "distinct": len({{k.source for k in ex.kernels}})}}))
"""


def measure(backend: str, cache: str) -> dict:
    env = {**os.environ, "TINYGRAD_EDU_KERNEL_CACHE": cache}
    out = subprocess.run([sys.executable, "-c", _CHILD.format(backend=backend)], env=env,
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        rows = [("numpy code", measure("numpy", cache)),
                ("fused, first compile", measure("fuse", cache)),
                ("fused, cached", measure("fuse", cache))]  # fmt: skip
    print("| backend | calls 1, 2, 3, 4 (s) | traces | kernels (distinct sources) | "
          "kernels' first calls (s) |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name, r in rows:
        calls = ", ".join(f"{t:.2f}" for t in r["calls_s"])
        print(f"| {name} | {calls} | {r['traces']} | {r['kernels']} ({r['distinct']}) | "
              f"{r['kernel_s']:.2f} |")


if __name__ == "__main__":
    main()
