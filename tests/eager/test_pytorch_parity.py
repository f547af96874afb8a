"""Where the eager engine used to give a silent wrong answer, crash, or raise numpy's error
instead of PyTorch's: each case against PyTorch itself (issue #22)."""

import warnings

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
import tinygrad_edu.nn.functional as F


def _both(fn, *arrays, dtype=np.float64):
    """``fn`` on tinygrad_edu tensors and on torch tensors made from ``arrays`` (all requiring
    grad): ``(ours, theirs)`` as pairs of (value, grads)."""
    ours = [tg.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = fn(tg, F, *ours), fn(torch, torch.nn.functional, *theirs)
    out.sum().backward()
    tout.sum().backward()
    return (out, [x.grad for x in ours]), (tout, [x.grad for x in theirs])


# -- binary cross-entropy at probabilities of exactly 0 and 1 -------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_gradient_is_finite_at_zero_and_one_as_in_pytorch(reduction):
    p, t = np.array([0.0, 1.0, 0.0, 1.0, 0.3]), np.array([0.0, 1.0, 1.0, 0.0, 0.6])
    w = np.array([1.0, 2.0, 0.5, 1.0, 3.0])

    def bce(M, Fn, p, t):
        weight = (tg.tensor if M is tg else torch.tensor)(w)
        return Fn.binary_cross_entropy(p, t, weight=weight, reduction=reduction)

    (out, grads), (tout, tgrads) = _both(bce, p, t)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy())
    assert np.isfinite(grads[0].numpy()).all()  # the target's is +-inf there, in PyTorch too
    for g, tg_ in zip(grads, tgrads):
        np.testing.assert_allclose(g.numpy(), tg_.numpy(), rtol=1e-6)
    assert out.grad_fn.name() == type(tout.grad_fn).__name__ == "BinaryCrossEntropyBackward0"


def test_bce_of_a_saturated_sigmoid_trains_bceloss():
    x = tg.tensor([20.0, -20.0], requires_grad=True)  # sigmoid is exactly 1.0 and ~0 in float32
    tg.nn.BCELoss()(x.sigmoid(), tg.tensor([1.0, 0.0])).backward()
    assert np.isfinite(x.grad.numpy()).all()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_is_one_node_as_in_pytorch(reduction):
    x, t = np.array([-30.0, -1.0, 0.0, 2.0, 40.0]), np.array([0.0, 1.0, 0.5, 1.0, 0.0])
    pw = np.array([1.0, 2.0, 0.5, 3.0, 1.0])

    def bce(M, Fn, x, t):
        pos = (tg.tensor if M is tg else torch.tensor)(pw)
        return Fn.binary_cross_entropy_with_logits(x, t, pos_weight=pos, reduction=reduction)

    (out, grads), (tout, tgrads) = _both(bce, x, t)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-6)
    for g, tg_ in zip(grads, tgrads):
        np.testing.assert_allclose(g.numpy(), tg_.numpy(), rtol=1e-6, atol=1e-12)
    assert out.grad_fn.name() == type(tout.grad_fn).__name__


# -- numpy's RuntimeWarnings: PyTorch is silent ---------------------------------------------------
@pytest.mark.parametrize("name, fn", [
    ("x / 0", lambda: tg.tensor([1.0, 0.0, -1.0]) / 0),
    ("log(0)", lambda: tg.tensor([0.0, -1.0]).log()),
    ("log1p(-1)", lambda: tg.tensor([-1.0]).log1p()),
    ("sqrt(-1)", lambda: tg.tensor([-1.0]).sqrt()),
    ("rsqrt(0)", lambda: tg.tensor([0.0]).rsqrt()),
    ("exp overflow", lambda: tg.tensor([1000.0]).exp()),
    ("0 ** -1", lambda: tg.tensor([0.0]) ** -1),
    ("softmax with inf", lambda: F.softmax(tg.tensor([float("inf"), 1.0]), dim=0)),
    ("log_softmax with inf", lambda: F.log_softmax(tg.tensor([float("inf"), 1.0]), dim=0)),
    ("bce at 0", lambda: F.binary_cross_entropy(tg.tensor([0.0, 1.0]), tg.tensor([1.0, 0.0]))),
    ("backward of log at 0", lambda: tg.tensor([0.0], requires_grad=True).log().sum().backward()),
])  # fmt: skip
def test_no_numpy_runtime_warnings(name, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn()


def test_numpy_error_state_is_left_as_it_was():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tg.tensor([1.0]) / 0
        with pytest.raises(RuntimeWarning):
            np.array([1.0]) / 0  # the user's own numpy still warns


# -- integer powers -------------------------------------------------------------------------------
def test_int_to_negative_int_power_is_pytorchs_error():
    with pytest.raises(RuntimeError, match="pow: Integers to negative integer powers"):
        tg.tensor([2, 3]).long() ** -1
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        torch.tensor([2, 3]) ** -1


def test_int_tensor_exponent_negative_matches_pytorch():
    base, exp = [2, 1, -1, -1, 3, 0], [-1, -3, -3, -2, 2, 2]
    ours = tg.tensor(base).long() ** tg.tensor(exp).long()
    assert ours.tolist() == (torch.tensor(base) ** torch.tensor(exp)).tolist()
    assert (2 ** tg.tensor([-1, 3]).long()).tolist() == (2 ** torch.tensor([-1, 3])).tolist()


# -- mixing engines and libraries -----------------------------------------------------------------
def test_eager_tensor_and_symbolic_node_do_not_mix():
    from tinygrad_edu import symbolic as S

    with pytest.raises(TypeError, match="eager tensors and symbolic nodes do not mix"):
        tg.tensor([1.0]) + S.Variable("x")
    with pytest.raises(TypeError, match="eager tensors and symbolic nodes do not mix"):
        S.Variable("x") + tg.tensor([1.0])
    with pytest.raises(TypeError, match="eager tensors and symbolic nodes do not mix"):
        tg.tensor([1.0]) * S.Variable("x", shape=(1,))


@pytest.mark.parametrize("fn", [
    lambda: tg.ones(2) + torch.ones(2),
    lambda: torch.ones(2) + tg.ones(2),
    lambda: tg.ones(2, 2) @ torch.ones(2, 2),
    lambda: tg.ones(2) @ torch.ones(2),
])  # fmt: skip
def test_a_pytorch_tensor_operand_is_a_clear_error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # PyTorch's own, on the way
        with pytest.raises(TypeError, match=r"(add|matmul): got a torch\.Tensor .*from_dlpack"):
            fn()


# -- dtypes and constructors ----------------------------------------------------------------------
@pytest.mark.parametrize("a, b", [((2, 3), (3, 2)), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)),
                                  ((2, 2, 3), (3, 2))])  # fmt: skip
def test_int_matmul_float_follows_the_promotion_rule(a, b):
    x, w = tg.ones(*a).long(), tg.ones(*b)
    assert (x @ w).dtype == np.float32  # numpy would give float64
    assert (tg.ones(*a) @ tg.ones(*b).long()).dtype == np.float32
    assert (tg.ones(*a, dtype=tg.float64) @ w).dtype == np.float64
    assert (x @ tg.ones(*b).long()).dtype == np.int64
    np.testing.assert_array_equal((x @ w).numpy(), np.ones(a) @ np.ones(b))


def test_linear_on_an_int_input_is_an_error_as_in_pytorch():
    with pytest.raises(RuntimeError):
        torch.nn.Linear(3, 2)(torch.tensor([[1, 2, 3]]).long())
    with pytest.raises(RuntimeError, match="int64 but the weight is float32.*x.float()"):
        tg.nn.Linear(3, 2)(tg.tensor([[1, 2, 3]]).long())
    assert tg.nn.Linear(3, 2)(tg.tensor([[1, 2, 3]]).float()).dtype == np.float32


@pytest.mark.parametrize("args", [(2, 3), (4,), (), (0, 2), (2, 1, 3)])
def test_legacy_tensor_constructor_takes_sizes(args):
    ours, theirs = tg.Tensor(*args), torch.Tensor(*args)
    assert ours.shape == tuple(theirs.shape) and ours.dtype == np.float32


def test_legacy_tensor_constructor_still_takes_data():
    assert tg.Tensor([2, 3]).tolist() == torch.Tensor([2, 3]).tolist() == [2.0, 3.0]
    assert tg.Tensor(2, 3, requires_grad=True).requires_grad
    assert tg.Tensor(2, dtype=tg.float64).dtype == np.float64
    with pytest.raises(TypeError, match="data must be a sequence"):
        tg.Tensor(2.5)
    with pytest.raises(TypeError, match="every size must be an int"):
        tg.Tensor(2, "a")


# -- numpy's errors in PyTorch's words ------------------------------------------------------------
def test_in_place_op_on_an_expanded_tensor_is_pytorchs_error():
    for write in (lambda v: v.add_(1), lambda v: v.mul_(2), lambda v: v.zero_(),
                  lambda v: v.__setitem__(0, 1.0)):  # fmt: skip
        v = tg.ones(1, 3).expand(2, 3)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            write(v)
    with pytest.raises(RuntimeError, match="more than one element"):
        torch.ones(1, 3).expand(2, 3).add_(1)


def test_setitem_shape_mismatch_is_a_runtime_error():
    x = tg.zeros(3)
    with pytest.raises(RuntimeError, match="setitem: the value has shape \\(2,\\)"):
        x[:] = tg.ones(2)
    assert x.tolist() == [0.0, 0.0, 0.0] and x._version == 0  # nothing was written
    with pytest.raises(RuntimeError):
        torch.zeros(3)[:] = torch.ones(2)


# -- exception classes as in PyTorch --------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda M: M.ones(3)[5],
    lambda M: M.ones(3)[M.tensor([0, 5])],
    lambda M: M.ones(2, 3)[:, 3],
    lambda M: M.ones(2, 3).sum(dim=2),
    lambda M: M.ones(2, 3).softmax(dim=-3),
])  # fmt: skip
def test_out_of_range_index_or_dim_is_an_index_error(fn):
    with pytest.raises(IndexError):
        fn(torch)
    with pytest.raises(IndexError):
        fn(tg)


@pytest.mark.parametrize("fn", [
    lambda M: M.nn.Linear(3, 2)(M.ones(1, 2)),
    lambda M: M.nn.Conv2d(3, 2, 3)(M.ones(1, 2, 5, 5)),
    lambda M: M.nn.Linear(3, 2).load_state_dict({"weight": M.zeros(2, 3)}),
    lambda M: M.nn.Linear(3, 2).load_state_dict({"weight": M.zeros(2, 3), "bias": M.zeros(2),
                                                 "extra": M.zeros(1)}),
    lambda M: M.nn.Linear(3, 2).load_state_dict({"weight": M.zeros(2, 2), "bias": M.zeros(2)}),
])  # fmt: skip
def test_module_errors_are_runtime_errors(fn):
    with pytest.raises(RuntimeError):
        fn(torch)
    with pytest.raises(RuntimeError):
        fn(tg)


def test_assigning_a_number_to_grad_is_a_type_error():
    a, t = tg.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        t.grad = 0.0
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        a.grad = 0.0
    with pytest.raises(RuntimeError, match="shape"):
        a.grad = tg.ones(3)
    with pytest.raises(RuntimeError, match="float64"):
        a.grad = tg.ones(2, dtype=tg.float64)
    assert a.grad is None
    a.grad = tg.full_like(a, 2.0)
    assert a.grad.tolist() == [2.0, 2.0]


def test_dropout_with_p_one_zeroes_everything_as_in_pytorch():
    assert tg.nn.Dropout(p=1)(tg.ones(3)).tolist() == torch.nn.Dropout(p=1)(torch.ones(3)).tolist()
    assert tg.nn.functional.dropout(tg.ones(3), 1.0).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="between 0 and 1"):
        tg.nn.Dropout(p=1.5)


# -- optimizer state and checkpoints --------------------------------------------------------------
def _model_and_adam(seed=0):
    tg.manual_seed(seed)
    model = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.ReLU(), tg.nn.Linear(4, 2))
    return model, tg.optim.Adam(model.parameters(), lr=0.1)


def _train_step(model, opt):
    x = tg.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]])
    opt.zero_grad()
    tg.nn.functional.mse_loss(model(x), tg.tensor([[1.0, 0.0], [0.0, 1.0]])).backward()
    opt.step()


@pytest.mark.parametrize("make", [lambda ps: tg.optim.Adam(ps), lambda ps: tg.optim.SGD(ps, 0.1,
                                                                                    momentum=0.9)])
def test_optimizer_state_is_keyed_by_the_parameter(make):
    model = tg.nn.Linear(3, 2)
    opt = make(model.parameters())
    assert opt.state[model.weight] == {}  # PyTorch's defaultdict: no KeyError before a step
    model(tg.ones(1, 3)).sum().backward()
    opt.step()
    state = opt.state[model.weight]
    assert set(state) == ({"step", "exp_avg", "exp_avg_sq"} if "Adam" in type(opt).__name__
                          else {"momentum_buffer"})  # fmt: skip
    assert opt.state[model.weight] is state


def test_resuming_from_a_checkpoint_gives_the_same_next_step(tmp_path):
    model, opt = _model_and_adam()
    for _ in range(3):
        _train_step(model, opt)
    path = tg.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
                    "note": "adam", "losses": [1.5, (2, None)]}, tmp_path / "ckpt.pt")  # fmt: skip
    _train_step(model, opt)  # the step the resumed run must reproduce
    expected = [p.detach().numpy().copy() for p in model.parameters()]

    ckpt = tg.load(tmp_path / "ckpt.pt")
    assert ckpt["epoch"] == 3 and ckpt["note"] == "adam" and ckpt["losses"] == [1.5, (2, None)]
    model2, opt2 = _model_and_adam(seed=1)  # other weights, fresh state
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optimizer"])
    assert opt2.param_groups[0]["betas"] == (0.9, 0.999)
    _train_step(model2, opt2)
    for got, want in zip(model2.parameters(), expected):
        np.testing.assert_array_equal(got.detach().numpy(), want)
    assert path.endswith("ckpt.pt")  # the name given, as PyTorch writes it


@pytest.mark.parametrize("obj", [
    tg.tensor([[1.0, 2.0]]),
    tg.tensor([1, 2]).long(),
    tg.ones(2, requires_grad=True),
    {"a": tg.zeros(3), "b": [tg.ones(1), 2, "x", None, True], "c": (1.5, {"d": tg.tensor(3.0)})},
    {0: {"step": 3, "buf": np.arange(3.0)}, 1: {}},
    [1, 2.5, "three"],
    {},
])  # fmt: skip
def test_nested_objects_round_trip(tmp_path, obj):
    back = tg.load(tg.save(obj, tmp_path / "obj.pt"))
    _assert_same(back, obj)


def _assert_same(back, obj):
    assert type(back) is type(obj) or isinstance(obj, tg.Tensor) and isinstance(back, tg.Tensor)
    if isinstance(obj, tg.Tensor):
        assert back.dtype == obj.dtype and back.requires_grad == obj.requires_grad
        np.testing.assert_array_equal(back.detach().numpy(), obj.detach().numpy())
    elif isinstance(obj, np.ndarray):
        np.testing.assert_array_equal(back, obj)
    elif isinstance(obj, dict):
        assert list(back) == list(obj)
        for k in obj:
            _assert_same(back[k], obj[k])
    elif isinstance(obj, list | tuple):
        assert len(back) == len(obj)
        for a, b in zip(back, obj):
            _assert_same(a, b)
    else:
        assert back == obj


def test_saving_something_unsaveable_names_it(tmp_path):
    # (an object() is pickled, as by torch.save, and refused by load: tests/test_pytorch_paths.py)
    with pytest.raises(AttributeError, match=r"save: cannot pickle builtins\.dict: .*local"):
        tg.save({"opt": lambda: 0}, tmp_path / "x.pt")


def test_loading_a_torch_save_file_is_a_clear_error(tmp_path):
    path = str(tmp_path / "model.pt")
    torch.save(torch.nn.Linear(3, 2).state_dict(), path)
    with pytest.raises(ValueError, match="written by torch.save"):
        tg.load(path)


# -- .data, .grad and backward(inputs=...) --------------------------------------------------------
def test_assigning_a_tensor_to_a_parameters_data_replaces_its_values():
    model, tmodel = tg.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    w = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    model.weight.data = tg.tensor(w)
    tmodel.weight.data = torch.tensor(w)
    model.bias.data, tmodel.bias.data = tg.zeros(2), torch.zeros(2)
    x = np.array([[1.0, -1.0]], dtype=np.float32)
    np.testing.assert_allclose(model(tg.tensor(x)).detach().numpy(),
                               tmodel(torch.tensor(x)).detach().numpy())  # fmt: skip
    assert model.weight.requires_grad and model.weight.is_leaf
    model(tg.tensor(x)).sum().backward()  # and it still trains
    assert model.weight.grad.shape == (2, 2)


def test_assigning_a_number_to_a_parameters_data_is_a_type_error():
    p, tp = tg.nn.Parameter([1.0, 2.0]), torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    for bad in (3.0, [1.0, 2.0]):
        with pytest.raises(TypeError, match="must be set to a tensor.*copy_"):
            p.data = bad
        with pytest.raises(TypeError):
            tp.data = bad
    with pytest.raises(TypeError, match="torch.Tensor"):
        p.data = torch.zeros(2)  # another library's tensor is not ours
    assert p.tolist() == [1.0, 2.0]


def test_data_is_a_tensor_outside_autograd_as_in_pytorch():
    for M in (tg, torch):
        x = M.ones(3, requires_grad=True)
        d = x.data
        assert isinstance(d, M.Tensor) and d is not x.data
        assert not d.requires_grad and d.is_leaf and d.grad_fn is None
        d.add_(1)  # shares memory, but not the version counter
        assert x.tolist() == [2.0, 2.0, 2.0] and x._version == 0 and d._version == 1
        v = M.ones(4)[1:]
        assert v.data._base is None and v.data.shape == (3,)


def test_plain_tensor_data_assignment_swaps_memory_shape_and_dtype():
    for M in (tg, torch):
        x, t = M.ones(2, 2), M.zeros(3, dtype=M.float64)
        x.data = t
        assert x.shape == (3,) and x.dtype == M.float64
        t[0] = 5.0  # no copy: x now lives in t's memory
        assert (x + 1).tolist() == [6.0, 1.0, 1.0]
        x = M.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError):
            x.data = M.zeros(2, dtype=M.int64)  # a tensor that requires grad stays floating
        assert x.dtype == M.float32


def test_a_graph_whose_tensor_changed_shape_through_data_is_a_clear_error():
    for M in (tg, torch):
        x = M.ones(3, requires_grad=True)
        y = x * 2
        y.data = M.zeros(5)  # allowed, as in PyTorch; the graph recorded before no longer fits
        with pytest.raises(RuntimeError, match=r"(?s)Backward0.*\[?\(?5,?\)?\]?.*\[?\(?3,?\)?"):
            y.sum().backward()
    x = tg.ones(3, requires_grad=True)
    y = x * 2
    y.data = tg.zeros(5)
    with pytest.raises(RuntimeError, match=r"MulBackward0 got a gradient of shape \(5,\) for "
                                           r"its output of shape \(3,\).*x\.data = t"):
        y.sum().backward()


def test_changing_a_saved_value_through_data_is_not_checked_as_in_pytorch():
    grads = []
    for M in (tg, torch):
        a = M.tensor([0.5, 1.0], dtype=M.float64, requires_grad=True)
        b = a.exp()
        b.data.mul_(2)  # invisible to the version check, so backward sees the new values
        b.sum().backward()
        grads.append(a.grad.tolist())
    np.testing.assert_allclose(grads[0], grads[1])
    assert grads[0] == pytest.approx(list(2 * np.exp([0.5, 1.0])))


def _init_and_train(M, steps=5):
    """A PyTorch tutorial's ways with ``.data``: DCGAN's weights_init, the blitz's manual SGD
    (``p.data.sub_(p.grad.data * lr)``) and ``p.grad.data.zero_()``."""
    M.manual_seed(0)
    model = M.nn.Sequential(M.nn.Linear(4, 8), M.nn.BatchNorm1d(8), M.nn.ReLU(),
                            M.nn.Linear(8, 3))  # fmt: skip
    w = [np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) for p in model.parameters()]
    for p, a in zip(model.parameters(), w):
        p.data.copy_(M.tensor(a))

    def weights_init(m):
        if type(m).__name__.find("BatchNorm") != -1:
            m.weight.data.fill_(1.0)
            M.nn.init.constant_(m.bias.data, 0.25)

    model.apply(weights_init)
    x = M.tensor(np.linspace(-2, 2, 24).reshape(6, 4), dtype=M.float32)
    y = M.tensor([0, 1, 2, 0, 1, 2])
    losses = []
    for _ in range(steps):
        loss = M.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        for p in model.parameters():
            p.data.sub_(p.grad.data * 0.1)
            p.grad.data.zero_()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_pytorch_idioms_on_data_train_as_in_pytorch():
    (ours, ps), (theirs, tps) = _init_and_train(tg), _init_and_train(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert ours[-1] < ours[0]
    for p, tp in zip(ps, tps):
        np.testing.assert_allclose(p, tp, rtol=1e-4, atol=1e-6)


def test_backward_with_inputs_fills_a_non_leaf_grad_without_a_warning():
    x = tg.ones(2, requires_grad=True)
    h = x * 2
    (h * h).sum().backward(inputs=[h])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert h.grad.tolist() == [4.0, 4.0]
    assert x.grad is None
    h2 = x * 3
    with pytest.warns(UserWarning, match="non-leaf"):
        assert h2.grad is None  # still warned where backward filled nothing


# -- custom Functions keep their device -----------------------------------------------------------
class _CubeAndPass(tg.Function):
    @staticmethod
    def forward(ctx, x, y):
        out = x * x * x
        ctx.save_for_backward(x, out)
        return out, y  # y returned as it came

    @staticmethod
    def backward(ctx, g, gy):
        x, out = ctx.saved_tensors
        assert x.device == out.device == g.device == gy.device == "sim:1"
        return g * 3 * out / x, gy


@pytest.mark.parametrize("create_graph", [False, True])
def test_custom_function_on_a_simulated_device(create_graph):
    x = tg.tensor([2.0, 1.0], requires_grad=True, device="sim:1")
    y = tg.tensor([5.0, 6.0], requires_grad=True, device="sim:1")
    a, b = _CubeAndPass.apply(x, y)
    assert a.device == b.device == "sim:1"
    (a.sum() + b.sum()).backward(create_graph=create_graph)
    assert x.grad.device == y.grad.device == "sim:1"
    assert x.grad.tolist() == [12.0, 3.0] and y.grad.tolist() == [1.0, 1.0]


def test_custom_function_returning_an_array_keeps_the_inputs_device():
    class Double(tg.Function):
        @staticmethod
        def forward(ctx, x):
            return x.numpy() * 2  # a raw array

        @staticmethod
        def backward(ctx, g):
            return g.numpy() * 2  # a raw array

    x = tg.tensor([1.0, 2.0], requires_grad=True, device="sim:1")
    out = Double.apply(x)
    assert out.device == "sim:1"
    out.sum().backward()
    assert x.grad.device == "sim:1" and x.grad.tolist() == [2.0, 2.0]


# -- node names as in PyTorch ---------------------------------------------------------------------
def _setitem(index):
    def write(M, x):
        y = x * 1
        y[index(M, y)] = 0.0
        return y

    return write


@pytest.mark.parametrize("make", [
    lambda M, x: x.split(2)[0],
    lambda M, x: x.split([1, 3])[1],
    lambda M, x: x.chunk(2)[1],
    lambda M, x: x.chunk(3, dim=1)[0],
    lambda M, x: x.unbind(0)[2],
    lambda M, x: x.unbind(1)[0],
    lambda M, x: x[0],
    lambda M, x: x[1:],
    _setitem(lambda M, y: 0),
    _setitem(lambda M, y: (slice(None), 1)),
    _setitem(lambda M, y: y > 0),
    _setitem(lambda M, y: [0, 2]),
    _setitem(lambda M, y: (slice(None), [0, 1])),
    lambda M, x: x @ M.ones(4, 2),
    lambda M, x: x @ M.ones(4),
    lambda M, x: x[0] @ M.ones(4),
    lambda M, x: x[0] @ M.ones(4, 2),
    lambda M, x: x.reshape(2, 2, 4) @ M.ones(4, 2),
    lambda M, x: x.reshape(2, 2, 4) @ M.ones(2, 4, 3),
    lambda M, x: x.reshape(2, 2, 4) @ M.ones(4),
    lambda M, x: x[0] @ M.ones(2, 4, 3),
    lambda M, x: M.ones(2, 4) @ x.reshape(2, 4, 2),  # (CloneBackward0 if the left needs grad)
    lambda M, x: M.nn.functional.binary_cross_entropy_with_logits(x, M.ones(4, 4)),
    lambda M, x: M.nn.functional.binary_cross_entropy(x.sigmoid(), M.ones(4, 4)),
])  # fmt: skip
def test_node_names_match_pytorch(make):
    ours = make(tg, tg.ones(4, 4, requires_grad=True))
    theirs = make(torch, torch.ones(4, 4, requires_grad=True))
    assert ours.grad_fn.name() == type(theirs.grad_fn).__name__
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)


def test_split_and_vector_matmul_gradients_match_pytorch():
    rng = np.random.default_rng(0)
    a, v = rng.standard_normal((4, 4)), rng.standard_normal(4)

    def f(M, Fn, a, v):
        p, q = a.split([1, 3])
        r = a.unbind(1)
        return (p @ v).sum() + (v @ q.T).sum() * (r[2] @ v) + (a.chunk(2)[1] @ v).sum()

    (out, grads), (tout, tgrads) = _both(f, a, v)
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-10)
    for g, t in zip(grads, tgrads):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10)


# -- printing as PyTorch prints -------------------------------------------------------------------
_rng = np.random.default_rng(0)


@pytest.mark.parametrize("values", [
    np.arange(12.0).reshape(3, 4) / 3,
    np.arange(24.0).reshape(2, 3, 4) / 7,
    np.arange(2000.0),
    np.arange(2000.0).reshape(40, 50),
    np.arange(3000).reshape(10, 10, 30),
    np.array([1.0, 2.0, 3.0]),
    np.array([1e-5, 1.0]),
    np.array([1e9, 1.0]),
    np.array([123456.0, 0.5]),
    np.array([float("inf"), float("nan"), 1.0]),
    np.array([float("-inf"), 2.0]),
    np.array([0.0, -0.0]),
    np.array(3.5), np.array(3), np.array(True),
    np.arange(5), np.arange(100).reshape(4, 25), np.array([True, False]),
    np.arange(30.0) * 1.5,
    np.array([1.0, 2.0], dtype=np.float64),
    np.array([[1.5, 2.0]], dtype=np.float64),
    np.array([1, 2], dtype=np.int32),
    np.zeros((0,)), np.zeros((2, 0)), np.zeros((0,), dtype=np.int64),
    _rng.standard_normal((5, 7)) * 1000,
    _rng.standard_normal((3, 30)),
])  # fmt: skip
@pytest.mark.parametrize("requires_grad", [False, True])
def test_repr_matches_pytorch(values, requires_grad):
    if values.dtype == np.float64 and values.ndim and values.size and values.shape[-1] != 2:
        values = values.astype(np.float32)
    requires_grad = requires_grad and values.dtype.kind == "f"
    ours = tg.tensor(values, dtype=values.dtype, requires_grad=requires_grad)
    theirs = torch.tensor(values, requires_grad=requires_grad)
    assert repr(ours) == repr(theirs).replace("torch.", "")


def test_repr_of_results_matches_pytorch():
    for make in (lambda M: M.ones(2, 3, requires_grad=True) * 2,
                 lambda M: (M.ones(2, requires_grad=True) * 2).sum(),
                 lambda M: M.arange(40.0).reshape(4, 10).requires_grad_() / 3):  # fmt: skip
        assert repr(make(tg)) == repr(make(torch))


def test_a_checkpoint_with_a_missing_array_names_the_file(tmp_path):
    import zipfile

    path = tg.save({"w": tg.ones(2), "b": [tg.zeros(1)]}, tmp_path / "ckpt.pt")
    with zipfile.ZipFile(path) as src:
        kept = {n: src.read(n) for n in src.namelist() if n != "1.npy"}
    with zipfile.ZipFile(path, "w") as dst:
        for n, data in kept.items():
            dst.writestr(n, data)
    with pytest.raises(ValueError, match=r"ckpt\.pt.*not a readable model file"):
        tg.load(path)


def test_numpy_array_protocol_copies_when_asked_as_torch_does():
    """``np.array(t, copy=True)`` owns its memory (a symbolic Scope built from a state dict
    copies this way: sharing made two engines train one array); ``np.asarray(t)`` shares."""
    import torch

    for lib in (tg, torch):
        t = lib.ones(3)
        owned, shared = np.array(t, copy=True), np.asarray(t)
        t.add_(1)
        np.testing.assert_array_equal(owned, [1.0, 1.0, 1.0])
        np.testing.assert_array_equal(shared, [2.0, 2.0, 2.0])
        assert np.array(t, dtype=np.float64).dtype == np.float64


# -- numpy() of a tensor that requires grad ------------------------------------------------------
def _error(fn, *args, **kwargs):
    """The exception ``fn(*args, **kwargs)`` raises, as (type, message); None when it returns."""
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the comparison is the test
        return type(e), str(e)
    return None


def _grad_tensors(lib):
    leaf = lib.tensor([1.5, -2.0, 3.25], requires_grad=True)
    return {"leaf": leaf, "result": leaf * 2, "view": leaf[1:], "sum": leaf.sum()}


@pytest.mark.parametrize("which", ["leaf", "result", "view", "sum"])
def test_numpy_refuses_a_tensor_that_requires_grad_as_pytorch_does(which):
    ours, theirs = _grad_tensors(tg)[which], _grad_tensors(torch)[which]
    reads = (lambda t: t.numpy(), np.asarray, np.array, lambda t: t.numpy(force=False),
             lambda t: np.array(t, dtype=np.float32))  # fmt: skip
    for read in reads:
        want = _error(read, theirs)
        assert want is not None and want[0] is RuntimeError
        assert _error(read, ours) == want
    # the refusal changes nothing: the tensor still requires grad and backward still works
    assert ours.requires_grad and theirs.requires_grad
    assert (ours.grad_fn is None) == (theirs.grad_fn is None)
    leaf_ours, leaf_theirs = _grad_tensors(tg)["leaf"], _grad_tensors(torch)["leaf"]
    for leaf in (leaf_ours, leaf_theirs):
        out = (leaf * leaf).sum()
        with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
            out.numpy()
        out.backward()
    np.testing.assert_array_equal(leaf_ours.grad.numpy(), leaf_theirs.grad.numpy())


@pytest.mark.parametrize("which", ["leaf", "result", "view", "sum"])
def test_numpy_force_and_detach_read_the_values_as_pytorch_does(which):
    ours, theirs = _grad_tensors(tg)[which], _grad_tensors(torch)[which]
    for read in (lambda t: t.numpy(force=True), lambda t: t.detach().numpy(),
                 lambda t: np.asarray(t.detach())):  # fmt: skip
        got, want = read(ours), read(theirs)
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        # on the CPU both share the tensor's memory
        assert np.shares_memory(got, ours.detach().numpy()) == np.shares_memory(
            want, theirs.detach().numpy()
        )
    # force=True leaves the tensor in the graph
    assert ours.requires_grad == theirs.requires_grad is True


def test_numpy_force_must_be_a_bool_as_in_pytorch():
    for value in (1, None, "yes"):
        want = _error(torch.ones(2).numpy, force=value)
        got = _error(tg.ones(2).numpy, force=value)
        assert want is not None and got is not None and got[0] is want[0] is TypeError
        assert "force" in got[1] and type(value).__name__ in got[1]
    for lib in (tg, torch):
        with pytest.raises(TypeError):
            lib.ones(2).numpy(True)  # keyword only


def test_numpy_of_a_tensor_that_requires_grad_works_under_no_grad_as_in_pytorch():
    values = {}
    for lib in (tg, torch):
        t = _grad_tensors(lib)["result"]
        with lib.no_grad():
            values[lib] = (t.numpy(), np.asarray(t), np.array(t, copy=True))
        assert _error(t.numpy)[0] is RuntimeError  # grad mode is back on
        with lib.inference_mode():
            values[lib] += (t.numpy(),)
    for got, want in zip(values[tg], values[torch], strict=True):
        np.testing.assert_array_equal(got, want)


def test_numpy_of_tensors_outside_the_graph_is_not_refused():
    for lib in (tg, torch):
        leaf = lib.ones(3, requires_grad=True)
        for t in (lib.ones(3), leaf.detach(), leaf.data, leaf > 0, leaf.argmax()):
            assert not t.requires_grad
            np.testing.assert_array_equal(t.numpy(), np.asarray(t))
        with lib.no_grad():
            made = leaf * 2
        assert not made.requires_grad
        np.testing.assert_array_equal(made.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("which", ["leaf", "result", "view", "sum"])
def test_reads_other_than_numpy_work_on_a_tensor_that_requires_grad(which):
    ours, theirs = _grad_tensors(tg)[which], _grad_tensors(torch)[which]
    assert ours.tolist() == theirs.tolist()
    assert repr(ours) == repr(theirs).replace("torch.", "")
    assert str(ours) == str(theirs).replace("torch.", "")
    assert len(ours.shape) == len(theirs.shape)
    if theirs.numel() == 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns on a scalar that requires grad
            for read in (lambda t: t.item(), float, int, bool, lambda t: f"{t:.3f}"):
                got, want = read(ours), read(theirs)
                assert type(got) is type(want) and got == want
    else:
        assert [x.item() for x in ours] == [x.item() for x in theirs]


def test_a_tensor_made_from_one_that_requires_grad_copies_its_values_as_pytorch_does():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.tensor(t) warns: use clone().detach()
        made = {lib: (lib.tensor(_grad_tensors(lib)["result"]),
                      lib.tensor([_grad_tensors(lib)["sum"], 1.0]))
                for lib in (tg, torch)}  # fmt: skip
    for got, want in zip(made[tg], made[torch], strict=True):
        assert not got.requires_grad and not want.requires_grad
        np.testing.assert_array_equal(got.numpy(), want.numpy())
