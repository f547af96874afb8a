"""Shared test configuration."""

import os

# One BLAS thread per test process. CI runs the suite in 2 worker processes on 2 cores; with
# OpenBLAS's default of a thread per core, medium matrix products (a convolution's) oversubscribe
# the cores and spin, up to 50x slower. The workers start after this file is read, so the
# setting reaches their numpy (a single-process run that already imported numpy is unaffected).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# pytester runs small pytest sessions in a temp dir (the grading plugin's tests use it)
pytest_plugins = ["pytester"]

# Property tests draw their examples from a fixed seed, so `make test` (and CI) runs the same
# examples every time: a failure is reproducible and the suite cannot fail by chance on a draw
# nobody saw before (such a draw once put digamma's input 2e-5 from its pole). To explore new
# examples, run `TG_HYPOTHESIS=explore make test`; a failure found there becomes a fix and,
# where the draw was bad, a narrower strategy.
try:  # a GPU machine's image may lack Hypothesis: the gpu tests (make gpu-check) need none
    from hypothesis import settings
except ImportError:
    settings = None
if settings is not None:
    settings.register_profile("deterministic", derandomize=True, database=None)
    settings.register_profile("explore", derandomize=False)
    settings.load_profile(os.environ.get("TG_HYPOTHESIS", "deterministic"))
