"""`tinygrad-edu demo` end to end: drawings (when Graphviz is there), engines agree, the MLP
reaches 95% on the digits and the CNN 98% in both engines, the plots are real PNGs, the saved
models reload."""

import argparse
import json
import os

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_course import demo
from tinygrad_edu import nn


def _args(out, **kw):
    p = argparse.ArgumentParser()
    demo.add_arguments(p)
    args = p.parse_args(["--out", str(out)])
    for k, v in kw.items():
        setattr(args, k, v)
    return args


def test_demo_end_to_end(tmp_path, capsys):
    out = tmp_path / "demo"
    assert demo.run(_args(out)) == 0
    printed = capsys.readouterr()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["test_accuracy"] >= 0.95
    assert summary["engines_max_abs_diff"] < 1e-5
    assert len(summary["history"]["test_accuracy"]) == 20
    assert "max |eager - symbolic|" in printed.out and "epoch 20/20" in printed.err
    # every file exists and is printed
    for name in ("training.png", "digits_mlp.npz", "summary.json"):
        assert (out / name).is_file() and str(out / name) in printed.out
    from PIL import Image

    with Image.open(out / "training.png") as im:
        im.verify()
    with Image.open(out / "training.png") as im:
        assert im.format == "PNG" and im.size[0] > 600 and im.size[1] > 300
    if "skipped the drawings" not in printed.out:
        assert (out / "seed_symbolic.png").is_file() and (out / "seed_eager.png").is_file()
    # the model reloads into a fresh network and gives the same accuracy
    from tinygrad_edu.data import load_digits

    X, y = load_digits("test", seed=0)
    net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    net.load_state_dict(nn.load(out / "digits_mlp.npz"))
    acc = (net(tg.tensor(X)).detach().numpy().argmax(1) == y).mean()
    assert acc == pytest.approx(summary["test_accuracy"])
    # the CNN: both engines from the same weights reach 98%, and agree on the way
    cnn = summary["cnn"]
    assert cnn["test_accuracy"]["eager"] >= 0.98 and cnn["test_accuracy"]["symbolic"] >= 0.98
    losses = [cnn["histories"][e]["epoch_loss"] for e in ("eager", "symbolic")]
    np.testing.assert_allclose(losses[0], losses[1], rtol=2e-3, atol=2e-4)
    assert "== 4. training a CNN" in printed.out and "CNN epoch 10/10" in printed.err
    for name in ("training_cnn.png", "digits_cnn.npz"):
        assert (out / name).is_file() and str(out / name) in printed.out
    with Image.open(out / "training_cnn.png") as im:
        assert im.format == "PNG" and im.size[0] > 600
    cnn_net = demo.digits_cnn()
    cnn_net.load_state_dict(nn.load(out / "digits_cnn.npz"))  # batch norm's statistics too
    cnn_net.eval()
    pred = cnn_net(tg.tensor(X.reshape(-1, 1, 8, 8))).detach().numpy().argmax(1)
    assert (pred == y).mean() == pytest.approx(cnn["test_accuracy"]["eager"])


def test_engines_agree_on_other_inputs():
    for seed in (1, 2):
        assert demo.compare_engines_on_seed(seed) < 1e-5


def test_cuda_request_without_gpu_is_a_clear_error(tmp_path, capsys):
    if tg.backend.cuda_available():
        pytest.skip("a GPU is present; the error path cannot be shown")
    assert demo.run(_args(tmp_path, device="cuda", no_render=True)) == 1
    assert "CuPy" in capsys.readouterr().out
    assert not os.path.exists(tmp_path / "summary.json")


@pytest.mark.gpu
@pytest.mark.skipif(not tg.backend.cuda_available(), reason="needs CuPy and a CUDA GPU")
def test_demo_trains_on_cuda(tmp_path):
    assert demo.run(_args(tmp_path, device="cuda", no_render=True, epochs=10)) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["test_accuracy"] >= 0.95 and summary["device"] == "cuda"
    assert min(summary["cnn"]["test_accuracy"].values()) >= 0.98
    assert np.isfinite(summary["history"]["epoch_loss"]).all()
