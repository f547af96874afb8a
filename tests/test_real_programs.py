"""Published PyTorch teaching programs, run unchanged on this library and on PyTorch.

``benchmarks/real_programs`` keeps the programs' sources as published (karpathy's
ng-video-lecture and makemore, pytorch/examples, yunjey's pytorch-tutorial) and runs each
twice in fresh processes: on PyTorch and with ``import torch`` bound to ``tinygrad_edu``. The
runner gives both the same initial parameters (PyTorch's), the same random draws, dropout
masks and batch order, so the two runs compute the same numbers up to float rounding.

The fast programs run here; the others are marked slow. Each check:

- the program finishes on both libraries with no exception;
- both record the same number of losses (every ``backward()`` on a scalar), so the program
  took the same path; except the regression example, which stops when one batch's loss falls
  below 1e-3: on its noisy curve the crossing step moves with float rounding, so both runs
  must stop below 1e-3 and their first 100 losses agree to 1e-4;
- the first loss agrees to 1e-5 (relative): the same parameters and the same batch through the
  same model, only float32 rounding in a different order of operations differs (about 1e-7);
- the final loss (the mean of the last tenth of the curve) agrees to the program's
  ``final_rtol``: 1e-3 where a few hundred float32 steps of Adam or SGD keep the rounding
  differences small, 1e-2 for longer or chaotic runs (the regression example's x**4 features;
  LBFGS), 3e-2 for Adadelta at learning rate 1.0, which magnifies them;
- both curves fall (the final loss is below the first).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.real_programs import (
    FIRST_RTOL_EXACT,  # fmt: skip
    FIRST_RTOL_FREE,
    PREFIX,
    PREFIX_RTOL,
    compare,
    final_loss,
    run_program,
)
from benchmarks.real_programs.programs import BY_NAME, PROGRAMS

FAST = [p.name for p in PROGRAMS if p.fast]
SLOW = [p.name for p in PROGRAMS if not p.fast and p.name != "word_language_model"]


def check(name: str) -> None:
    prog = BY_NAME[name]
    theirs, ours = run_program(name, timeout=300)
    assert theirs["error"] is None, f"{name} failed on PyTorch:\n{theirs['error']}"
    assert ours["error"] is None, f"{name} failed on tinygrad_edu:\n{ours['error']}"
    lt, lo = theirs["losses"], ours["losses"]
    assert len(lt) > 1 and len(lo) > 1, (len(lt), len(lo))
    assert ours["masks_used"] == theirs["masks"], "the dropout masks were not all replayed"
    first_rtol = FIRST_RTOL_EXACT if prog.exact else FIRST_RTOL_FREE  # (see Program.exact)
    assert math.isclose(lo[0], lt[0], rel_tol=first_rtol), (lt[0], lo[0])
    if prog.stop_below is None:  # a fixed number of steps: the same path, step for step
        assert len(lt) == len(lo), (len(lt), len(lo))
        assert ours["replayed"] == theirs["tape"], "the random draws were not all replayed"
        assert math.isclose(final_loss(lo), final_loss(lt), rel_tol=prog.final_rtol), (
            final_loss(lt), final_loss(lo))  # fmt: skip
    else:  # it stops when the loss crosses a threshold: both must get there, and agree on
        # the way (the first 100 losses to 1e-4; compare() says why those numbers)
        assert lt[-1] < prog.stop_below and lo[-1] < prog.stop_below, (lt[-1], lo[-1])
        n = min(len(lt), len(lo), PREFIX)
        np.testing.assert_allclose(lo[:n], lt[:n], rtol=PREFIX_RTOL)
    assert final_loss(lo) < lo[0] and final_loss(lt) < lt[0]
    row = compare(prog, theirs, ours)
    assert row["ok"], row


@pytest.mark.parametrize("name", FAST)
def test_fast_program_agrees_with_pytorch(name):
    check(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_program_agrees_with_pytorch(name):
    check(name)


@pytest.mark.slow
def test_word_language_model_saves_the_whole_model():
    """pytorch/examples word_language_model/main.py trains, then ``torch.save(model, f)`` (a
    whole module, pickled) and ``torch.load(f)`` under ``safe_globals([RNNModel, ...])``,
    then ``model.rnn.flatten_parameters()`` and the test loss; its losses agree like the
    others' (to the looser first-loss tolerance: ``nn.LSTM``'s own dropout is not replayed)."""
    check("word_language_model")


def test_substitutions_match_the_sources():
    """Every size replacement matches the stored source exactly as often as stated (``source``
    raises otherwise), and a wrong count is refused with the file and the text named."""
    for prog in PROGRAMS:
        for file in {p.split("/")[-1] for p in prog.paths}:
            prog.source(file)
    bad = BY_NAME["bigram"]
    old = bad.subs["bigram.py"]
    bad.subs["bigram.py"] = [("max_iters = 3000", "max_iters = 1", 2)]
    try:
        with pytest.raises(ValueError, match=r"bigram/bigram.py: 'max_iters = 3000' occurs 1"):
            bad.source("bigram.py")
    finally:
        bad.subs["bigram.py"] = old
