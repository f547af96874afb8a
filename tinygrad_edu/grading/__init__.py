"""Tools for instructors: gradient checks, points, student editions, a sandboxed autograder.

Layer 10 (``docs/concepts/layers.md``; ``tests/test_import_circles.py`` checks it), beside
``viz``: it may import the package (``tinygrad_edu``) and ``symbolic``; nothing in the library
imports it (``lessons`` does). The sandbox's child (``child.py``, ``wire.py``, ``seccomp.py``,
``kernel_state.py``) imports nothing of the package: it is copied next to a submission.

The package exports the numeric gradient checks that graded tests use. The rest lives in its
modules, one concept each: ``pytest_plugin`` (points per task, Gradescope's results.json,
the ``run``/``reference`` fixtures), ``probe`` and ``wire`` (probes return plain data),
``student`` and ``gitignore`` (student editions), ``gradescope`` (the autograder zip),
``autograder``, ``submission``, ``splice``, ``sandbox`` and ``child`` (grading a submission
without ever importing it), ``batch`` (a folder of submissions), ``tables`` (the instructor
guide's tables). See the instructor guide (``docs/instructors.md``).
"""

from .eager_check import GradcheckError, gradcheck, gradgradcheck
from .gradcheck import (
    check_symbolic_gradgrad,
    check_symbolic_gradients,
    compare_gradients,
    complex_step_gradient,
    numeric_gradient,
    random_projection,
    symbolic_gradcheck,
)

__all__ = [
    "numeric_gradient",
    "complex_step_gradient",
    "random_projection",
    "compare_gradients",
    "check_symbolic_gradients",
    "symbolic_gradcheck",
    "check_symbolic_gradgrad",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
]
