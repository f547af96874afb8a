"""The wire format: plain data across the sandbox boundary, never pickle."""

import base64
import doctest
import json
import math

import numpy as np
import pytest

from tinygrad_course.grading import wire
from tinygrad_course.grading.wire import WireError, decode, encode


def test_doctests():
    assert doctest.testmod(wire).failed == 0


def test_round_trip_keeps_types():
    value = {
        "none": None, "flag": True, "int": 3, "float": 0.25, "nan": float("nan"),
        "text": "é", "list": [1, [2]], "tuple": (1, (2, 3)), (1, 2): "tuple key", 5: "int key",
        "f32": np.arange(6, dtype=np.float32).reshape(2, 3), "bool": np.array([True, False]),
        "c": np.array([1 + 2j]), "scalar": np.int16(-7), "bytes": b"\x00\xff",
        "empty": np.zeros((0, 4)), "fortran": np.asfortranarray(np.ones((2, 3))),
    }  # fmt: skip
    back = decode(encode(value))
    assert back.keys() == value.keys()
    assert math.isnan(back["nan"]) and back["tuple"] == (1, (2, 3)) and back[(1, 2)] == "tuple key"
    for key in ("f32", "bool", "c", "empty", "fortran"):
        assert back[key].dtype == value[key].dtype and np.array_equal(back[key], value[key])
    assert type(back["scalar"]) is np.int16 and back["scalar"] == -7
    assert back["bytes"] == b"\x00\xff" and back["list"] == [1, [2]]


@pytest.mark.parametrize(
    "value", [object(), np.array([object()]), {1, 2}, np.array(["a"]), lambda: 1],
    ids=["object", "object array", "set", "string array", "function"],
)  # fmt: skip
def test_unsupported_values_are_refused(value):
    with pytest.raises(WireError):
        encode(value)


def _array(dtype, shape, raw: bytes):
    return json.dumps({"a": [dtype, shape, base64.b64encode(raw).decode()]}).encode()


@pytest.mark.parametrize(
    "data",
    [
        b"not json", b'{"unknown": 1}', b'{"a": 1}',
        _array("|O", [1], b"\0" * 8), _array("<f8", [2], b"\0" * 8), _array("<f8", [-1], b""),
        _array("V8", [1], b"\0" * 8), _array("nope", [1], b"\0" * 8),
        b'{"d": [[1]]}', b'{"d": [[[1], 2]]}', b"[" * 100 + b"]" * 100, b"\xff\xfe",
    ],
    ids=["text", "tag", "array", "object dtype", "short data", "negative shape", "void dtype",
         "bad dtype", "short pair", "list key", "deep", "not utf-8"],
)  # fmt: skip
def test_malformed_data_is_refused(data):
    with pytest.raises(WireError):
        decode(data)


def test_size_limit():
    with pytest.raises(WireError):
        decode(b" " * (wire.MAX_BYTES + 1))


def test_no_pickle_anywhere():
    source = open(wire.__file__, encoding="utf-8").read()
    assert "pickle" not in source.replace("never as pickle", "").replace("never pickle", "")
    assert "allow_pickle" not in source
