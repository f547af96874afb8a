"""The activation, loss and distance modules of issue 24 against PyTorch's modules of the same
names: the same constructor arguments, values, input gradients (float64), reprs' options and
parameter names (PReLU's ``weight``)."""

import numpy as np
import pytest
import torch  # noqa: E402  (installed by make test)

import tinygrad_edu as tg

_rng = np.random.default_rng(0)
_X = _rng.uniform(-4, 4, (4, 3))
_Y = _rng.uniform(0.05, 0.95, (4, 3))
_PM = np.where(_rng.random((4, 3)) > 0.5, 1.0, -1.0)

ACTIVATIONS = [
    ("SiLU", (), {}), ("ELU", (0.5,), {}), ("SELU", (), {}), ("CELU", (), {"alpha": 2.0}),
    ("Mish", (), {}), ("Hardtanh", (-2.0, 2.0), {}), ("ReLU6", (), {}), ("Hardswish", (), {}),
    ("Hardsigmoid", (), {}), ("LogSigmoid", (), {}), ("Softsign", (), {}),
    ("Tanhshrink", (), {}), ("Hardshrink", (), {"lambd": 1.0}), ("Softshrink", (0.7,), {}),
    ("Threshold", (0.1, 20.0), {}), ("GLU", (), {"dim": 0}), ("PReLU", (3,), {"init": 0.1}),
]  # fmt: skip


def _run(lib, module, *arrays):
    xs = [lib.tensor(a, requires_grad=i == 0) for i, a in enumerate(arrays)]
    out = module(*xs)
    out.sum().backward()
    return out.detach().numpy(), xs[0].grad.numpy()


@pytest.mark.parametrize(("name", "args", "kwargs"), ACTIVATIONS, ids=lambda v: str(v))
def test_activation_modules_match_pytorch(name, args, kwargs):
    if name == "PReLU":
        kwargs = {**kwargs, "dtype": "float64"}
    ours = getattr(tg.nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **{k: getattr(torch, v) if k == "dtype" else v
                                              for k, v in kwargs.items()})  # fmt: skip
    if name == "PReLU":
        assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    for a, b in zip(_run(tg, ours, _X), _run(torch, theirs, _X)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-12)
    if name != "PReLU":
        assert repr(ours).split("(")[0] == repr(theirs).split("(")[0] == name


LOSSES = [
    ("SmoothL1Loss", {"beta": 0.5}, (_X, _Y)), ("HuberLoss", {"delta": 2.0}, (_X, _Y)),
    ("KLDivLoss", {"reduction": "batchmean"}, (_X, _Y)), ("KLDivLoss", {"log_target": True},
                                                            (_X, _X / 2)),
    ("SoftMarginLoss", {}, (_X, _PM)), ("HingeEmbeddingLoss", {"margin": 2.0}, (_X, _PM)),
    ("MultiLabelSoftMarginLoss", {}, (_X, (_Y > 0.5) * 1.0)),
    ("PoissonNLLLoss", {"log_input": True}, (_X, _Y * 3)),
    ("GaussianNLLLoss", {}, (_X, _Y, _Y + 0.5)), ("MarginRankingLoss", {"margin": 0.3},
                                                    (_X[:, 0], _X[:, 1], _PM[:, 0])),
    ("TripletMarginLoss", {"margin": 2.0, "swap": True}, (_X, _Y, _X * 0.5)),
    ("CosineEmbeddingLoss", {"margin": 0.1}, (_X, _Y, _PM[:, 0])),
    ("MultiMarginLoss", {"margin": 0.5}, (_X, np.array([0, 2, 1, 1]))),
    ("CosineSimilarity", {"dim": 0}, (_X, _Y)), ("PairwiseDistance", {"p": 1.0}, (_X, _Y)),
    ("SmoothL1Loss", {"reduction": "sum"}, (_X, _Y)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "kwargs", "arrays"), LOSSES, ids=lambda v: str(v)[:30])
def test_loss_and_distance_modules_match_pytorch(name, kwargs, arrays):
    ours, theirs = getattr(tg.nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
    for a, b in zip(_run(tg, ours, *arrays), _run(torch, theirs, *arrays)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-12)


def test_bad_options_are_errors():
    with pytest.raises(TypeError, match="unexpected argument 'betta'"):
        tg.nn.SmoothL1Loss(betta=0.5)
    with pytest.raises(ValueError, match="reduction"):
        tg.nn.HuberLoss(reduction="avg")
    with pytest.raises(RuntimeError, match="prelu"):
        tg.nn.PReLU(4)(tg.zeros(2, 3))


def test_unflatten_matches_pytorch():
    x = np.arange(24.0).reshape(2, 12)
    ours = tg.nn.Unflatten(1, (3, -1))(tg.tensor(x))
    theirs = torch.nn.Unflatten(1, (3, -1))(torch.tensor(x))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert repr(tg.nn.Unflatten(1, (3, 4))) == repr(torch.nn.Unflatten(1, (3, 4)))
