r"""Assignment A3: training with ``tinygrad_edu.nn`` and ``tinygrad_edu.optim``.

Tasks (the functions to write, in the library):

- A3.1 ``nn/functional.py`` ``linear`` and ``nn/linear.py`` ``Linear.forward``:
  $y = x W^\top + b$.
- A3.2 ``nn/functional.py`` ``mse_loss``: $\frac1n\sum_i (x_i - y_i)^2$.
- A3.3 ``optim/sgd.py`` ``SGD._update`` (the step): momentum, dampening, Nesterov, weight
  decay, PyTorch's formulas (in the module's docstring).
- A3.4 ``optim/adam.py`` ``Adam._update`` (the step): bias-corrected moments.
- A3.5 a model: an MLP trained on the 8x8 digits to at least 95% test accuracy, with your
  ``Linear`` (A3.1) and ``Adam`` (A3.4).

The optimizers are checked by what their formulas imply: the steps on a loss with a constant
gradient (where momentum and Adam's bias correction have closed forms), weight decay as an
extra $\frac\lambda2\lVert p\rVert^2$ in the loss, Adam's indifference to the loss's scale.
The model is scored here, on the test set, from the weights your training produced.
"""

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_course.grading import compare_gradients, numeric_gradient, random_projection
from tinygrad_edu import nn
from tinygrad_edu.data import load_digits

from . import probes_a3 as probes


def _rng(seed=0):
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------------------------
# Given code (no solution needed): the data.


@pytest.mark.task("A3.0")
@pytest.mark.points(1)
def test_digits_and_the_data_loader(run):
    """the digits and the data loader"""
    got = run(probes.data_loader)
    assert got["shape"] == (64,) and got["total"] == 1797
    assert set(np.unique(got["labels"])) == set(range(10))
    assert sorted(got["seen"].tolist()) == sorted(got["labels"].tolist()), (
        "one epoch visits every example once"
    )


# --------------------------------------------------------------------------------------------
# A3.1 Linear


@pytest.mark.task("A3.1")
@pytest.mark.points(2)
def test_linear_layer_forward(run):
    """Linear.forward: y = x W^T + b"""
    xv = _rng(1).standard_normal((4, 5)).astype(np.float32)
    got = run(probes.linear_layer, x=xv)
    assert got["shape"] == (4, 3), (
        f"Linear(5, 3) on a (4, 5) batch gives (4, 3), got {got['shape']}"
    )
    tg.manual_seed(0)  # the probe's layer, built here from given code (its initialisation)
    layer = nn.Linear(5, 3)
    W, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    np.testing.assert_array_equal(got["weight"], W, err_msg="Linear(5, 3)'s initial weight")
    np.testing.assert_allclose(
        got["y"], xv @ W.T + b, rtol=1e-5, atol=1e-6, err_msg="y = x W^T + b"
    )
    assert got["graph"], "the output must be connected to the weights' graph"


@pytest.mark.task("A3.1")
@pytest.mark.points(1)
def test_linear_function_without_bias_and_its_gradients(run):
    """linear: without a bias, and its gradients"""
    rng = _rng(2)
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 4)), rng.standard_normal(2)
    proj = random_projection((3, 2), seed=1)
    got = run(probes.linear_function, x=x, w=w, b=b, projection=proj)
    np.testing.assert_allclose(got["no_bias"], x @ w.T)
    numeric = numeric_gradient(lambda v: x @ v[0].T + v[1], [w, b], projection=proj)
    compare_gradients([got["dw"], got["db"]], numeric, names=["weight", "bias"])


# --------------------------------------------------------------------------------------------
# A3.2 a loss


@pytest.mark.task("A3.2")
@pytest.mark.points(2)
def test_mse_loss_value_and_gradient(run):
    """mse_loss: value and gradient"""
    rng = _rng(3)
    xv, yv = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    got = run(probes.mse, x=xv, y=yv)
    assert got["shape"] == (), f"the loss is a scalar, got shape {got['shape']}"
    np.testing.assert_allclose(got["value"], np.mean((xv - yv) ** 2), rtol=1e-12)
    np.testing.assert_allclose(
        got["grad"], 2 * (xv - yv) / xv.size, rtol=1e-12,
        err_msg="d/dx mean((x - y)^2) = 2 (x - y) / n",
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# A3.3, A3.4 optimizers: what their update rules imply

START, TARGET = _rng(4).standard_normal(5), _rng(5).standard_normal(5)
SLOPE = np.array([0.5, -1.0, 2.0, -0.25, 1.5])  # the constant gradient of a linear loss


STEPS = 6  # the steps probes.optimize takes unless told otherwise


def _steps(history, start, n=STEPS):
    """The parameter's change at each of the ``n`` steps."""
    assert len(history) == n, f"{n} steps were taken, but {len(history)} parameters came back"
    return np.diff(np.vstack([start, *history]), axis=0)


def _assert_steps(got, want, what):
    assert len(got) == len(want), f"{what}: {len(want)} steps were taken, got {len(got)}"
    for k, (g, w) in enumerate(zip(got, want), 1):
        np.testing.assert_allclose(
            g, w, rtol=1e-10, atol=1e-12, err_msg=f"{what}: the parameter after step {k}"
        )


@pytest.mark.task("A3.3")
@pytest.mark.points(1)
def test_plain_sgd_steps_against_the_gradient(run):
    """SGD: without momentum, p -= lr * grad"""
    history = run(probes.optimize, kind="sgd", settings={"lr": 0.1}, start=START, target=TARGET)
    _steps(history, START)
    before = np.vstack([START, *history[:-1]])
    _assert_steps(history, before - 0.1 * 2 * (before - TARGET), "SGD(lr=0.1)")


@pytest.mark.task("A3.3")
@pytest.mark.points(1)
@pytest.mark.parametrize("momentum, dampening", [(0.9, 0.0), (0.8, 0.3)])
def test_sgd_momentum_on_a_constant_gradient(run, momentum, dampening):
    """SGD: momentum {momentum}, dampening {dampening}, constant gradient"""
    lr = 0.05
    settings = {"lr": lr, "momentum": momentum, "dampening": dampening}
    history = run(probes.optimize, kind="sgd", settings=settings, start=START, linear=SLOPE)
    for k, step in enumerate(_steps(history, START), 1):
        # the buffer starts at the gradient, then b <- m b + (1 - d) g: a geometric sum
        mk = momentum ** (k - 1)
        buffer = SLOPE * (mk + (1 - dampening) * (1 - mk) / (1 - momentum))
        np.testing.assert_allclose(
            step, -lr * buffer, rtol=1e-10, err_msg=f"SGD({settings}): step {k}"
        )


@pytest.mark.task("A3.3")
@pytest.mark.points(1)
def test_sgd_weight_decay_adds_to_the_gradient(run):
    """SGD: weight decay is lambda * p added to the gradient"""
    base = {"lr": 0.05, "momentum": 0.8, "dampening": 0.3}
    decayed = run(probes.optimize, kind="sgd", settings={**base, "weight_decay": 0.1},
                  start=START, target=TARGET)  # fmt: skip
    as_loss = run(probes.optimize, kind="sgd", settings=base, start=START, target=TARGET,
                  l2=0.1)  # fmt: skip
    _steps(decayed, START)
    _assert_steps(decayed, as_loss, "SGD(weight_decay=0.1) vs 0.05 |p|^2 in the loss")
    # the first step moves against the gradient plus the decay (the buffer starts at it)
    first = START - 0.05 * (2 * (START - TARGET) + 0.1 * START)
    _assert_steps(decayed[:1], [first], "SGD(weight_decay=0.1): p - lr (g + 0.1 p) first")


@pytest.mark.task("A3.4")
@pytest.mark.points(2)
def test_adam_steps_on_a_constant_gradient(run):
    """Adam: bias correction makes every step lr * g / (|g| + eps)"""
    settings = {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-3}
    history = run(probes.optimize, kind="adam", settings=settings, start=START, linear=SLOPE)
    want = -0.05 * SLOPE / (np.abs(SLOPE) + 1e-3)
    for k, step in enumerate(_steps(history, START), 1):
        np.testing.assert_allclose(step, want, rtol=1e-9, err_msg=f"Adam({settings}): step {k}")


@pytest.mark.task("A3.4")
@pytest.mark.points(1)
def test_adam_ignores_the_scale_of_the_loss(run):
    """Adam: the same steps for the loss times 1000"""
    settings = {"lr": 0.05, "eps": 1e-12}
    one = run(probes.optimize, kind="adam", settings=settings, start=START, target=TARGET)
    big = run(probes.optimize, kind="adam", settings=settings, start=START, target=TARGET,
              scale=1000.0)  # fmt: skip
    _steps(one, START), _steps(big, START)
    for k, (a, b) in enumerate(zip(one, big), 1):
        np.testing.assert_allclose(b, a, rtol=1e-7, err_msg=f"Adam: step {k} depends on scale")
    # bias correction makes the first step lr * g / (|g| + eps), whatever the scale
    g = 2 * (START - TARGET)
    _assert_steps(one[:1], [START - 0.05 * g / (np.abs(g) + 1e-12)], "Adam: the first step")


@pytest.mark.task("A3.4")
@pytest.mark.points(1)
def test_adam_weight_decay_adds_to_the_gradient(run):
    """Adam: weight decay is lambda * p added to the gradient"""
    decayed = run(probes.optimize, kind="adam", settings={"lr": 0.02, "weight_decay": 0.05},
                  start=START, target=TARGET)  # fmt: skip
    as_loss = run(probes.optimize, kind="adam", settings={"lr": 0.02}, start=START,
                  target=TARGET, l2=0.05)  # fmt: skip
    _steps(decayed, START)
    _assert_steps(decayed, as_loss, "Adam(weight_decay=0.05) vs 0.025 |p|^2 in the loss")
    g = 2 * (START - TARGET) + 0.05 * START  # the first step is lr * g / (|g| + eps)
    _assert_steps(decayed[:1], [START - 0.02 * g / (np.abs(g) + 1e-8)],
                  "Adam(weight_decay=0.05): the first step, with g + 0.05 p")  # fmt: skip


# --------------------------------------------------------------------------------------------
# A3.5 a model on the digits


def _accuracy(weights) -> float:
    W1, b1, W2, b2 = weights
    X, y = load_digits("test")
    hidden = np.maximum(X @ W1.T + b1, 0)
    return float(((hidden @ W2.T + b2).argmax(axis=1) == y).mean())


@pytest.mark.task("A3.5", uses=("A3.1", "A3.4"))
@pytest.mark.points(5, timeout=180)
def test_mlp_reaches_95_percent_on_the_digits(run):
    """an MLP trained with your Linear and Adam reaches 95% on the digits"""
    weights = run(probes.train_mlp)
    shapes = [np.shape(w) for w in weights]
    assert shapes == [(128, 64), (128,), (10, 128), (10,)], f"unexpected weights {shapes}"
    accuracy = _accuracy(weights)
    assert accuracy >= 0.95, f"test accuracy {accuracy:.3f}; the MLP should reach 0.95"


# BEGIN HIDDEN TESTS
@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A3.3")
@pytest.mark.points(1)
def test_sgd_nesterov_with_weight_decay(run, reference):
    """SGD: Nesterov with weight decay, as the reference"""
    settings = {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}
    args = dict(kind="sgd", settings=settings, start=START, target=TARGET)
    _assert_steps(run(probes.optimize, **args), reference(probes.optimize, **args), "Nesterov")


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A3.3")
@pytest.mark.points(1)
def test_sgd_with_every_setting_matches_the_reference(run, reference):
    """SGD: momentum, dampening and weight decay on a quadratic, as the reference"""
    settings = {"lr": 0.03, "momentum": 0.7, "dampening": 0.2, "weight_decay": 0.02}
    args = dict(kind="sgd", settings=settings, start=TARGET, target=START, steps=8)
    _assert_steps(run(probes.optimize, **args), reference(probes.optimize, **args), "SGD")


@pytest.mark.hidden  # results shown once grades are published
@pytest.mark.task("A3.4")
@pytest.mark.points(1)
def test_adam_with_weight_decay_and_betas(run, reference):
    """Adam: betas, eps and weight decay on a quadratic, as the reference"""
    settings = {"lr": 0.02, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.05}
    args = dict(kind="adam", settings=settings, start=START, target=TARGET)
    _assert_steps(run(probes.optimize, **args), reference(probes.optimize, **args), "Adam")


# END HIDDEN TESTS
