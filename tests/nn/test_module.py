"""Module registration, state dicts, saving, modes and the layers."""

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu import nn
from tinygrad_edu.nn import functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.scale = nn.Parameter(np.ones(4, np.float32))
        self.note = "not a parameter"

    def forward(self, x):
        return self.fc(x).relu() * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(4, 2, bias=False)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.head(self.drop(self.block(x)))


def test_parameter_is_a_leaf_that_requires_grad():
    p = nn.Parameter([1.0, 2.0])
    assert isinstance(p, tg.Tensor) and p.is_leaf and p.requires_grad
    assert p.dtype == np.float32
    y = (p * p).sum()
    y.backward()
    np.testing.assert_allclose(p.grad.numpy(), [2.0, 4.0])
    assert "Parameter containing" in repr(p)


def test_registration_and_dotted_names():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    # PyTorch's order: a module's own parameters, then its children's, depth first
    assert names == ["block.scale", "block.fc.weight", "block.fc.bias", "head.weight"]
    assert len(list(net.parameters())) == 4
    assert [n for n, _ in net.named_modules()] == ["", "block", "block.fc", "head", "drop"]
    assert [type(m).__name__ for m in net.children()] == ["Block", "Linear", "Dropout"]
    assert net.block.note == "not a parameter"
    # reassigning replaces, deleting unregisters
    net.head = nn.Linear(4, 2)
    assert "head.bias" in dict(net.named_parameters())
    del net.head
    assert not any(n.startswith("head") for n, _ in net.named_parameters())


def test_shared_parameter_counted_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2


def test_forgetting_super_init_is_a_clear_error():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter([1.0])

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Bad()


def test_linear_matches_numpy_and_init_bounds():
    tg.manual_seed(3)
    lin = nn.Linear(16, 5)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert w.shape == (5, 16) and b.shape == (5,)
    assert np.abs(w).max() <= 0.25 and np.abs(b).max() <= 0.25
    assert w.std() > 0.1  # uniform(-0.25, 0.25) has std 0.144
    x = np.random.default_rng(0).standard_normal((7, 16)).astype(np.float32)
    np.testing.assert_allclose(lin(tg.tensor(x)).detach().numpy(), x @ w.T + b, rtol=1e-5,
                               atol=1e-6)
    with pytest.raises(ValueError, match="in_features=16"):
        lin(tg.zeros(2, 3))


def test_linear_gradients_match_numpy():
    tg.manual_seed(0)
    lin = nn.Linear(4, 3)
    x = np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32)
    y = lin(tg.tensor(x)).sum()
    y.backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.ones((6, 3)).T @ x, rtol=1e-5)
    np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(3, 6.0))


def test_zero_grad_both_ways():
    lin = nn.Linear(2, 2)
    lin(tg.ones(1, 2)).sum().backward()
    lin.zero_grad(set_to_none=False)
    assert np.all(lin.weight.grad.numpy() == 0)
    lin.zero_grad()
    assert lin.weight.grad is None


def test_train_eval_and_dropout():
    tg.manual_seed(0)
    net = Net()
    assert net.training and net.drop.training
    net.eval()
    assert not net.training and not net.drop.training and not net.block.fc.training
    x = tg.ones(1000, 10)
    d = nn.Dropout(0.25)
    d.eval()
    assert d(x) is x
    d.train()
    out = d(x).numpy()
    kept = out != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-6)
    assert not nn.Dropout(1.0)(x).numpy().any()  # PyTorch allows p=1: every element dropped
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_activations_and_losses_match_functional():
    x = tg.tensor([[-1.0, 0.5, 2.0]])
    np.testing.assert_allclose(nn.ReLU()(x).numpy(), [[0, 0.5, 2.0]])
    np.testing.assert_allclose(nn.Tanh()(x).numpy(), np.tanh(x.numpy()), rtol=1e-6)
    np.testing.assert_allclose(nn.Sigmoid()(x).numpy(), 1 / (1 + np.exp(-x.numpy())), rtol=1e-6)
    assert nn.Flatten()(tg.zeros(2, 3, 4)).shape == (2, 12)
    logits = np.array([[2.0, 0.0, -1.0], [0.1, 0.2, 0.3]], np.float32)
    target = np.array([0, 2])
    ref = -np.mean(
        [logits[i, target[i]] - np.log(np.exp(logits[i]).sum()) for i in range(2)]
    )
    got = nn.CrossEntropyLoss()(tg.tensor(logits), tg.tensor(target, dtype="int64")).item()
    assert got == pytest.approx(ref, rel=1e-5)
    assert nn.MSELoss()(tg.tensor([1.0, 2.0]), tg.tensor([0.0, 0.0])).item() == 2.5


def test_sequential_indexing_and_repr():
    seq = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1, bias=False))
    assert len(seq) == 3 and isinstance(seq[1], nn.Tanh) and isinstance(seq[-1], nn.Linear)
    assert [type(m).__name__ for m in seq] == ["Linear", "Tanh", "Linear"]
    assert repr(seq) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): Tanh()\n"
        "  (2): Linear(in_features=3, out_features=1, bias=False)\n"
        ")"
    )
    r = repr(Net())
    assert "(block): Block(\n    (fc): Linear(in_features=3" in r
    assert "(drop): Dropout(p=0.5, inplace=False)" in r
    with pytest.raises(TypeError, match="not a Module"):
        nn.Sequential(nn.Linear(1, 1), "relu")


def test_state_dict_roundtrip_through_npz(tmp_path):
    tg.manual_seed(1)
    a = Net()
    tg.manual_seed(2)
    b = Net()
    x = tg.randn(5, 3)
    a.eval(), b.eval()
    assert not np.allclose(a(x).detach().numpy(), b(x).detach().numpy())
    sd = a.state_dict()
    assert all(isinstance(v, tg.Tensor) and not v.requires_grad for v in sd.values())
    assert np.shares_memory(sd["head.weight"]._data, a.head.weight._data)  # not a copy
    path = a.save(tmp_path / "net")
    assert path.endswith(".npz")
    loaded = nn.load(path)
    assert sorted(loaded) == sorted(sd)
    version = b.head.weight._version
    b.load_state_dict(loaded)
    assert b.head.weight._version == version + 1
    np.testing.assert_allclose(a(x).detach().numpy(), b(x).detach().numpy())
    # the file is a plain npz that numpy reads without pickle
    with np.load(path, allow_pickle=False) as f:
        np.testing.assert_array_equal(f["block.fc.weight"], a.block.fc.weight.detach().numpy())


def test_load_state_dict_errors_name_keys_and_shapes():
    net = Net()
    sd = net.state_dict()
    sd.pop("head.weight")
    sd["extra.weight"] = np.zeros(2, np.float32)
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "head.weight". '
                       r'\n\tUnexpected key\(s\) in state_dict: "extra.weight"'):  # fmt: skip
        net.load_state_dict(sd)
    missing, unexpected = net.load_state_dict(sd, strict=False)
    assert missing == ["head.weight"] and unexpected == ["extra.weight"]
    bad = net.state_dict()
    bad["block.scale"] = np.zeros(5, np.float32)
    with pytest.raises(RuntimeError, match=r"size mismatch for block.scale: copying a param "
                       r"with shape tg.Size\(\[5\]\) from checkpoint, the shape in current "
                       r"model is tg.Size\(\[4\]\)"):  # fmt: skip
        net.load_state_dict(bad)


def test_pickled_file_is_refused(tmp_path):
    path = tmp_path / "evil.npz"
    np.savez(path, w=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="allow_pickle"):
        nn.load(path)


def test_to_keeps_parameter_identity_on_cpu():
    lin = nn.Linear(2, 2)
    w = lin.weight
    assert lin.to("cpu") is lin and lin.weight is w and w.device == "cpu"


@pytest.mark.gpu
@pytest.mark.skipif(not tg.backend.cuda_available(), reason="needs CuPy and a CUDA GPU")
def test_to_cuda_moves_parameters_and_trains():
    lin = nn.Linear(3, 2)
    w = lin.weight
    ref = lin(tg.ones(4, 3)).numpy()
    lin.to("cuda")
    assert lin.weight is w and w.device == "cuda:0"
    out = lin(tg.ones(4, 3, device="cuda"))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5)
    out.sum().backward()
    assert w.grad.device == "cuda:0"


def test_functional_linear_without_bias():
    x, w = tg.ones(2, 3), tg.ones(4, 3)
    assert F.linear(x, w).shape == (2, 4)
