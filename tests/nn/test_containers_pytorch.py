"""``Module.apply`` and the list-like containers (``Sequential``, ``ModuleList``) against
PyTorch: the same code runs on ``torch`` and on ``tinygrad_edu`` and must give the same
visiting order, the same child names and types, the same state-dict keys and the same kind of
error."""

from collections import OrderedDict

import pytest
import torch

import tinygrad_edu as tg

LIBS = (torch, tg)


def _layout(module):
    """The children of ``module`` as ``[(name, class name), ...]``."""
    return [(name, type(m).__name__) for name, m in module.named_children()]


def _same(fn):
    """Run ``fn(lib)`` on both libraries and return the two results, which must be equal."""
    ours, theirs = fn(tg), fn(torch)
    assert ours == theirs, f"tinygrad_edu gave {ours!r}, PyTorch gave {theirs!r}"
    return ours


def _error(fn, lib):
    """The exception class ``fn(lib)`` raises (None if it raises nothing)."""
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    return None


# -- Module.apply ------------------------------------------------------------------------------
def _nested(lib):
    nn = lib.nn
    shared = nn.Linear(2, 2)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = shared
            self.again = shared  # the same module twice in one parent: one child
            self.body = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Tanh(), shared))
            self.act = nn.ReLU()

    return nn.Sequential(Block(), nn.Sequential(nn.Sigmoid(), shared), nn.ModuleList([Block()]))


def _apply_order(lib):
    model = _nested(lib)
    ids: dict[int, int] = {}
    seen = []
    model.apply(lambda m: seen.append((type(m).__name__, ids.setdefault(id(m), len(ids)))))
    return seen


def test_apply_visits_children_first_like_pytorch():
    order = _same(_apply_order)
    assert order[-1][0] == "Sequential" and order[0] == ("Linear", 0)
    assert sum(name == "Linear" and i == 0 for name, i in order) > 1  # once per parent


def test_apply_returns_self_and_skips_none_children():
    for lib in LIBS:
        model = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh())
        model[0] = lib.nn.Sigmoid()
        model._modules["1"] = None
        seen: list[str] = []
        assert model.apply(lambda m, seen=seen: seen.append(type(m).__name__)) is model
        assert seen == ["Sigmoid", "Sequential"]


def _dcgan(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.ConvTranspose2d(8, 4, 4, 1, 0, bias=False), nn.BatchNorm2d(4), nn.ReLU(True),
        nn.Sequential(nn.Conv2d(4, 4, 3, 1, 1, bias=False), nn.BatchNorm2d(4),
                      nn.LeakyReLU(0.2, inplace=True)),
        nn.ConvTranspose2d(4, 3, 4, 2, 1, bias=False), nn.Tanh(),
    )  # fmt: skip


def test_dcgan_weights_init_visits_layers_in_pytorch_order():
    def run(lib):
        init, seen = lib.nn.init, []

        def weights_init(m):  # the DCGAN tutorial's initialiser, by class name
            classname = m.__class__.__name__
            seen.append(classname)
            if classname.find("Conv") != -1:
                init.normal_(m.weight.data, 0.0, 0.02)
            elif classname.find("BatchNorm") != -1:
                init.normal_(m.weight.data, 1.0, 0.02)
                init.constant_(m.bias.data, 0)

        lib.manual_seed(0)
        net = _dcgan(lib)
        net.apply(weights_init)
        stds = [round(float(m.weight.detach().numpy().std()), 1) for m in net.modules()
                if "Conv" in type(m).__name__]  # fmt: skip
        return seen, stds

    seen, stds = _same(run)
    assert seen[-1] == "Sequential" and stds == [0.0, 0.0, 0.0]


# -- Sequential --------------------------------------------------------------------------------
def _seq(lib):
    nn = lib.nn
    lib.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 4), nn.Tanh())


def test_sequential_slice_keeps_names():
    def run(lib):
        model = _seq(lib)
        return (_layout(model[1:]), list(model[1:].state_dict()), _layout(model[::2]),
                _layout(model[5:]), type(model[1:]).__name__)  # fmt: skip

    assert _same(run)[0][0] == ("1", "ReLU")

    def named(lib):
        nn = lib.nn
        return _layout(nn.Sequential(OrderedDict(a=nn.ReLU(), b=nn.Tanh(), c=nn.Sigmoid()))[1:])

    _same(named)


def test_sequential_slice_keeps_subclass():
    for lib in LIBS:

        class Mine(lib.nn.Sequential):
            pass

        assert type(Mine(lib.nn.ReLU(), lib.nn.Tanh())[1:]) is Mine


@pytest.mark.parametrize("index", [0, 2, -1, -4])
def test_sequential_setitem_keeps_name_and_position(index):
    def run(lib):
        model = _seq(lib)
        model[index] = lib.nn.Sigmoid()
        return _layout(model)

    _same(run)


@pytest.mark.parametrize("index", [1, -1, 0, slice(0, 2), slice(None, None, 2), slice(5, 9)])
def test_sequential_delitem_renumbers(index):
    def run(lib):
        model = _seq(lib)
        del model[index]
        return _layout(model), list(model.state_dict())

    _same(run)


def test_sequential_delitem_renumbers_named_children():
    def run(lib):
        nn = lib.nn
        model = nn.Sequential(OrderedDict(a=nn.ReLU(), b=nn.Tanh(), c=nn.Sigmoid()))
        del model[0]
        return _layout(model)

    _same(run)


@pytest.mark.parametrize("index", [0, 1, 4, -1, -4])
def test_sequential_insert(index):
    def run(lib):
        model = _seq(lib)
        assert model.insert(index, lib.nn.Identity()) is model
        return _layout(model), list(model.state_dict())

    _same(run)


def test_sequential_extend_pop_append_add_mul():
    def run(lib):
        nn = lib.nn
        model = _seq(lib)
        steps = []
        model.extend([nn.Sigmoid(), nn.ReLU()])
        steps.append(_layout(model))
        steps.append(type(model.pop(1)).__name__)
        steps.append(_layout(model))
        steps.append(type(model.pop(-1)).__name__)
        popped = model.pop(slice(0, 2))
        steps += [_layout(popped), _layout(model)]
        model.append(nn.ReLU())
        steps.append(_layout(model))
        other = nn.Sequential(nn.Tanh(), nn.Sigmoid())
        both = model + other
        steps += [_layout(both), type(both).__name__, both[-1] is other[1], _layout(model)]
        model += other
        steps.append(_layout(model))
        steps.append(_layout(other * 2))
        steps.append(_layout(2 * other))
        other *= 3
        steps.append(_layout(other))
        return steps

    _same(run)


def test_sequential_bad_indices_raise_like_pytorch():
    cases = {
        "get past the end": lambda lib: _seq(lib)[4],
        "get before the start": lambda lib: _seq(lib)[-5],
        "get with a float": lambda lib: _seq(lib)[1.0],
        "set past the end": lambda lib: _seq(lib).__setitem__(4, lib.nn.ReLU()),
        "set before the start": lambda lib: _seq(lib).__setitem__(-5, lib.nn.ReLU()),
        "set with a slice": lambda lib: _seq(lib).__setitem__(slice(0, 1), lib.nn.ReLU()),
        "set with a str": lambda lib: _seq(lib).__setitem__("1", lib.nn.ReLU()),
        "set a non-module": lambda lib: _seq(lib).__setitem__(0, 3),
        "del past the end": lambda lib: _seq(lib).__delitem__(4),
        "insert past the end": lambda lib: _seq(lib).insert(5, lib.nn.ReLU()),
        "insert before the start": lambda lib: _seq(lib).insert(-5, lib.nn.ReLU()),
        "pop past the end": lambda lib: _seq(lib).pop(4),
        "add a module": lambda lib: _seq(lib) + lib.nn.ReLU(),
        "iadd a module": lambda lib: _seq(lib).__iadd__(lib.nn.ReLU()),
        "multiply by 0": lambda lib: _seq(lib) * 0,
        "multiply by a float": lambda lib: _seq(lib) * 1.5,
    }
    for what, fn in cases.items():
        ours, theirs = _error(fn, tg), _error(fn, torch)
        assert theirs is not None, what
        # PyTorch's Sequential.insert asserts the type; here a wrong type is a TypeError
        same = ours is not None and issubclass(ours, theirs)
        assert same or (ours, theirs) == (TypeError, AssertionError), (
            f"{what}: tinygrad_edu raised {ours}, PyTorch {theirs}")  # fmt: skip


def test_sequential_errors_name_the_op():
    model = _seq(tg)
    with pytest.raises(IndexError, match=r"Sequential.*index 4 is out of range.*4 modules"):
        model[4] = tg.nn.ReLU()
    with pytest.raises(IndexError, match=r"Sequential.insert: index 9"):
        model.insert(9, tg.nn.ReLU())
    with pytest.raises(TypeError, match=r"Sequential.insert.*Module"):
        model.insert(0, tg.nn.ReLU)
    with pytest.raises(ValueError, match=r"Sequential \+ .*ReLU"):
        model + tg.nn.ReLU()


# -- ModuleList --------------------------------------------------------------------------------
def _list(lib):
    nn = lib.nn
    return nn.ModuleList([nn.Linear(2, 2), nn.ReLU(), nn.Tanh()])


def test_modulelist_operations_match_pytorch():
    def run(lib):
        nn = lib.nn
        ml = _list(lib)
        steps = []
        ml[-1] = nn.Sigmoid()
        ml[0] = nn.Identity()
        steps.append(_layout(ml))
        ml += [nn.ReLU(), nn.Tanh()]
        steps.append(_layout(ml))
        both = ml + nn.ModuleList([nn.Sigmoid()])
        steps += [_layout(both), type(both).__name__, _layout(ml + [nn.Tanh()])]
        ml.insert(1, nn.Linear(1, 1))
        ml.insert(len(ml), nn.Linear(3, 3))
        steps.append(_layout(ml))
        steps.append(type(ml.pop(2)).__name__)
        steps.append(_layout(ml))
        steps.append(_layout(ml.pop(slice(1, 3))))
        steps.append(_layout(ml))
        del ml[0]
        steps.append(_layout(ml))
        del ml[-1]
        steps.append(_layout(ml))
        del ml[::2]
        steps.append((_layout(ml), list(ml.state_dict())))
        steps.append(_layout(nn.ModuleList()))
        steps.append(_layout(nn.ModuleList(None)))
        steps.append(_layout(_list(lib)[1:]))
        return steps

    _same(run)


def test_modulelist_bad_indices_raise_like_pytorch():
    cases = {
        "get past the end": lambda lib: _list(lib)[3],
        "get with a float": lambda lib: _list(lib)[1.0],
        "set past the end": lambda lib: _list(lib).__setitem__(3, lib.nn.ReLU()),
        "set before the start": lambda lib: _list(lib).__setitem__(-4, lib.nn.ReLU()),
        "set a non-module": lambda lib: _list(lib).__setitem__(0, 3),
        "del past the end": lambda lib: _list(lib).__delitem__(3),
        "pop past the end": lambda lib: _list(lib).pop(3),
        "extend with a module": lambda lib: _list(lib).extend(lib.nn.ReLU()),
        "iadd a number": lambda lib: _list(lib).__iadd__(3),
        "add a number": lambda lib: _list(lib) + 3,
        "append a number": lambda lib: _list(lib).append(3),
    }
    for what, fn in cases.items():
        ours, theirs = _error(fn, tg), _error(fn, torch)
        assert theirs is not None, what
        assert ours is not None and issubclass(ours, theirs), (
            f"{what}: tinygrad_edu raised {ours}, PyTorch {theirs}")  # fmt: skip


def test_modulelist_errors_name_the_op():
    ml = _list(tg)
    with pytest.raises(IndexError, match=r"ModuleList.*index 3 is out of range.*3 modules"):
        ml[3]
    with pytest.raises(IndexError, match=r"ModuleList.insert: index 9"):
        ml.insert(9, tg.nn.ReLU())
    with pytest.raises(TypeError, match=r"ModuleList.extend.*iterable.*ReLU"):
        ml.extend(tg.nn.ReLU())


# -- Module attribute assignment and Identity --------------------------------------------------
def test_reassigning_a_child_keeps_its_position():
    def run(lib):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b, self.c = nn.Linear(1, 1), nn.ReLU(), nn.Linear(1, 1)

        net = Net()
        net.a = nn.Linear(1, 1)
        net.b = None  # a child set to None stays registered, as None
        steps = [[k for k in net._modules], _layout(net), list(net.state_dict())]
        net.c.weight = lib.nn.Parameter(lib.zeros(1, 1))
        steps.append(list(net.state_dict()))
        return steps

    _same(run)
    net = tg.nn.Sequential(tg.nn.ReLU())
    with pytest.raises(TypeError, match=r"cannot assign 'int' as child module '0'"):
        net[0] = 3
    with pytest.raises(TypeError, match=r"child module"):
        setattr(net, "0", 3)


def test_identity_ignores_its_arguments():
    for lib in LIBS:
        layer = lib.nn.Identity(54, unused_argument1=0.1, unused_argument2=False)
        x = lib.ones(2, 3)
        assert layer(x) is x
        assert repr(layer) == "Identity()"
