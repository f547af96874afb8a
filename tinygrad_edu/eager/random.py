r"""Random number generators with PyTorch's names: ``tg.Generator``, ``tg.manual_seed``,
``tg.seed``, ``tg.initial_seed``, ``tg.get_rng_state`` / ``tg.set_rng_state``.

Every random number in the library (``randn``, ``rand``, ``randint``, dropout, weight
initialisation, data shuffling) comes from one default generator, a numpy ``Generator``
(PCG64) on the CPU, so a seed gives the same numbers on every device. A
:class:`Generator` of your own gives an independent, reproducible stream
(``tg.randn(3, generator=g)``, ``DataLoader(..., generator=g)``).

The numbers differ from PyTorch's (its CPU generator is a Mersenne Twister): a seed
reproduces a run here, not PyTorch's run.

NOTE [RNG state as bytes]
    ``get_state()`` returns the generator's whole state as a uint8 tensor, as PyTorch's does
    (the numbers inside differ: PCG64's 128-bit state and increment, numpy's buffered 32-bit
    half, and the initial seed). ``set_state`` takes it back; a tensor of another length or
    dtype is refused, never half-applied.

>>> import tinygrad_edu as tg
>>> g = tg.Generator().manual_seed(2147483647)
>>> a = tg.randn(3, generator=g)
>>> state = g.get_state()
>>> b = tg.randn(3, generator=g)
>>> _ = g.set_state(state)
>>> bool((tg.randn(3, generator=g) == b).all())
True
"""

from __future__ import annotations

import numpy as _np

from .. import backend
from . import core

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
    "set_rng_state", "numpy_generator",
]  # fmt: skip

_DEFAULT_SEED = 0  # the library's seed at import (PyTorch's default generator uses 67280421310721)
_STATE_BYTES = 16 + 16 + 1 + 4 + 8  # state, increment, has_uint32, uinteger, initial seed


class Generator:
    """A random number generator (PyTorch's ``torch.Generator``), numpy's PCG64 underneath.

    Args:
        device: where its numbers are used; they are drawn on the CPU in any case (see the
            module docstring), so any device this machine knows is accepted.
    """

    def __init__(self, device="cpu") -> None:
        self.device = backend.device_name(backend.parse_device(device))
        self._rng = _np.random.default_rng(_DEFAULT_SEED)
        self._initial_seed = _DEFAULT_SEED

    def manual_seed(self, seed) -> Generator:
        """Restart the stream from ``seed`` (an int, any size); returns the generator."""
        seed = _as_seed(seed)
        self._rng.bit_generator.state = _np.random.PCG64(seed).state
        self._initial_seed = seed
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed chosen."""
        s = int(_np.random.SeedSequence().generate_state(1, _np.uint64)[0]) >> 1
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._initial_seed

    def get_state(self):
        """The whole state, as a uint8 tensor (see NOTE [RNG state as bytes])."""
        st = self._rng.bit_generator.state
        raw = (st["state"]["state"].to_bytes(16, "little")
               + st["state"]["inc"].to_bytes(16, "little")
               + bytes([st["has_uint32"]]) + int(st["uinteger"]).to_bytes(4, "little")
               + (self._initial_seed % 2**64).to_bytes(8, "little"))  # fmt: skip
        return core.Tensor(_np.frombuffer(raw, dtype=_np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state from :meth:`get_state`; returns the generator."""
        arr = getattr(new_state, "_data", new_state)
        dtype = getattr(arr, "dtype", None)
        if dtype != _np.uint8 or getattr(arr, "shape", None) != (_STATE_BYTES,):
            raise TypeError(
                f"set_state: expected the uint8 tensor of {_STATE_BYTES} bytes that get_state() "
                f"returns, got {type(new_state).__name__} with dtype {dtype} and shape "
                f"{getattr(arr, 'shape', None)}"
            )
        raw = bytes(_np.asarray(arr).tobytes())
        self._rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[:16], "little"),
                      "inc": int.from_bytes(raw[16:32], "little")},
            "has_uint32": raw[32], "uinteger": int.from_bytes(raw[33:37], "little"),
        }  # fmt: skip
        self._initial_seed = int.from_bytes(raw[37:45], "little")
        return self

    @property
    def rng(self) -> _np.random.Generator:
        """The numpy generator underneath: what the op library's random ops (``multinomial``,
        ``bernoulli``, ``normal_``, ``randperm`` ...) draw from when given ``generator=self``
        (``ops.random.generator_of`` reads it)."""
        return self._rng

    def __repr__(self) -> str:
        return f"<tinygrad_edu.Generator device={self.device} initial_seed={self._initial_seed}>"


def _as_seed(seed) -> int:
    if hasattr(seed, "item"):
        seed = seed.item()
    if isinstance(seed, bool) or not isinstance(seed, int | _np.integer):
        raise TypeError(f"manual_seed expected an int seed, got {type(seed).__name__} {seed!r}")
    return int(seed) % 2**64  # PyTorch takes negative seeds too, modulo 2**64


default_generator = Generator()


def numpy_generator(generator: Generator | None = None, op: str | None = None
                    ) -> _np.random.Generator:  # fmt: skip
    """The numpy generator behind ``generator`` (the default one when None): what code
    that draws numbers calls, e.g. ``numpy_generator(generator, "randn").standard_normal(shape)``
    (``op`` names the caller in the error for anything else)."""
    if generator is None:
        return default_generator._rng
    if isinstance(generator, Generator):
        return generator._rng
    kind, prefix = type(generator), f"{op}: " if op else ""
    raise TypeError(
        f"{prefix}generator= must be a tinygrad_edu.Generator (made by "
        f"tg.Generator().manual_seed(seed)), got {kind.__module__}.{kind.__qualname__} "
        f"{generator!r:.60}"
    )


def manual_seed(seed) -> None:
    """Seed the default generator (behind ``randn``, ``rand``, dropout, initialisation and
    shuffling). PyTorch's returns the generator; this returns None, so that a bare
    ``tg.manual_seed(0)`` at a prompt or at the end of a notebook cell prints nothing (use
    ``tg.default_generator`` for the object)."""
    default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the operating system; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's last seed."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state (a uint8 tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default generator's state from :func:`get_rng_state`."""
    default_generator.set_state(new_state)
