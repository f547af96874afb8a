"""``tg.compile(module)``: PyTorch's ``OptimizedModule``, a module whose ``forward`` is
compiled and that shares everything else (parameters, buffers, modes) with the original."""

from __future__ import annotations

from ..nn.module import Module

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """The compiled module: calls go through the compiled ``forward``; parameters, buffers,
    ``train()``/``eval()`` and attributes are the original module's (``_orig_mod``)."""

    def __init__(self, mod: Module, compiled):
        super().__init__()
        self._orig_mod = mod  # a submodule: parameters() and state_dict() reach it
        object.__setattr__(self, "_compiled", compiled)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._orig_mod, name)

    def explain(self):
        """See :meth:`CompiledCallable.explain`."""
        return self._compiled.explain()

    @property
    def programs(self):
        return self._compiled.programs

    def __repr__(self) -> str:
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"
