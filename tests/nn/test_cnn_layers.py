"""The CNN layers as modules: construction, PyTorch's initialisation, train()/eval(), batch
norm's running statistics and buffers in state dicts, the containers, and a PyTorch-style CNN
definition and training loop that runs unchanged and agrees with PyTorch step by step."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest
import torch

import tinygrad_edu as tg
from tinygrad_edu import nn
from tinygrad_edu.nn import init


# -- initialisation -------------------------------------------------------------------------
def test_conv2d_and_linear_defaults_have_torchs_bounds_and_spread():
    tg.manual_seed(0)
    conv = nn.Conv2d(8, 64, (3, 5), groups=2)
    fan_in = 4 * 3 * 5
    bound = 1 / math.sqrt(fan_in)
    w, b = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    assert w.shape == (64, 4, 3, 5) and w.dtype == np.float32 and b.shape == (64,)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(b).max() <= bound
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.05)  # uniform's spread
    # the same as torch's kaiming_uniform_(a=sqrt(5)) bound
    gain = init.calculate_gain("leaky_relu", math.sqrt(5))
    assert bound == pytest.approx(gain * math.sqrt(3 / fan_in))
    lin = nn.Linear(300, 7)
    assert np.abs(lin.weight.detach().numpy()).max() <= 1 / math.sqrt(300)


def test_default_init_is_seeded_and_reproducible():
    tg.manual_seed(5)
    a = nn.Conv2d(3, 4, 3).weight.detach().numpy()
    tg.manual_seed(5)
    b = nn.Conv2d(3, 4, 3).weight.detach().numpy()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name,args,check", [
    ("xavier_uniform_", {}, lambda w, fi, fo: np.abs(w).max() <= math.sqrt(6 / (fi + fo))),
    ("xavier_normal_", {}, lambda w, fi, fo: abs(w.std() / math.sqrt(2 / (fi + fo)) - 1) < 0.1),
    ("kaiming_uniform_", {"nonlinearity": "relu"},
     lambda w, fi, fo: np.abs(w).max() <= math.sqrt(2) * math.sqrt(3 / fi)),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"},
     lambda w, fi, fo: abs(w.std() / (math.sqrt(2) / math.sqrt(fo)) - 1) < 0.1),
    ("trunc_normal_", {"std": 0.5, "a": -0.4, "b": 0.4}, lambda w, fi, fo: np.abs(w).max() <= 0.4),
    ("uniform_", {"a": -0.1, "b": 0.3}, lambda w, fi, fo: w.min() >= -0.1 and w.max() < 0.3),
    ("constant_", {"val": 0.25}, lambda w, fi, fo: np.all(w == 0.25)),
    ("zeros_", {}, lambda w, fi, fo: not w.any()),
])  # fmt: skip
def test_init_functions_follow_torchs_formulas(name, args, check):
    tg.manual_seed(1)
    t = tg.zeros(64, 32, 3, 3)
    version = t._version
    out = getattr(init, name)(t, **args)
    assert out is t and t._version == version + 1  # in place, version bumped
    fi, fo = 32 * 9, 64 * 9
    assert check(t.numpy(), fi, fo)


def test_init_gains_and_errors():
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("leaky_relu") == pytest.approx(
        torch.nn.init.calculate_gain("leaky_relu"))
    with pytest.raises(ValueError, match="unsupported nonlinearity 'swishy'"):
        init.calculate_gain("swishy")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(tg.zeros(5))
    q = init.orthogonal_(tg.zeros(4, 6)).numpy()
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-5)


def test_init_works_on_parameters_outside_autograd():
    lin = nn.Linear(3, 3)
    init.eye_(lin.weight)
    init.zeros_(lin.bias)
    assert lin.weight.grad_fn is None and lin.weight.requires_grad
    x = tg.randn(2, 3)
    np.testing.assert_allclose(lin(x).detach().numpy(), x.detach().numpy(), atol=1e-7)


def test_module_apply_initialises_a_whole_network():
    net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 2))
    seen = []

    def init_weights(m):
        seen.append(type(m).__name__)
        if isinstance(m, nn.Conv2d | nn.Linear):
            init.constant_(m.weight, 0.5)

    assert net.apply(init_weights) is net
    assert seen == ["Conv2d", "ReLU", "Flatten", "Linear", "Sequential"]  # PyTorch: post-order
    assert np.all(net[0].weight.detach().numpy() == 0.5)
    assert np.all(net[3].weight.detach().numpy() == 0.5)


# -- batch norm: modes, running statistics, buffers -------------------------------------------
def _pair_bn(cls_ours, cls_torch, C, **kw):
    return cls_ours(C, **kw).to("cpu"), cls_torch(C, **kw).double()


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("kind,shape", [("2d", (4, 3, 5, 5)), ("1d", (6, 3)), ("1d", (4, 3, 7))])
def test_batchnorm_module_training_and_eval_match_torch(kind, shape, momentum):
    ours = (nn.BatchNorm2d if kind == "2d" else nn.BatchNorm1d)(3, momentum=momentum,
                                                                 dtype="float64")  # fmt: skip
    theirs = (torch.nn.BatchNorm2d if kind == "2d" else torch.nn.BatchNorm1d)(
        3, momentum=momentum).double()  # fmt: skip
    rng = np.random.default_rng(0)
    with tg.no_grad():
        ours.weight._data[...] = rng.standard_normal(3)
        ours.bias._data[...] = rng.standard_normal(3)
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    for step in range(3):
        x = rng.standard_normal(shape) * (1 + step) + step
        y, yt = ours(tg.tensor(x)), theirs(torch.tensor(x))
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-10)
    for name, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[name], value.numpy(), rtol=1e-12,
                                   err_msg=name)  # fmt: skip
    assert int(ours.num_batches_tracked.item()) == 3
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape)
    before = ours.state_dict()
    np.testing.assert_allclose(ours(tg.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach()
                               .numpy(), rtol=1e-10, atol=1e-10)  # fmt: skip
    for k, v in ours.state_dict().items():  # eval mode changes nothing
        np.testing.assert_array_equal(v, before[k])


def test_eval_output_of_one_example_does_not_depend_on_its_batch():
    tg.manual_seed(0)
    bn = nn.BatchNorm2d(2)
    for _ in range(5):
        bn(tg.randn(8, 2, 3, 3) * 3 + 1)
    bn.eval()
    x = tg.randn(4, 2, 3, 3)
    alone = bn(x[0:1]).detach().numpy()
    np.testing.assert_allclose(bn(x).detach().numpy()[0:1], alone, atol=1e-6)


def test_train_eval_switch_batchnorm_and_dropout_together():
    tg.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.Dropout(0.5), nn.Linear(16, 2))
    x = tg.randn(32, 4)
    assert net.training and all(m.training for m in net.modules())
    a, b = net(x).detach().numpy(), net(x).detach().numpy()
    assert not np.allclose(a, b)  # dropout masks differ in training
    assert int(net[1].num_batches_tracked.item()) == 2
    net.eval()
    assert not any(m.training for m in net.modules())
    c, d = net(x).detach().numpy(), net(x).detach().numpy()
    np.testing.assert_array_equal(c, d)
    assert int(net[1].num_batches_tracked.item()) == 2  # eval leaves the statistics alone
    net.train()
    assert net[1].training and net[2].training


def test_batchnorm_without_running_stats_or_affine():
    bn = nn.BatchNorm2d(3, affine=False, track_running_stats=False)
    assert list(bn.parameters()) == [] and bn.state_dict() == {}
    x = np.random.default_rng(1).standard_normal((4, 3, 2, 2))
    bn.eval()  # no running statistics: batch statistics even in eval
    y = bn(tg.tensor(x)).numpy()
    tb = torch.nn.BatchNorm2d(3, affine=False, track_running_stats=False).double().eval()
    np.testing.assert_allclose(y, tb(torch.tensor(x)).numpy(), atol=1e-10)


def test_buffers_are_saved_loaded_moved_and_not_trained(tmp_path):
    net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    assert [n for n, _ in net.named_buffers()] == [
        "1.running_mean", "1.running_var", "1.num_batches_tracked"]  # fmt: skip
    assert "1.running_mean" not in dict(net.named_parameters())
    net(tg.randn(4, 1, 5, 5))
    path = net.save(tmp_path / "net.npz")
    other = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    other.load_state_dict(nn.load(path))
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(other.state_dict()[k], v)
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "1.running_var"'):
        other.load_state_dict({k: v for k, v in net.state_dict().items() if k != "1.running_var"})
    # a PyTorch state dict (tensors, num_batches_tracked as a 0-d tensor) loads too
    tnet = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2))
    tnet(torch.randn(4, 1, 5, 5))
    other.load_state_dict(tnet.state_dict())
    np.testing.assert_allclose(other[1].running_var.numpy(), tnet[1].running_var.numpy())


def test_register_buffer_rules():
    m = nn.Module()
    m.register_buffer("steps", tg.zeros(1))
    m.register_buffer("scratch", tg.zeros(2), persistent=False)
    assert sorted(n for n, _ in m.named_buffers()) == ["scratch", "steps"]
    assert list(m.state_dict()) == ["steps"]
    m.steps = tg.ones(1)  # assignment replaces the buffer
    assert m.state_dict()["steps"][0] == 1
    with pytest.raises(TypeError, match="cannot assign 'ndarray' object to buffer 'bad'"):
        m.register_buffer("bad", np.zeros(2))
    with pytest.raises(KeyError, match="invalid name"):
        m.register_buffer("a.b", tg.zeros(1))


# -- other layers -----------------------------------------------------------------------------
def test_layernorm_and_embedding_modules_match_torch():
    rng = np.random.default_rng(2)
    ln, tln = nn.LayerNorm((3, 4), dtype="float64"), torch.nn.LayerNorm((3, 4)).double()
    x = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(ln(tg.tensor(x)).detach().numpy(),
                               tln(torch.tensor(x)).detach().numpy(), atol=1e-10)
    tg.manual_seed(0)
    emb = nn.Embedding(10, 4, padding_idx=3)
    assert not emb.weight.detach().numpy()[3].any()
    assert emb.weight.detach().numpy().std() == pytest.approx(1, abs=0.35)  # N(0, 1), as PyTorch
    idx = tg.tensor(np.array([[3, 1], [1, 9]]))
    out = emb(idx)
    out.sum().backward()
    grad = emb.weight.grad.numpy()
    assert grad[1].tolist() == [2.0] * 4 and not grad[3].any()
    frozen = nn.Embedding.from_pretrained(tg.tensor(np.eye(3, dtype=np.float32)))
    assert not frozen.weight.requires_grad and frozen(tg.tensor(np.array([2]))).tolist() == [
        [0.0, 0.0, 1.0]]  # fmt: skip


def test_pooling_modules_and_reprs():
    x = tg.randn(2, 3, 8, 8)
    assert nn.MaxPool2d(2)(x).shape == (2, 3, 4, 4)
    assert nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)(x).shape == (2, 3, 5, 5)
    assert nn.AvgPool2d(2, stride=1)(x).shape == (2, 3, 7, 7)
    assert nn.AdaptiveAvgPool2d(1)(x).shape == (2, 3, 1, 1)
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    conv = nn.Conv2d(3, 6, 3, stride=2, padding=1, groups=3, bias=False)
    assert repr(conv) == ("Conv2d(3, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), "
                          "groups=3, bias=False)")  # fmt: skip
    assert conv(x).shape == (2, 6, 4, 4) and conv.bias is None
    with pytest.raises(ValueError, match=r"channel axis \(-3\) must be in_channels=3"):
        conv(tg.randn(2, 4, 8, 8))
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)


def test_flatten_sequential_and_modulelist_like_torch():
    x = tg.randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Flatten(start_dim=2)(x).shape == (2, 3, 20)
    seq = nn.Sequential(OrderedDict([("conv", nn.Conv2d(3, 4, 1)), ("act", nn.ReLU())]))
    assert [n for n, _ in seq.named_children()] == ["conv", "act"]
    assert isinstance(seq[0:1], nn.Sequential) and len(seq[0:1]) == 1
    assert seq[-1] is seq.act
    seq.append(nn.Flatten())
    assert seq(x).shape == (2, 80)
    blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    holder = nn.Module()
    holder.blocks = blocks
    assert len(list(holder.parameters())) == 6 and len(blocks[1:]) == 2
    with pytest.raises(TypeError, match="not a Module"):
        nn.Sequential(nn.ReLU)


# -- a PyTorch-style CNN, written exactly as in PyTorch, trained alongside PyTorch -------------
def _program(lib, F, optim):
    """The PyTorch tutorial's network and loop, with the library passed in: the same source runs
    on torch and on tinygrad_edu."""

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = lib.nn.Conv2d(1, 6, 3, padding=1)
            self.bn1 = lib.nn.BatchNorm2d(6)
            self.pool = lib.nn.MaxPool2d(2, 2)
            self.conv2 = lib.nn.Conv2d(6, 8, 3)
            self.dropout = lib.nn.Dropout(0.0)
            self.fc1 = lib.nn.Linear(8 * 1 * 1, 12)
            self.fc2 = lib.nn.Linear(12, 3)

        def forward(self, x):
            x = self.pool(F.relu(self.bn1(self.conv1(x))))
            x = F.avg_pool2d(F.relu(self.conv2(x)), 2)
            x = lib.nn.Flatten()(x)
            x = self.dropout(F.relu(self.fc1(x)))
            return self.fc2(x)

    def train(net, batches, epochs=2):
        criterion = lib.nn.CrossEntropyLoss()
        optimizer = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        losses = []
        for _epoch in range(epochs):
            net.train()
            for _i, (inputs, labels) in enumerate(batches):
                optimizer.zero_grad()
                outputs = net(inputs)
                loss = criterion(outputs, labels)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        net.eval()
        with lib.no_grad():
            outputs = net(batches[0][0])
        return losses, outputs

    return Net, train


def test_torch_style_cnn_program_runs_unchanged_and_agrees_with_torch():
    import torch.nn.functional as TF

    import tinygrad_edu.nn.functional as F

    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((8, 1, 8, 8)).astype(np.float32), rng.integers(0, 3, 8))
            for _ in range(3)]  # fmt: skip
    TNet, ttrain = _program(torch, TF, torch.optim)
    ONet, otrain = _program(tg, F, tg.optim)
    tnet, onet = TNet(), ONet()
    assert list(onet.state_dict()) == list(tnet.state_dict())  # same names, same order
    onet.load_state_dict(tnet.state_dict())
    tlosses, tout = ttrain(tnet, [(torch.tensor(x), torch.tensor(y)) for x, y in data])
    olosses, oout = otrain(onet, [(tg.tensor(x), tg.tensor(y)) for x, y in data])
    np.testing.assert_allclose(olosses, tlosses, rtol=2e-4, atol=1e-5)
    np.testing.assert_allclose(oout.numpy(), tout.numpy(), rtol=1e-3, atol=1e-4)
    for k, v in tnet.state_dict().items():
        np.testing.assert_allclose(onet.state_dict()[k], v.numpy(), rtol=1e-3, atol=1e-4,
                                   err_msg=k)  # fmt: skip
