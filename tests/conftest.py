"""Shared test configuration."""

import fcntl
import json
import os
from pathlib import Path

import pytest

# One BLAS thread per test process. CI runs the suite in 2 worker processes on 2 cores; with
# OpenBLAS's default of a thread per core, medium matrix products (a convolution's) oversubscribe
# the cores and spin, up to 50x slower. The workers start after this file is read, so the
# setting reaches their numpy (a single-process run that already imported numpy is unaffected).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# tg.compile's default backend fuses elementwise chains into numba kernels where numba is
# installed. The suite pins the default to the numpy code generator (one documented switch,
# see tinygrad_edu/symbolic/static/fusion.py): numba's first compile of each kernel costs about
# a second, which over the suite's hundreds of tg.compile calls measured about 130 s more CPU
# time on a cold kernel cache, and most tests here are about tracing, guards and graph breaks,
# not about code generation (many compare with eager at 1e-6, which the numpy code meets and
# a kernel's other summation order need not). The fused path is guarded where it is the
# subject: tests/compiler/test_fusion.py asks for it, and runs a tenth of the differential
# fuzzer's programs with it. `TINYGRAD_EDU_COMPILE_BACKEND=fuse make test` runs all fused.
os.environ.setdefault("TINYGRAD_EDU_COMPILE_BACKEND", "numpy")

# pytester runs small pytest sessions in a temp dir (the grading plugin's tests use it). The
# grading plugin itself (points, --gradescope, the run/reference fixtures) is loaded by
# pyproject.toml's addopts for this repository's runs, not here: this file is shipped in the
# Gradescope zip, whose grader loads its own copy of the plugin.
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


# -- computed once per test run ----------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]


def shared(tmp_path_factory, name: str, compute):
    """``compute(folder)`` once per test run, shared by the pytest-xdist workers (JSON)."""
    uid = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if uid is None:
        return compute(tmp_path_factory.mktemp(name))
    root = tmp_path_factory.getbasetemp().parent / f"shared-{uid}"
    root.mkdir(exist_ok=True)
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = root / f"{name}.json"
        if cached.is_file():
            return json.loads(cached.read_text())
        value = compute(root / name)
        cached.write_text(json.dumps(value))
        return value


@pytest.fixture(scope="session")
def assignment_tests(tmp_path_factory):
    """The grading markers of the graded suites (``tables.collect``: a pytest collection in a
    subprocess), collected once per run for every test that reads them."""
    from tinygrad_course.grading import tables  # noqa: PLC0415

    return shared(tmp_path_factory, "assignment-tests", lambda _folder: tables.collect(ROOT))


@pytest.fixture(scope="session")
def student_edition(tmp_path_factory):
    """``(folder, report)``: this repository's student edition, made once per run. Read only:
    a test that writes into an edition makes its own."""
    from tinygrad_course.grading.student import make_student_edition  # noqa: PLC0415

    def make(folder):
        return {"folder": str(folder), "report": make_student_edition(ROOT, folder)}

    made = shared(tmp_path_factory, "student-edition", make)
    return Path(made["folder"]), made["report"]
