"""Smoke test of the tg.compile benchmarks (benchmarks/tgcompile.py): at a tiny size every
implementation runs and agrees with the reference, over several steps (the compiled training
step updates the weights as the hand-written one does), and the compiled one is really
compiled (one program, no graph break)."""

import numpy as np
import pytest

from benchmarks import models, tgcompile
from benchmarks.run import ALL_CASES, REPS, check_agreement


@pytest.mark.parametrize("name", sorted(tgcompile.CASES))
def test_tgcompile_cases_agree(name):
    case = tgcompile.CASES[name]("tiny")
    assert name in ALL_CASES and name in REPS
    assert {"compiled", "eager"} <= set(case.impls)
    for _ in range(3):  # the first call traces; later calls run the program (and train on)
        results = check_agreement(case, rtol=1e-4, atol=1e-6)
        for res in results.values():
            assert all(np.all(np.isfinite(r)) for r in res)
    compiled = case.impls["compiled"].compiled
    assert compiled.explain().graph_break_count == 0 and len(compiled.programs) == 1
    if "numpy code" in case.impls:  # the default fuses (numba installed): kernels really run
        assert compiled.explain().kernels
        assert not case.impls["numpy code"].compiled.explain().kernels


@pytest.mark.parametrize("name", sorted(models.CASES))
def test_model_cases_are_registered_and_agree_with_pytorch(name):
    case = models.CASES[name]("tiny")
    assert name in ALL_CASES and name in REPS and case.reference == "torch"
    for _ in range(2):
        check_agreement(case, rtol=1e-4, atol=1e-6)
