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
