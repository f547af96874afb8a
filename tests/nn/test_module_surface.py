"""Module methods, hooks, containers, weight tying and ``nn.utils``, each against PyTorch:
the same model built in both libraries gives the same names, state-dict keys, hook arguments,
gradients and clipped gradients."""

import numpy as np
import pytest
import torch

import tinygrad_edu as tg


def _copy_weights(ours, theirs):
    """Give our model the weights of PyTorch's (by state-dict name)."""
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def _tiny_lm(lib):
    """A bigram-style model with tied embedding/output weights, containers and a buffer."""
    nn = lib.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = nn.Embedding(7, 4)
            self.blocks = nn.ModuleDict({"mix": nn.Linear(4, 4), "act": nn.Tanh()})
            self.scales = nn.ParameterList([nn.Parameter(lib.ones(4)) for _ in range(2)])
            self.extra = nn.ParameterDict({"bias": nn.Parameter(lib.zeros(7))})
            self.head = nn.Linear(4, 7, bias=False)
            self.head.weight = self.tok_emb.weight  # weight tying
            self.register_buffer("mask", lib.ones(4))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)

        def forward(self, idx):
            x = self.tok_emb(idx) * self.scales[0] * self.mask
            x = self.blocks["act"](self.blocks["mix"](x)) * self.scales[1]
            return self.head(x) + self.extra["bias"]

    return LM()


def _pair():
    torch.manual_seed(0)
    theirs = _tiny_lm(torch)
    ours = _tiny_lm(tg)
    _copy_weights(ours, theirs)
    return ours, theirs


def test_names_and_state_dict_keys_equal_torchs():
    ours, theirs = _pair()
    assert list(ours.state_dict()) == list(theirs.state_dict())  # tied weight under both keys
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))  # counted once
    assert ours.head.weight is ours.tok_emb.weight
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert ([n for n, _ in ours.named_parameters(recurse=False)]
            == [n for n, _ in theirs.named_parameters(recurse=False)])  # fmt: skip
    assert ([n for n, _ in ours.named_parameters(remove_duplicate=False)]
            == [n for n, _ in theirs.named_parameters(remove_duplicate=False)])  # fmt: skip


def test_tied_model_trains_like_torchs():
    ours, theirs = _pair()
    idx = np.array([[1, 2, 3], [4, 5, 6]])
    y = np.array([[2, 3, 4], [5, 6, 0]])
    opt_o = tg.optim.AdamW(ours.parameters(), lr=0.01)
    opt_t = torch.optim.AdamW(theirs.parameters(), lr=0.01)
    for _ in range(5):
        for m, opt, lib in ((ours, opt_o, tg), (theirs, opt_t, torch)):
            logits = m(lib.tensor(idx))
            loss = lib.nn.functional.cross_entropy(logits.reshape(6, 7), lib.tensor(y).reshape(6))
            opt.zero_grad()
            loss.backward()
            opt.step()
    for (n, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=n)


def test_containers_behave_as_torchs():
    md = tg.nn.ModuleDict([("a", tg.nn.Linear(1, 1))])
    md["b"] = tg.nn.ReLU()
    assert list(md) == ["a", "b"] and "a" in md and len(md) == 2
    assert isinstance(md.pop("b"), tg.nn.ReLU) and list(md.keys()) == ["a"]
    with pytest.raises(TypeError, match="string"):
        md[1] = tg.nn.ReLU()
    pl = tg.nn.ParameterList([tg.ones(2)])  # a plain tensor becomes a Parameter
    pl.append(tg.zeros(3))
    assert all(isinstance(p, tg.nn.Parameter) and p.requires_grad for p in pl)
    assert pl[-1].shape == (3,) and len(pl[0:1]) == 1
    with pytest.raises(IndexError):
        pl[2]
    with pytest.raises(TypeError, match="Parameter or a Tensor"):
        pl.append(3.0)
    pd = tg.nn.ParameterDict({"w": tg.ones(1)})
    pd.update([("v", tg.nn.Parameter(tg.zeros(1)))])
    assert list(pd) == ["w", "v"] and sorted(pd.state_dict()) == ["v", "w"]
    assert pd.get("nope") is None and isinstance(pd["w"], tg.nn.Parameter)


def test_get_submodule_parameter_buffer():
    ours, theirs = _pair()
    assert ours.get_submodule("blocks.mix") is ours.blocks["mix"]
    assert ours.get_submodule("") is ours
    with pytest.raises(TypeError, match="dotted name"):
        ours.get_submodule(0)
    assert ours.get_parameter("blocks.mix.weight") is ours.blocks["mix"].weight
    assert ours.get_parameter("scales.1") is ours.scales[1]
    assert ours.get_buffer("mask") is ours.mask
    for target, fn in [("blocks.nope", "get_submodule"), ("blocks.mix.nope", "get_parameter"),
                       ("blocks.mix.in_features", "get_parameter"), ("nope", "get_buffer")]:
        with pytest.raises(AttributeError) as mine:
            getattr(ours, fn)(target)
        with pytest.raises(AttributeError) as ref:
            getattr(theirs, fn)(target)
        assert str(mine.value) == str(ref.value)


def test_to_dtype_cpu_requires_grad_and_zero_grad():
    ours, _ = _pair()
    opt = tg.optim.SGD(ours.parameters(), lr=0.1)
    w = ours.blocks["mix"].weight
    assert ours.double() is ours and w.dtype == np.float64 and ours.mask.dtype == np.float64
    assert ours.get_parameter("blocks.mix.weight") is w and opt.param_groups[0]["params"][1] is w
    ours.float()
    assert w.dtype == np.float32
    ours.to(tg.float64)
    assert all(p.dtype == np.float64 for p in ours.parameters())
    ours.to("sim:1", tg.float32)
    assert w.device == "sim:1" and w.dtype == np.float32
    ours.cpu().half()
    assert w.device == "cpu" and w.dtype == np.float16
    with pytest.raises(TypeError, match="floating point"):
        ours.to(tg.int64)
    ours.float().requires_grad_(False)
    assert not any(p.requires_grad for p in ours.parameters())
    ours.requires_grad_()
    ours(tg.tensor([[1, 2]])).sum().backward()
    assert w.grad is not None
    ours.zero_grad(set_to_none=False)
    assert float(abs(w.grad).sum()) == 0.0
    ours.zero_grad()
    assert w.grad is None


def test_apply_initialises_every_linear():
    ours, _ = _pair()

    def init(m):
        if isinstance(m, tg.nn.Linear):
            tg.nn.init.zeros_(m.weight)

    ours.apply(init)
    assert float(abs(ours.blocks["mix"].weight).sum()) == 0.0


def _hooked(lib, log):
    lin = lib.nn.Linear(3, 2)
    lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    lin.register_forward_hook(lambda m, args, out: out + 1)
    lin.register_full_backward_pre_hook(lambda m, gout: (gout[0] * 3,))
    lin.register_full_backward_hook(
        lambda m, gin, gout: log.append((gin, gout)) or tuple(None if g is None else g / 2
                                                              for g in gin))  # fmt: skip
    return lin


@pytest.mark.parametrize("input_requires_grad", [True, False])
def test_hooks_see_and_change_what_torchs_do(input_requires_grad):
    torch.manual_seed(1)
    logs = {tg: [], torch: []}
    t_lin = _hooked(torch, logs[torch])
    o_lin = _hooked(tg, logs[tg])
    _copy_weights(o_lin, t_lin)
    x0 = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    results = {}
    for lib, lin in ((tg, o_lin), (torch, t_lin)):
        x = lib.tensor(x0, requires_grad=input_requires_grad)
        out = lin(x)
        (out * out).sum().backward()
        results[lib] = (out, x.grad, lin.weight.grad)
    for a, b in zip(results[tg], results[torch]):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5)
    (gin_o, gout_o), (gin_t, gout_t) = logs[tg][0], logs[torch][0]
    assert len(gin_o) == len(gin_t) and len(gout_o) == len(gout_t) == 1
    np.testing.assert_allclose(gout_o[0].numpy(), gout_t[0].numpy(), rtol=1e-5)
    for a, b in zip(gin_o, gin_t):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5)


def test_hook_handles_remove_and_kwargs_hooks():
    lin = tg.nn.Linear(2, 2)
    calls = []
    h = lin.register_forward_hook(lambda m, a, o: calls.append("fwd"))
    p = lin.register_forward_pre_hook(lambda m, a, k: calls.append("pre") or None,
                                      with_kwargs=True)  # fmt: skip
    first = lin.register_forward_hook(lambda m, a, o: calls.append("first"), prepend=True)
    lin(tg.ones(1, 2))
    assert calls == ["pre", "first", "fwd"]
    h.remove(), p.remove(), first.remove()
    lin(tg.ones(1, 2))
    assert calls == ["pre", "first", "fwd"]


# -- nn.utils --------------------------------------------------------------------------------------
def _grads_pair(dtype=np.float32):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((3, 4), (4,), (2, 2))]
    ours = [tg.nn.Parameter(a.copy()) for a in arrays]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    for p, q, a in zip(ours, theirs, arrays):
        p.grad = tg.tensor(a * 3)
        q.grad = torch.tensor(a * 3)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_equals_torchs(norm_type, max_norm):
    ours, theirs = _grads_pair()
    n_o = tg.nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    n_t = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert n_o.dtype == np.float32 and n_o.shape == ()
    np.testing.assert_allclose(n_o.item(), n_t.item(), rtol=1e-6)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_value_and_edge_cases():
    ours, theirs = _grads_pair()
    tg.nn.utils.clip_grad_value_(ours, 0.5)
    torch.nn.utils.clip_grad_value_(theirs, 0.5)
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    assert tg.nn.utils.clip_grad_norm_([tg.nn.Parameter([1.0])], 1.0).item() == 0.0
    bad = tg.nn.Parameter([1.0])
    bad.grad = tg.tensor([float("inf")])
    with pytest.raises(RuntimeError, match="non-finite"):
        tg.nn.utils.clip_grad_norm_(bad, 1.0, error_if_nonfinite=True)
    one = tg.nn.Parameter([3.0, 4.0])
    one.grad = tg.tensor([3.0, 4.0])
    assert tg.nn.utils.clip_grad_norm_(one, 1.0).item() == pytest.approx(5.0)  # one tensor


def test_parameters_vector_roundtrip_equals_torchs():
    ours, theirs = _pair()
    v_o = tg.nn.utils.parameters_to_vector(ours.parameters())
    v_t = torch.nn.utils.parameters_to_vector(theirs.parameters())
    np.testing.assert_array_equal(v_o.detach().numpy(), v_t.detach().numpy())
    assert v_o.requires_grad  # differentiable, as PyTorch's
    tg.nn.utils.vector_to_parameters(v_o.detach() * 0 + 1, ours.parameters())
    assert all(float(p.detach().numpy().min()) == 1.0 for p in ours.parameters())
    with pytest.raises(RuntimeError, match="hold"):
        tg.nn.utils.vector_to_parameters(tg.ones(3), ours.parameters())
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        tg.nn.utils.vector_to_parameters(np.ones(3), ours.parameters())


def test_assigning_a_plain_tensor_to_a_parameter_is_refused():
    lin, ref = tg.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="as parameter 'weight'"):
        lin.weight = tg.zeros(2, 2)
    with pytest.raises(TypeError, match="as parameter 'weight'"):
        ref.weight = torch.zeros(2, 2)
    assert isinstance(lin.weight, tg.nn.Parameter)
    lin.bias, ref.bias = None, None
    assert [n for n, _ in lin.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert lin.bias is None and "bias" in lin._parameters
    lin.bias = tg.nn.Parameter(tg.zeros(2))
    assert [n for n, _ in lin.named_parameters()] == ["weight", "bias"]


def test_load_state_dict_reports_keys_as_torch():
    ours, theirs = tg.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    sd = {"weight": np.ones((2, 2), np.float32), "extra": np.zeros(1, np.float32)}
    r_o = ours.load_state_dict(sd, strict=False)
    r_t = theirs.load_state_dict({k: torch.tensor(v) for k, v in sd.items()}, strict=False)
    assert r_o.missing_keys == r_t.missing_keys == ["bias"]
    assert r_o.unexpected_keys == r_t.unexpected_keys == ["extra"]
    missing, unexpected = r_o
    assert missing == ["bias"] and unexpected == ["extra"]
    ours.register_module("sub", tg.nn.ReLU())
    assert isinstance(ours.sub, tg.nn.ReLU)
