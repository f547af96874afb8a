"""Files saved before the layers were filed by concept still load: a pickle that names a
class by its old module (``tinygrad_edu.nn.more_layers.Conv1d``) is read as the class's new
path, under the same allow-list."""

import io
import pickle

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.nn.unpickler import MOVED


def _renamed(data: bytes, new: str, old: str) -> bytes:
    """The pickle ``data`` with the module name ``new`` written as ``old`` (protocol 2 names
    a class with the GLOBAL opcode: ``c<module>\\n<name>\\n``)."""
    marker = f"c{new}\n".encode()
    assert marker in data, "expected the class named by a GLOBAL opcode"
    return data.replace(marker, f"c{old}\n".encode())


def _saved_under(model, old_module: str) -> io.BytesIO:
    """``tg.save(model)`` as a file written when the classes of ``model`` and of its
    sub-modules lived in ``old_module``."""
    buf = io.BytesIO()
    tg.save(model, buf)
    buf.seek(0)
    arrays = dict(np.load(buf))
    data = arrays["__pickle__"].tobytes()
    for new in {type(m).__module__ for m in model.modules()}:
        data = _renamed(data, new, old_module)
    arrays["__pickle__"] = np.frombuffer(data, np.uint8)
    out = io.BytesIO()
    np.savez(out, **arrays)
    out.seek(0)
    return out


@pytest.mark.parametrize("weights_only", [True, False])
@pytest.mark.parametrize("make, old", [
    (lambda: tg.nn.Conv1d(2, 3, 3), "tinygrad_edu.nn.more_layers"),
    (lambda: tg.nn.ReflectionPad2d(1), "tinygrad_edu.nn.more_layers"),
    (lambda: tg.nn.Linear(3, 2), "tinygrad_edu.nn.layers"),
    (lambda: tg.nn.Bilinear(2, 3, 4), "tinygrad_edu.nn.extra_layers"),
    (lambda: tg.nn.Conv3d(1, 2, 2), "tinygrad_edu.nn.conv3d"),
    (lambda: tg.nn.Unflatten(1, (2, 3)), "tinygrad_edu.nn.reshape"),
])  # fmt: skip
def test_a_module_saved_under_its_old_path_loads(make, old, weights_only):
    tg.manual_seed(0)
    model = make()
    back = tg.load(_saved_under(model, old), weights_only=weights_only)
    assert type(back) is type(model)
    assert repr(back) == repr(model)
    for (name, p), (name2, q) in zip(model.state_dict().items(), back.state_dict().items()):
        assert name == name2
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_a_sequential_of_old_paths_loads_whole():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(4, 3), tg.nn.ReLU(), tg.nn.Dropout(0.1))
    buf = _saved_under(model, "tinygrad_edu.nn.layers")  # Sequential, Linear, ReLU, Dropout
    back = tg.load(buf)
    x = tg.randn(2, 4)
    assert [type(m) for m in back.modules()] == [type(m) for m in model.modules()]
    np.testing.assert_array_equal(back.eval()(x).detach().numpy(),
                                  model.eval()(x).detach().numpy())


def test_an_old_module_path_gives_only_the_classes_that_moved():
    # the table maps names, not whole modules: anything else under an old path is refused
    data = b"\x80\x02ctinygrad_edu.nn.more_layers\nos\n."
    with pytest.raises(pickle.UnpicklingError, match=r"more_layers\.os was not an allowed"):
        from tinygrad_edu.nn.unpickler import WeightsUnpickler

        WeightsUnpickler(io.BytesIO(data), resolve=lambda m, n: None).load()


def test_every_moved_name_resolves_to_a_class_or_function_at_its_new_path():
    import importlib

    for (old, name), new in MOVED.items():
        obj = getattr(importlib.import_module(new), name)
        assert obj.__module__ == new, (old, name, new, obj.__module__)
