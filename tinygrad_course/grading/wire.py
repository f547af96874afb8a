"""Plain data across the sandbox boundary: numbers, strings, lists, dicts and numpy arrays.

Everything a graded probe returns (and every argument a test hands it) travels as JSON with
tagged values, never as pickle: decoding untrusted bytes builds only these types, checks every
array's dtype, shape and size, and refuses anything else.

- ``None``, ``bool``, ``int``, ``float`` (NaN and infinities included), ``str``: as they are.
- ``list``: a JSON array; ``tuple``: ``{"t": [...]}``; ``dict``: ``{"d": [[key, value], ...]}``
  (keys of any supported type, order kept).
- numpy arrays: ``{"a": [dtype, shape, base64 bytes]}`` (booleans, integers, floats and complex
  numbers only); a numpy scalar is a 0-d array marked ``{"s": ...}`` and comes back as a numpy
  scalar of its dtype.
- ``bytes``: ``{"b": base64}``.

Standard library and numpy only: the sandboxed child imports this file on its own, before any
submitted code.

>>> import numpy as np
>>> value = {"grads": [np.arange(3.0), None], "shape": (2, 3), 1: np.float32(0.5)}
>>> back = decode(encode(value))
>>> back["grads"][0], back["shape"], back[1].dtype, float(back[1])
(array([0., 1., 2.]), (2, 3), dtype('float32'), 0.5)
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np

__all__ = ["WireError", "encode", "decode", "MAX_BYTES"]

MAX_BYTES = 64 << 20  # the most a message may hold
_MAX_DEPTH = 64
_KINDS = "biufc"  # bool, signed and unsigned integers, floats, complex


class WireError(ValueError):
    """A value that cannot cross the boundary (or bytes that do not decode to one)."""


def _enc(x, depth: int):
    if depth > _MAX_DEPTH:
        raise WireError(f"nested deeper than {_MAX_DEPTH} levels")
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, np.generic):
        return int(x) if isinstance(x, int) else float(x)
    if isinstance(x, np.generic):
        return {"s": _array(np.asarray(x))}
    if isinstance(x, np.ndarray):
        return {"a": _array(x)}
    if isinstance(x, list):
        return [_enc(v, depth + 1) for v in x]
    if isinstance(x, tuple):
        return {"t": [_enc(v, depth + 1) for v in x]}
    if isinstance(x, dict):
        return {"d": [[_enc(k, depth + 1), _enc(v, depth + 1)] for k, v in x.items()]}
    if isinstance(x, (bytes, bytearray)):
        return {"b": base64.b64encode(bytes(x)).decode("ascii")}
    raise WireError(
        f"a {type(x).__name__} cannot be handed across the sandbox; return numbers, strings, "
        "lists, tuples, dicts or numpy arrays"
    )


def _array(a: np.ndarray) -> list:
    if a.dtype.kind not in _KINDS:
        raise WireError(f"arrays of dtype {a.dtype} cannot cross the sandbox (numbers only)")
    a = a if a.flags.c_contiguous else a.copy(order="C")
    return [a.dtype.str, list(a.shape), base64.b64encode(a.tobytes()).decode("ascii")]


def encode(value) -> bytes:
    """``value`` as UTF-8 JSON bytes (raises :class:`WireError` for unsupported types)."""
    data = json.dumps(_enc(value, 0), separators=(",", ":")).encode("utf-8")
    if len(data) > MAX_BYTES:
        raise WireError(f"the value takes {len(data)} bytes, more than {MAX_BYTES}")
    return data


def _unarray(spec) -> np.ndarray:
    if not (isinstance(spec, list) and len(spec) == 3):
        raise WireError("malformed array")
    dtype, shape, data = spec
    if not isinstance(dtype, str) or not isinstance(shape, list) or not isinstance(data, str):
        raise WireError("malformed array")
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise WireError(f"unknown dtype {dtype!r}") from e
    if dt.kind not in _KINDS or dt.hasobject or dt.fields is not None:
        raise WireError(f"dtype {dtype!r} is not a number type")
    if len(shape) > 32 or not all(isinstance(n, int) and 0 <= n for n in shape):
        raise WireError(f"bad shape {shape!r}")
    raw = base64.b64decode(data.encode("ascii"), validate=True)
    if len(raw) != math.prod(shape) * dt.itemsize:
        raise WireError("array data does not match its shape")
    return np.frombuffer(raw, dtype=dt).reshape(tuple(shape)).copy()


def _dec(x, depth: int):
    if depth > _MAX_DEPTH:
        raise WireError(f"nested deeper than {_MAX_DEPTH} levels")
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, list):
        return [_dec(v, depth + 1) for v in x]
    if isinstance(x, dict) and len(x) == 1:
        ((tag, body),) = x.items()
        if tag == "a":
            return _unarray(body)
        if tag == "s":
            return _unarray(body)[()]
        if tag == "t" and isinstance(body, list):
            return tuple(_dec(v, depth + 1) for v in body)
        if tag == "d" and isinstance(body, list):
            out = {}
            for pair in body:
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise WireError("malformed dict")
                key = _dec(pair[0], depth + 1)
                try:
                    out[key] = _dec(pair[1], depth + 1)
                except TypeError as e:  # an unhashable key
                    raise WireError(f"unusable dict key {key!r}") from e
            return out
        if tag == "b" and isinstance(body, str):
            return base64.b64decode(body.encode("ascii"), validate=True)
    raise WireError("unknown value on the wire")


def decode(data: bytes):
    """The value encoded in ``data`` (raises :class:`WireError` for anything malformed)."""
    if len(data) > MAX_BYTES:
        raise WireError(f"{len(data)} bytes is more than {MAX_BYTES}")
    try:
        return _dec(json.loads(data.decode("utf-8")), 0)
    except WireError:
        raise
    except (ValueError, TypeError, RecursionError, UnicodeDecodeError) as e:
        raise WireError(f"undecodable data ({type(e).__name__})") from None
