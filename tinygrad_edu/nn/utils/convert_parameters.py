"""All parameters as one flat vector, and back (PyTorch's ``parameters_to_vector`` and
``vector_to_parameters``).

>>> import tinygrad_edu as tg
>>> lin = tg.nn.Linear(2, 1)
>>> v = tg.nn.utils.parameters_to_vector(lin.parameters())
>>> v.shape
(3,)
>>> tg.nn.utils.vector_to_parameters(tg.zeros(3), lin.parameters())
>>> lin.weight.tolist(), lin.bias.tolist()
([[0.0, 0.0]], [0.0])
"""

from __future__ import annotations

from ...eager.dispatch import FUNCTIONS
from ...eager.grad_mode import no_grad
from ...eager.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _one_device(params: list[Tensor]) -> None:
    if len({p._device for p in params}) > 1:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")  # fmt: skip


def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened and concatenated, in order (differentiable)."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    _one_device(params)
    return FUNCTIONS["cat"]([p.reshape(-1) for p in params], 0)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Make each parameter a view of its consecutive piece of ``vec``, in order.

    As in PyTorch (``param.data = vec[i:i + n].view_as(param).data``), no values are copied:
    each parameter's ``.data`` becomes a piece of ``vec``'s memory, so a later in-place
    change of ``vec`` shows in the parameters (and an in-place change of a parameter shows in
    ``vec``); the parameters take ``vec``'s dtype. A ``state_dict()`` taken before still holds
    the old memory."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    _one_device(params)
    need = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.shape[0] != need:
        raise RuntimeError(f"vector_to_parameters: the vector has shape {vec.shape} but the "
                           f"parameters hold {need} numbers; give a 1-D tensor of {need}")
    flat = vec._data
    start = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.data = Tensor._make(flat[start:start + n].reshape(p.shape), device=vec._device)
            start += n
