"""``tg.amp``: ``GradScaler`` against ``torch.amp.GradScaler`` on the CPU (scaled gradients,
steps skipped on inf/NaN, the scale's growth and backoff), a CUDA scaler turning itself off
without a GPU as PyTorch's does, and ``autocast`` accepted."""

import numpy as np
import pytest
import torch

import tinygrad_edu as tg


def _run(lib, grads_scale):
    """Five steps; at step 2 the loss is made inf. Returns (weights, scales)."""
    w = (tg.nn.Parameter if lib is tg else lambda a: torch.tensor(a, requires_grad=True))(
        np.array([1.0, -2.0], dtype=np.float32))
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=256.0, growth_interval=2)
    out = []
    for step in range(5):
        opt.zero_grad()
        with lib.autocast(device_type="cpu", dtype=lib.float16):
            loss = (w * w).sum() * grads_scale
            if step == 2:
                loss = loss * float("inf")
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        out.append((w.detach().numpy().tolist(), scaler.get_scale()))
    return out


def test_grad_scaler_equals_torchs():
    ours, theirs = _run(tg, 1.0), _run(torch, 1.0)
    for (w_o, s_o), (w_t, s_t) in zip(ours, theirs):
        np.testing.assert_allclose(w_o, w_t, rtol=1e-6)
        assert s_o == s_t
    assert ours[2][0] == ours[1][0]  # the inf step was skipped
    assert [s for _, s in ours] == [256.0, 512.0, 256.0, 256.0, 512.0]


def test_unscale_then_clip_then_step():
    w = tg.nn.Parameter([3.0, 4.0])
    opt = tg.optim.SGD([w], lr=1.0)
    scaler = tg.amp.GradScaler("cpu", init_scale=8.0)
    scaler.scale((w * w).sum() / 2).backward()
    scaler.unscale_(opt)
    assert w.grad.tolist() == [3.0, 4.0]
    tg.nn.utils.clip_grad_norm_([w], 1.0)
    scaler.step(opt)  # does not unscale twice
    np.testing.assert_allclose(w.detach().numpy(), [3 - 0.6, 4 - 0.8], rtol=1e-5)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.update()
    scaler.unscale_(opt)  # a new step


def test_cuda_scaler_turns_itself_off_without_a_gpu():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = tg.cuda.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0
    loss = tg.tensor(2.0)
    assert scaler.scale(loss) is loss and scaler.state_dict() == {}


def test_autocast_is_accepted_everywhere_and_changes_no_dtype():
    x = tg.ones(2, 2)

    @tg.autocast(device_type="cpu", dtype=tg.float16)
    def f(a):
        return a @ a

    with tg.amp.autocast("cpu"), tg.cuda.amp.autocast(enabled=False):
        assert (x @ x).dtype == np.float32
    assert f(x).dtype == np.float32
