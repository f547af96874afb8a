"""Tools for instructors: numeric gradient checks (more to come: points, student editions)."""

from .eager_check import GradcheckError, gradcheck, gradgradcheck
from .gradcheck import (
    check_symbolic_gradgrad,
    check_symbolic_gradients,
    compare_gradients,
    numeric_gradient,
    random_projection,
    symbolic_gradcheck,
)

__all__ = [
    "numeric_gradient",
    "random_projection",
    "compare_gradients",
    "check_symbolic_gradients",
    "symbolic_gradcheck",
    "check_symbolic_gradgrad",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
]
