"""``torch.nn.modules.container``'s path: Sequential, ModuleList, ModuleDict ...,
the same classes as ``tg.nn``'s.

``from tinygrad_edu.nn.modules.container import Sequential`` works as PyTorch's import does;
the layers themselves live in :mod:`tinygrad_edu.nn`.
"""

from __future__ import annotations

from .. import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
