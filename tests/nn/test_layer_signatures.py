"""The layer functions of both engines come from one declaration each, with PyTorch's
signature: the same parameter names, order, kinds and defaults as ``torch.nn.functional``
(read with ``inspect``, or from the first line of the docstring where PyTorch's function is
written in C). The old symbolic argument order gets an error naming the new one."""

import ast
import inspect

import numpy as np
import pytest
import torch.nn.functional as TF

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F
from tinygrad_edu import symbolic as S
from tinygrad_edu.nn import functional_layers
from tinygrad_edu.ops.layer_surface import LAYERS
from tinygrad_edu.symbolic import layer_functions as symbolic_layers

#: parameters of ours that PyTorch lacks (keyword-only, after PyTorch's): why each exists
EXTRAS = {"batch_norm": {"ndim": "the rank of a symbolic input whose shape is not declared"}}


def _torch_signature(name) -> inspect.Signature:
    fn = getattr(TF, name)
    try:
        sig = inspect.signature(fn)
        if not any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values()):
            return sig
    except ValueError:  # a builtin
        pass
    first = fn.__doc__.strip().splitlines()[0]  # "conv2d(input, weight, bias=None, ...) -> Tensor"
    assert first.startswith(f"{name}("), first
    tree = ast.parse(f"def {first.split(' -> ')[0]}: pass")
    namespace: dict = {}
    exec(compile(tree, "<torch signature>", "exec"), namespace)  # noqa: S102  (a def from torch)
    return inspect.signature(namespace[name])


def _plain(sig: inspect.Signature, drop=()) -> list:
    return [(p.name, p.kind, p.default) for p in sig.parameters.values() if p.name not in drop]


def test_every_layer_function_is_declared_once_and_exists_in_both_engines():
    assert set(LAYERS) == set(functional_layers.LAYERS) == set(symbolic_layers.LAYERS)
    for name in LAYERS:
        assert getattr(F, name) is functional_layers.LAYERS[name]
        assert getattr(S, name) is symbolic_layers.LAYERS[name]


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_both_engines_have_pytorchs_signature(name):
    eager = inspect.signature(getattr(F, name))
    symbolic = inspect.signature(getattr(S, name))
    assert eager == symbolic, f"{name}: eager {eager} but symbolic {symbolic}"
    extras = EXTRAS.get(name, {})
    for extra in extras:
        p = eager.parameters[extra]
        assert p.kind is p.KEYWORD_ONLY and p.default is None, f"{name}: {extra} keyword-only"
    assert _plain(eager, drop=extras) == _plain(_torch_signature(name)), (
        f"{name}: ours {eager}, PyTorch's {_torch_signature(name)}"
    )


def test_the_torch_signature_reader_reads_a_builtin():
    sig = _torch_signature("conv2d")  # written in C: read from the docstring
    assert list(sig.parameters) == ["input", "weight", "bias", "stride", "padding", "dilation",
                                    "groups"]  # fmt: skip
    assert sig.parameters["bias"].default is None and sig.parameters["groups"].default == 1


def test_one_call_runs_in_both_engines():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 5, 5)), rng.standard_normal((4, 3, 3, 3))
    gamma, beta = rng.standard_normal(4), rng.standard_normal(4)

    def net(L, x, w, gamma, beta):
        h = L.conv2d(x, w, None, 1, "same")
        h = L.batch_norm(h, None, None, gamma, beta, True, 0.1, 1e-5)
        h = L.pad(h, (1, 0, 0, 1), "reflect")
        return L.adaptive_avg_pool2d(L.max_pool2d(h, 2), 1)

    want = net(F, *(tg.tensor(a) for a in (x, w, gamma, beta))).numpy()
    nodes = [S.Variable(n, shape=a.shape, dtype="float64")
             for n, a in zip("xwgb", (x, w, gamma, beta))]  # fmt: skip
    (got,) = S.Executor([net(S, *nodes)]).run(dict(zip(nodes, (x, w, gamma, beta))))
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert want.shape == (2, 4, 1, 1)


# -- the old symbolic order: an error that names the new one ------------------------------------
def _bn_args():
    x = S.Variable("x", shape=(4, 3))
    w, b = S.Variable("bn.weight", shape=(3,)), S.Variable("bn.bias", shape=(3,))
    rm, rv = S.Variable("bn.running_mean", shape=(3,)), S.Variable("bn.running_var", shape=(3,))
    return x, w, b, rm, rv


def test_old_symbolic_batch_norm_order_in_evaluation_is_an_error_naming_the_new_one():
    x, w, b, rm, rv = _bn_args()
    with pytest.raises(TypeError, match=r"'bn.weight' was passed as running_mean.*"
                                        r"batch_norm\(input, running_mean, running_var, "
                                        r"weight=None, bias=None, training=False"):  # fmt: skip
        S.batch_norm(x, w, b, rm, rv, False)
    with pytest.raises(TypeError, match=r"pass training= .* default was True"):
        S.batch_norm(x, w, b)  # the old default was training=True; now it would read w as stats
    with pytest.raises(TypeError, match="pass training="):
        S.batch_norm(x, rm, rv, w, b)  # even in the new order, for this release


def test_old_symbolic_batch_norm_order_in_training_is_an_error_naming_the_new_one():
    x, w, b, rm, rv = _bn_args()
    gamma, beta = S.Variable("g", shape=(3,)), S.Variable("h", shape=(3,))  # names say nothing
    with pytest.raises(NotImplementedError, match=r"training=True with running_mean.*"
                                                  r"batch_norm\(x, None, None, weight, bias, "
                                                  r"training=True\)"):  # fmt: skip
        S.batch_norm(x, gamma, beta, training=True)


def test_new_symbolic_batch_norm_order_runs_and_matches_eager():
    x, w, b, rm, rv = _bn_args()
    rng = np.random.default_rng(1)
    feed = {n: rng.standard_normal(n.shape).astype("float32") for n in (x, w, b, rm, rv)}
    feed[rv] = np.abs(feed[rv]) + 0.5
    ev = S.batch_norm(x, rm, rv, w, b, training=False)
    tr = S.batch_norm(x, None, None, w, b, training=True)
    got_ev, got_tr = S.Executor([ev, tr]).run(feed)
    t = {n: tg.tensor(v) for n, v in feed.items()}
    np.testing.assert_allclose(got_ev, F.batch_norm(t[x], t[rm], t[rv], t[w], t[b]).numpy(),
                               rtol=1e-5)  # fmt: skip
    np.testing.assert_allclose(got_tr, F.batch_norm(t[x], None, None, t[w], t[b], True).numpy(),
                               rtol=1e-5, atol=1e-6)  # fmt: skip


@pytest.mark.parametrize("call, old, new", [
    (lambda x, w: S.conv2d(x=x, weight=w), "x=", "input="),
    (lambda x, w: S.conv2d(x, w=w), "w=", "weight="),
    (lambda x, w: S.max_pool2d(x=x, kernel_size=2), "x=", "input="),
    (lambda x, w: S.embedding(indices=np.array([0]), weight=w), "indices=", "input="),
])  # fmt: skip
def test_old_symbolic_keyword_names_are_an_error_naming_the_new_one(call, old, new):
    x, w = S.Variable("x", shape=(1, 1, 4, 4)), S.Variable("w", shape=(1, 1, 2, 2))
    with pytest.raises(TypeError, match=f"{old} -> {new}"):
        call(x, w)


def test_old_symbolic_pad_value_in_modes_place_is_an_error_naming_value():
    x = S.Variable("x", shape=(2, 3))
    with pytest.raises(TypeError, match=r"pass value=0\.5"):
        S.pad(x, (1, 1), 0.5)  # the old pad(x, pad, value)


# -- what a symbolic graph cannot do says so ----------------------------------------------------
def test_side_effects_are_refused_in_the_symbolic_engine():
    w = S.Variable("w", shape=(5, 2))
    with pytest.raises(NotImplementedError, match="max_norm changes a tensor in place"):
        S.embedding(np.array([0, 1]), w, max_norm=1.0)
    with pytest.raises(NotImplementedError, match="inplace=True"):
        S.dropout(S.Variable("x", shape=(3,)), 0.5, True, True)


def test_symbolic_dropout_draws_a_fresh_mask_each_run_with_the_expected_scale():
    x = S.Variable("x", shape=(2000,), dtype="float32")
    y = S.dropout(x, 0.25)
    ex = S.Executor([y])
    a, b = (ex.run({x: np.ones(2000, "float32")})[0] for _ in range(2))
    assert a.dtype == np.float32
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.2 < (a == 0).mean() < 0.3  # p = 0.25 of 2000 draws
    assert not np.array_equal(a, b)
    assert S.dropout(x, 0.25, training=False) is x
    (g,) = S.gradients(y.sum(), [x])
    ga, ya = S.Executor([g, y]).run({x: np.ones(2000, "float32")})
    np.testing.assert_array_equal(ga, ya)  # x = 1: the gradient is the mask of the same run


def test_embedding_puts_array_and_list_indices_on_the_weights_device():
    w = tg.randn(3, 2).to("sim:0")
    for idx in (np.array([0, 2]), [0, 2]):
        y = F.embedding(idx, w)
        assert y.device == w.device
        np.testing.assert_array_equal(y.numpy(), w.numpy()[[0, 2]])
