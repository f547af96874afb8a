"""Smoke test of the CNN benchmarks (benchmarks/cnn.py) at a tiny size: every implementation
computes the same loss and gradients, the network is PyTorch's, and the peak-memory probe runs
in a fresh process. No timings are asserted."""

import math

import numpy as np
import pytest

from benchmarks import cnn
from benchmarks.run import ALL_CASES, REPS, check_agreement


@pytest.mark.parametrize("name", sorted(cnn.CASES))
def test_cnn_cases_agree_and_are_registered(name):
    assert ALL_CASES[name] is cnn.CASES[name] and REPS[name] > 0
    case = cnn.CASES[name]("tiny")
    expected = {"eager"} | ({"torch"} if cnn.torch is not None else set())
    assert expected <= set(case.impls)
    results = check_agreement(case, rtol=1e-3, atol=1e-4)
    n_params = {"cnn_step": 6, "conv2d": 3, "convnet_step": 10}[name]
    for res in results.values():
        assert len(res) == n_params + 1 and all(np.all(np.isfinite(r)) for r in res)


def test_lenet_matches_torch_parameter_names():
    import torch
    ours = [(k, v.shape) for k, v in cnn.lenet(28).state_dict().items()]
    theirs = [(k, tuple(v.shape)) for k, v in cnn.torch_lenet(28).state_dict().items()]
    assert ours == theirs and torch is cnn.torch


def test_convnet_matches_torch_parameter_names():
    import torch

    import tinygrad_edu as tg
    ours = [(k, v.shape) for k, v in cnn.convnet(tg, 28).state_dict().items()]
    theirs = [(k, tuple(v.shape)) for k, v in cnn.convnet(torch, 28).state_dict().items()]
    assert ours == theirs


def test_peak_memory_probe_runs_in_a_fresh_process():
    peak = cnn.peak_rss("eager", "conv2d", size="tiny", reps=1)
    assert math.isfinite(peak) and peak >= 0
    with pytest.raises(RuntimeError, match="peak memory of nope"):
        cnn.peak_rss("nope", "conv2d", size="tiny", reps=1)
