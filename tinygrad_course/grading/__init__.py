"""Tools for instructors: gradient checks, points, student editions, a sandboxed autograder.

Part of the course (``tinygrad_course``), built on the library: it may import the library
(``tinygrad_edu``); nothing in the library imports it (``lessons`` does). The sandbox's child
(``child.py``, ``wire.py``, ``seccomp.py``, ``kernel_state.py``) imports nothing of either
package: it is copied next to a submission.

The package re-exports the library's gradient checks that graded tests use
(:mod:`tinygrad_edu.finite_diff`, :func:`tinygrad_edu.autograd.gradcheck`,
:func:`tinygrad_edu.symbolic.gradcheck` under its course name ``check_symbolic_gradients``).
The pytest plugin is loaded only where grading happens: ``tinygrad-edu grade``, the
autograder's run script and this repository's pytest ``addopts`` (``pyproject.toml``) name it
with ``-p``; installing the package registers nothing with pytest. The rest lives in its
modules, one concept each: ``pytest_plugin`` (points per task, Gradescope's results.json,
the ``run``/``reference`` fixtures), ``probe`` and ``wire`` (probes return plain data),
``student`` and ``gitignore`` (student editions), ``gradescope`` (the autograder zip),
``autograder``, ``submission``, ``splice``, ``sandbox`` and ``child`` (grading a submission
without ever importing it), ``derived`` (whether a derivative rule is derived, judged from its
graph in the grader), ``batch`` (a folder of submissions), ``tables`` (the instructor
guide's tables). See the instructor guide (``docs/instructors.md``).
"""

from tinygrad_edu.autograd import GradcheckError, gradcheck, gradgradcheck
from tinygrad_edu.finite_diff import (
    compare_gradients,
    complex_step_gradient,
    numeric_gradient,
    random_projection,
)
from tinygrad_edu.symbolic import gradcheck as check_symbolic_gradients
from tinygrad_edu.symbolic import gradgradcheck as check_symbolic_gradgrad

symbolic_gradcheck = check_symbolic_gradients

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
