# ruff: noqa
# Source: https://github.com/pytorch/examples/blob/77f55b912142e11fcfdf5b530231fb9c52f181e8/time_sequence_prediction/generate_sine_wave.py
# Repository pytorch/examples, path time_sequence_prediction/generate_sine_wave.py, commit 77f55b912142e11fcfdf5b530231fb9c52f181e8.
# Licence: BSD-3-Clause (Copyright (c) 2017, Pytorch contributors).
# Kept exactly as published below this header; benchmarks/real_programs lists the
# size substitutions the runner makes before running it.
import numpy as np
import torch

np.random.seed(2)

T = 20
L = 1000
N = 100

x = np.empty((N, L), 'int64')
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype('float64')
torch.save(data, open('traindata.pt', 'wb'))
