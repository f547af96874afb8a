"""Smoke test of the compiler benchmarks (benchmarks/compiler.py): every implementation runs at
a tiny size and agrees with hand-written numpy; the peak-memory extras are produced."""

import numpy as np
import pytest

from benchmarks import compiler
from benchmarks.run import ALL_CASES, REPS, check_agreement


@pytest.mark.parametrize("name", sorted(compiler.CASES))
def test_compiler_cases_agree_with_numpy(name):
    case = compiler.CASES[name]("tiny")
    assert name in ALL_CASES and name in REPS
    assert {"numpy", "symbolic", "compiled"} <= set(case.impls) and case.reference == "numpy"
    results = check_agreement(case, rtol=1e-4)
    for res in results.values():
        assert all(np.all(np.isfinite(r)) for r in res)


def test_mlp_case_reports_peak_memory_per_implementation():
    case = compiler.mlp_compiled("tiny")
    extras = case.extra["peak"](case)
    assert set(extras) == set(case.impls)
    assert all(text.startswith(" (peak ") and text.endswith(" MiB)") for text in extras.values())
