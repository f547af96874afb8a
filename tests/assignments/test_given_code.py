"""No given code solves a graded task: a submission made only of calls into the student
edition's own given code earns nothing, for every graded task.

For each stubbed function of the student edition, the submission's body delegates the whole
job to the closest function that the edition itself still contains, whatever its place: the
library's other ops and helpers (public or private), the lessons' references and fallbacks,
the course-compatibility modules (the lessons' recorded wrong answers, near misses that once
did some tasks, are no longer given: the edition ships none of their code). A body may adapt
arguments (an einsum equation for the shapes, an argument order, a first element) and pick
among given functions; it computes nothing itself: no arithmetic on the values, no loop of
its own.
"Does the job" means the given function computes the same function as the task (an einsum
that is a matrix product, a sum_to that is a sum, a recursive walk that is a topological
sort), not that some other rule fed crafted inputs coincides with it numerically (div's
derivative in its numerator, $1/b$, is log's derivative at $b$): that is a derivation of
the student's own. Where the graded rule is itself a call of given helpers (add's
``_to_shapes(F, (g, g), shapes)``), writing that call is the task, not a leak.
Graded the real way (the suites under the autograder's pytest plugin, ``--gradescope``), each
task must score 0.

What the suites allow: numpy and PyTorch are importable in a submission (the library itself
speaks PyTorch), so a submission that hands a graded derivative to ``torch.autograd`` or an
update to ``torch.optim`` would pass; that is copying another library, for the instructor's
review (see docs/instructors.md), not given code, and it is not tried here. A4.1 runs only
where CuPy sees a GPU (its tests are skipped elsewhere, and skipped tests score nothing).

Leaks this test found and that were fixed are listed in docs/instructors.md ("Given code").
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from tests.assignments.test_assignment_scores import (
    PLUGIN,
    ROOT,
    SUITES,
    _env,
    _instructor_repository,
)
from tinygrad_course.grading import tables
from tinygrad_course.grading.student import make_student_edition

pytestmark = pytest.mark.skipif(
    not _instructor_repository(),
    reason="the given-code check needs the instructor's repository (to make the edition)",
)

_OPS = "from tinygrad_edu.ops import get_op\n"
_VJP = "F, g, inputs, out, shapes, needs"

# (file, task) -> the bodies of that file's stubs of the task, in the file's order. Each body
# replaces the stub's ``raise NotImplementedError("<task>: write your solution here")`` line
# and is indented like it.
GIVEN_CODE_SUBMISSION = {
    # a topological order: nothing given (lesson 8's recorded wrong answer, a recursive walk
    # once right on any small graph, is not in the edition)
    ("tinygrad_edu/symbolic/graph.py", "A1.1"): [
        "pass\n"],
    # running the graph: the memory-planned executor (its first run once ran every node)
    ("tinygrad_edu/symbolic/executor.py", "A1.2"): [
        "from .memory import MemoryPlan\n"
        "self.memory_plan = MemoryPlan(self.order, self.nodes)\n"
        "return self._run_planned(xp, feed_dict, observer)\n"],
    # derivative rules: the nearest op's rule (add as sub, mul as an einsum, exp as expm1,
    # log as log1p, matmul as an einsum, sum as a sum_to, the cross entropy as log_softmax's)
    ("tinygrad_edu/ops/arithmetic.py", "A1.3"): [
        _OPS + f"return get_op('sub').vjp({_VJP})\n",
        _OPS + "s = 'abcdefgh'[:len(shapes[0])]\n"
        f"return get_op('einsum').vjp({_VJP}, equation=f'{{s}},{{s}}->{{s}}')\n"],
    ("tinygrad_edu/ops/unary.py", "A1.4"): [
        _OPS + f"return get_op('expm1').vjp({_VJP})\n",
        _OPS + f"return get_op('log1p').vjp({_VJP})\n"],
    ("tinygrad_edu/ops/linalg.py", "A1.5"): [
        _OPS + "eq = ('...ji' if trans_A else '...ij') + ',' + ('...kj' if trans_B else "
        "'...jk') + '->...ik'\n"
        f"return get_op('einsum').vjp({_VJP}, equation=eq)\n"],
    ("tinygrad_edu/ops/reductions.py", "A1.6"): [
        _OPS + f"return get_op('sum_to').vjp({_VJP})\n"],
    ("tinygrad_edu/ops/losses.py", "A1.7"): [
        _OPS + "gx = get_op('log_softmax').vjp(F, g, inputs[:1], out, shapes[:1], needs[:1])\n"
        "return (gx[0], None)\n"],
    # symbolic gradients: the course-compatibility module's gradients
    ("tinygrad_edu/symbolic/gradients.py", "A1.8"): [
        "from . import cse599w\n"
        "if getattr(cse599w.gradients, '_given_code_depth', 0):\n"
        "    raise NotImplementedError('A1.8: the given code recursed into itself')\n"
        "cse599w.gradients._given_code_depth = 1\n"
        "try:\n"
        "    return cse599w.gradients(ys[0], xs)\n"
        "finally:\n"
        "    cse599w.gradients._given_code_depth = 0\n"],
    # the engine: lesson 3's dependency counts, the custom-function node's release, the
    # node's own hook lists, the leaf accumulation helper
    ("tinygrad_edu/eager/engine.py", "A2.1"): [  # lesson 3's recorded wrong answer: not given
        "pass\n"],
    ("tinygrad_edu/eager/engine.py", "A2.2"): [  # nothing given runs a node: run none
        "pass\n"],
    ("tinygrad_edu/eager/engine_hooks.py", "A2.4"): [  # the given pre-hook loop after the stub
        "pass\n"],
    ("tinygrad_edu/eager/tensor.py", "A2.3"): [
        "from .node import accumulate_into\n"
        "return accumulate_into(self, g, create_graph)\n"],
    ("tinygrad_edu/eager/tensor.py", "A2.4"): [
        "return self._grad_accumulator().register_prehook(fn)\n"],
    ("tinygrad_edu/eager/node.py", "A2.5"): [
        "from .function import _node_classes\n"
        "for cls in _node_classes.values():\n"
        "    return cls.release(self)\n"],
    ("tinygrad_edu/eager/node.py", "A2.3"): [
        "from .node import accumulate_into\n"
        "return accumulate_into(self.variable, grads[0], create_graph)\n"],
    # training: addmm for the layer, the given reductions for the loss, nothing for the step
    # (lesson 6's recorded wrong answer, plain SGD, is not given), the optimizers' neighbours
    # for Adam's family
    ("tinygrad_edu/nn/functional.py", "A3.1"): [
        "from ..ops.matrix import addmm\n"
        "return addmm(bias, x, weight.t()) if bias is not None else x.matmul(weight.t())\n"],
    ("tinygrad_edu/nn/linear.py", "A3.1"): [
        "from .functional import linear\n"
        "return linear(x, self.weight, self.bias)\n"],
    ("tinygrad_edu/nn/functional.py", "A3.2"): [
        "return mse_loss(input, target, reduction='none').mean()\n"],
    ("tinygrad_edu/optim/sgd.py", "A3.3"): [
        "return p\n"],
    ("tinygrad_edu/optim/adam.py", "A3.4"): [
        "from .rmsprop import RMSprop\n"
        "group = {**group, 'alpha': group['betas'][1], 'momentum': 0, 'centered': False}\n"
        "return RMSprop._update(self, p, grad, state, group)\n"],
    ("tinygrad_edu/optim/adamax.py", "A3.4"): [
        "from .adam import Adam\n"
        "return Adam._update(self, p, grad, state, group)\n"],
    ("tinygrad_edu/optim/nadam.py", "A3.4"): [
        "from .adam import Adam\n"
        "return Adam._update(self, p, grad, state, group)\n"],
    ("tinygrad_edu/optim/radam.py", "A3.4"): [
        "from .adam import Adam\n"
        "return Adam._update(self, p, grad, state, group)\n"],
    # the GPU namespace: the given CuPy import
    ("tinygrad_edu/backend/__init__.py", "A4.1"): [
        "return _import_cupy()\n"],
    # strided views: the drawing's cells (each read cell once, sorted: a set, not the
    # window's elements in order) for both the cells and how far they reach
    ("tinygrad_edu/eager/anatomy.py", "A5.2"): [
        "from ..viz.anatomy import _cells as drawn\n"
        "return xp.asarray(drawn(size, stride, offset), dtype=xp.int64)\n"],
    ("tinygrad_edu/eager/anatomy.py", "A5.1"): [
        "from ..viz.anatomy import _cells as drawn\n"
        "return max(drawn(size, stride, offset), default=offset)\n"],
    # softmax's kernels: the library's softmax op, its forward and its derivative rule
    ("tinygrad_edu/symbolic/static/handwritten.py", "A6.1"): [
        "from ...ops import get_op\n"
        "out[...] = get_op('softmax').forward(np, x, axis=-1)\n"],
    ("tinygrad_edu/symbolic/static/handwritten.py", "A6.2"): [
        "from ...ops import RAW, get_op\n"
        "out[...] = get_op('softmax').vjp(RAW, g, (y,), y, None, None, axis=-1)[0]\n"],
}


# Tasks that the submission above still solves in part (none: each leak found was fixed).
KNOWN_LEAKS: set = set()


def _stub(task: str) -> re.Pattern:
    return re.compile(
        rf'^(?P<indent>[ \t]*)raise NotImplementedError\("{re.escape(task)}: write your '
        r'solution here"\)\n', re.M)  # fmt: skip


def write_submission(edition, submission: dict) -> None:
    """Put each body in place of its stub, in file order (every stub must be covered)."""
    for (rel, task), bodies in submission.items():
        path = edition / rel
        text = path.read_text(encoding="utf-8")
        found = _stub(task).findall(text)
        assert len(found) == len(bodies), f"{rel}: {len(found)} {task} stubs, {len(bodies)} bodies"
        for body in bodies:

            def indented(m, body=body):
                pad = m.group("indent")
                return "".join(pad + line if line.strip() else line
                               for line in body.splitlines(keepends=True))  # fmt: skip

            text = _stub(task).sub(indented, text, count=1)
        path.write_text(text, encoding="utf-8")


def test_the_submission_covers_every_stub_of_every_graded_task(student_edition,
                                                              assignment_tests):  # fmt: skip
    edition, _ = student_edition
    stubs = {}
    for path in sorted((edition / "tinygrad_edu").rglob("*.py")):
        if "lessons" in path.parts or "grading" in path.parts:
            continue
        rel = path.relative_to(edition).as_posix()
        for m in re.finditer(r'NotImplementedError\("(A\d\.\d+): write your solution here"\)',
                             path.read_text(encoding="utf-8")):  # fmt: skip
            stubs[(rel, m.group(1))] = stubs.get((rel, m.group(1)), 0) + 1
    assert stubs == {k: len(v) for k, v in GIVEN_CODE_SUBMISSION.items()}
    graded = {t["task"] for t in assignment_tests if t["points"] > 0}
    regions = set(tables.regions(ROOT))
    assert regions <= {task for _, task in GIVEN_CODE_SUBMISSION} <= graded


@pytest.mark.slow
def test_a_submission_of_given_code_earns_nothing(tmp_path):
    edition = tmp_path / "submission"
    make_student_edition(ROOT, edition)
    write_submission(edition, GIVEN_CODE_SUBMISSION)
    results = tmp_path / "results.json"
    cmd = [sys.executable, "-m", "pytest", *PLUGIN, "-p", "no:cacheprovider", "-q",
           "--gradescope", str(results), *SUITES]  # fmt: skip
    done = subprocess.run(cmd, cwd=edition, env=_env(edition), capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert results.is_file(), done.stdout[-3000:] + done.stderr[-2000:]
    tests = json.loads(results.read_text(encoding="utf-8"))["tests"]
    free = {"A1.0", "A2.0", "A3.0"}  # tests of given code: their points are the student's
    earned = [(t["name"], t["score"]) for t in tests
              if t["score"] > 0 and t["name"].split(" ", 1)[0] not in free]  # fmt: skip
    leaking = {name.split(" ", 1)[0] for name, _ in earned}
    assert leaking == KNOWN_LEAKS, f"given code earns points: {earned}"
    shutil.rmtree(edition, ignore_errors=True)


# -- the leaks fixed: each given function now asks the graded one --------------------------------
def _stubbed(task):
    def stub(*args, **kwargs):
        raise NotImplementedError(f"{task}: write your solution here")

    return stub


def test_lesson_8s_recursive_walk_takes_its_order_from_topo_sort(monkeypatch):
    from tinygrad_course.lessons import lesson08
    from tinygrad_edu import symbolic as S
    from tinygrad_edu.symbolic import graph

    y = (S.Variable("a") * S.Variable("b")).sum()
    assert lesson08._topo_recursive([y]) == graph.topo_sort([y])
    monkeypatch.setattr(graph, "topo_sort", _stubbed("A1.1"))
    with pytest.raises(NotImplementedError, match="A1.1"):
        lesson08._topo_recursive([y])


def test_lesson_3s_recursive_count_takes_its_counts_from_the_engine(monkeypatch):
    import tinygrad_edu as tg
    from tinygrad_course.lessons import lesson03
    from tinygrad_edu.eager import engine

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    root = (x * x + x).sum().grad_fn
    assert lesson03._count_recursive(root) == lesson03._engine_count(root)
    monkeypatch.setattr(engine, "_count_dependencies", _stubbed("A2.1"))
    with pytest.raises(NotImplementedError, match="A2.1"):
        lesson03._count_recursive(root)


def test_a_memory_planned_run_profiles_through_the_plain_run(monkeypatch):
    """The planned executor once ran every node itself on its first run, so a submission
    could set a plan and skip A1.2; its first run now is the plain run (A1.2's loop)."""
    import numpy as np

    from tinygrad_edu import symbolic as S
    from tinygrad_edu.symbolic.executor import Executor

    x = S.Variable("x", shape=(3,), dtype="float64")
    y = (S.exp(x) * x).sum()
    ex = Executor([y], plan_memory=True)
    feed = {x: np.array([0.5, 1.0, 2.0])}
    want = float((np.exp(feed[x]) * feed[x]).sum())
    assert float(ex.run(feed)[0]) == pytest.approx(want)  # profiled
    assert float(ex.run(feed)[0]) == pytest.approx(want)  # replayed from the plan
    fresh = Executor([y], plan_memory=True)
    plain = Executor.run_on_device

    def stub(self, feed_dict=None, observer=None):
        if self.memory_plan is None:
            raise NotImplementedError("A1.2: write your solution here")
        return plain(self, feed_dict, observer)

    monkeypatch.setattr(Executor, "run_on_device", stub)
    with pytest.raises(NotImplementedError, match="A1.2"):
        fresh.run(feed)


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ji,kj->ik", [(3, 2), (4, 3)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("ij,j->ij", [(2, 3), (3,)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,jk->ki", [(2, 3), (3, 4)]), ("ij,ij->", [(2, 3)] * 2),
])  # fmt: skip
def test_an_einsums_derivative_is_pytorchs_and_a_product_asks_the_product_rule(
        monkeypatch, equation, shapes):  # fmt: skip
    """An einsum that is a product or a matrix product takes the mul/matmul rule (it once
    held a second copy of both, which solved A1.3 and A1.5 for a submission)."""
    import numpy as np
    import torch

    from tinygrad_edu.ops import RAW, get_op
    from tinygrad_edu.ops.matrix import _as_product, parse_einsum

    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s) for s in shapes]
    ts = [torch.tensor(x, requires_grad=True) for x in xs]
    y = torch.einsum(equation, *ts)
    g = rng.standard_normal(tuple(y.shape))
    want = torch.autograd.grad(y, ts, torch.tensor(g))
    op = get_op("einsum")
    got = op.vjp(RAW, g, xs, None, shapes, (True, True), equation=equation)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-12, atol=1e-12)
    product = _as_product(*parse_einsum(equation, shapes))
    if product is not None:
        monkeypatch.setattr(type(get_op(product[0])), "vjp", _stubbed("A1.x"))
        with pytest.raises(NotImplementedError):
            op.vjp(RAW, g, xs, None, shapes, (True, True), equation=equation)
    else:
        assert equation in ("ij,jk->ki", "ij,ij->")


@pytest.mark.parametrize("xshape, target", [((2, 3), (3,)), ((2, 3), (1, 3)), ((4, 2, 3), (2, 1)),
                                            ((2, 3), ())])  # fmt: skip
def test_sum_tos_derivative_asks_the_sum_rule(monkeypatch, xshape, target):
    """sum_to's derivative once broadcast g back itself (the sum rule again, which gave a
    submission 3 of A1.6's points); it now asks the sum rule, and its values are PyTorch's."""
    import numpy as np
    import torch

    from tinygrad_edu.ops import RAW, get_op

    x = np.random.default_rng(1).standard_normal(xshape)
    t = torch.tensor(x, requires_grad=True)
    y = t.sum_to_size(target) if target else t.sum()
    g = np.random.default_rng(2).standard_normal(tuple(y.shape))
    (want,) = torch.autograd.grad(y, t, torch.tensor(g))
    op = get_op("sum_to")
    (got,) = op.vjp(RAW, g, (x,), None, (xshape,), (True,), shape=target)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12)
    monkeypatch.setattr(type(get_op("sum")), "vjp", _stubbed("A1.6"))
    with pytest.raises(NotImplementedError, match="A1.6"):
        op.vjp(RAW, g, (x,), None, (xshape,), (True,), shape=target)
