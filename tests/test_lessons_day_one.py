"""The lesson exercises that answer on a student edition's first day although their checks need
the symbolic engine (A1) or the eager engine (A2): the values of the learner's graph computed as
it is built (``lessons.as_built``), graphs recorded when the edition was made, and the learner's
hook called on its own.

Day one is simulated here in the full library: the graded functions the checks reach are
replaced by stubs that raise as the edition's do (``A1.1: write your solution here``), and the
recorded values are those the full library computes (as ``make-student`` records them). The
edition itself is checked by ``test_lesson_states.py::test_exercises_answer_on_day_one``.
"""

import ast
import json
from pathlib import Path

import numpy as np
import pytest

from tinygrad_course import lessons
from tinygrad_course.lessons import as_built, exercise, lesson02, lesson04
from tinygrad_course.lessons.exercise import reference_solution
from tinygrad_course.lessons.notebooks import lesson_notebooks

ROOT = Path(__file__).resolve().parents[1]
# the exercises whose checks answer on day one through what this file tests
ANSWERED = ("2.1", "2.2", "4.1", "5.1", "6.2", "8.3", "9.2", "9.3", "15.2")


def _a11(*args, **kwargs):
    raise NotImplementedError("A1.1: write your solution here")


def _a18(*args, **kwargs):
    raise NotImplementedError("A1.8: write your solution here")


def _a21(*args, **kwargs):
    raise NotImplementedError("A2.1: write your solution here")


def _a24(*args, **kwargs):
    raise NotImplementedError("A2.4: write your solution here")


@pytest.fixture(autouse=True)
def _fresh():
    lessons.reset()
    lessons.set_strict(False)
    yield
    lessons.reset()
    lessons.set_strict(None)


_RECORDED: dict = {}


def _recorded() -> dict:
    """The expected values of the exercises tested here, as ``make-student`` records them."""
    if not _RECORDED:
        exercises = [ex for m in lessons.lesson_modules() for ex in m.EXERCISES
                     if ex.number in ANSWERED and ex.expected is not None]  # fmt: skip
        _RECORDED.update(json.loads(json.dumps({ex.number: ex.expected() for ex in exercises})))
    return _RECORDED


@pytest.fixture
def day_one(monkeypatch):
    """The library with the stubs of A1.1, A1.8, A2.1 and A2.4 (the graded functions these
    checks reach), and the exercises' expected values recorded before (as an edition's)."""
    import tinygrad_edu as tg
    from tinygrad_edu.eager import engine
    from tinygrad_edu.symbolic import gradients, graph

    recorded = _recorded()
    monkeypatch.setattr(exercise, "recorded_expected", lambda: recorded)
    # what each recorded wrong answer gives is kept once known: on day one it stops at
    # another step than in the full library, so neither state may see the other's
    every = [ex for m in lessons.lesson_modules() for ex in m.EXERCISES]
    for ex in every:
        monkeypatch.setattr(ex, "_mistakes", {})
    for function, stub in (
        (graph.topo_sort, _a11),
        (gradients, _a18),
        (engine._count_dependencies, _a21),
        (tg.Tensor.register_hook, _a24),
    ):
        monkeypatch.setattr(function, "__code__", stub.__code__)
    return recorded


def _answers(number):
    """The exercise and its right answer: the solution cell of the instructor's lesson, run
    after the lesson's imports and its earlier solution cells."""
    lesson = int(number.split(".")[0])
    module = lessons.lesson_modules()[lesson]
    sources = [
        p.read_text(encoding="utf-8")  # the lesson's notebook, or each of its parts
        for p in lesson_notebooks(ROOT / "notebooks", lesson, ".py")
    ]
    names = {"ex": module}
    for node in (node for source in sources for node in ast.parse(source).body):
        if isinstance(node, ast.Import | ast.ImportFrom):
            exec(compile(ast.Module([node], []), "<imports>", "exec"), names)
    for ex in module.EXERCISES:
        attr = next(k for k, v in vars(module).items() if v is ex)
        text, _ = reference_solution(ex, root=ROOT)
        exec(text, names)
        if ex.number == number:
            return ex, names[attr]
    raise KeyError(number)


@pytest.mark.parametrize("number", ANSWERED)
def test_the_check_answers_on_day_one(day_one, number):
    """A right answer passes, and says what is checked only once the assignment is written;
    every recorded wrong answer that runs is rejected with its own hint (one that calls the
    unwritten assignment itself waits for it, as the edition's does)."""
    ex, answer = _answers(number)
    result = ex.check(answer)
    assert result.status == lessons.PASS, result.message
    if number != "2.2":  # 2.2 compares a number with the recorded one: nothing is left
        assert "checked once" in result.message or number in ("8.3", "9.3"), result.message
    for wrong in ex.wrong:
        lessons.reset()
        got = ex.check(wrong.answer)
        if got.status == lessons.UNSOLVED:
            assert "needs assignment A1.1" in got.message, (wrong.what, got.message)
            continue
        assert got.status == lessons.FAIL and got.hint == wrong.hint, (wrong.what, got.message)


def test_a_check_stays_on_the_full_path_where_the_engine_is_written():
    """In the instructor's library the checks run the Executor and the gradients as before."""
    for number, full in (
        ("2.1", "its gradient graph matches"),
        ("4.1", "central differences"),
        ("6.2", "after 5 steps"),
        ("15.2", "compiles with fullgraph=True"),
    ):
        ex, answer = _answers(number)
        result = ex.check(answer)
        assert result.passed and full in result.message and "checked once" not in \
            result.message, (number, result.message)  # fmt: skip


def _graphs():
    """(feeds, build) of graphs the lessons build: 2.1's and 4.1's answers, 6.2's update of a
    float32 parameter, and one with a matmul, a softmax cross-entropy, float32 and float64."""
    from tinygrad_edu import symbolic as S
    from tinygrad_edu.symbolic import training as st

    rng = np.random.default_rng(7)
    a, b = S.Variable("a"), S.Variable("b")
    yield {a: rng.normal(size=3), b: rng.normal(size=3)}, lambda: [lesson02._loss()(a, b)]
    x, w = S.Variable("x"), S.Variable("w")
    yield ({x: rng.normal(size=3), w: rng.normal(size=3)},
           lambda: [((x * w).tanh() * x + w**2).sum(), (x * w).tanh()])  # fmt: skip
    sc = st.Scope()
    p, g = sc.parameter("W", rng.normal(size=(3, 4)).astype(np.float32)), S.Variable("dW")
    yield ({p: sc["W"], g: rng.normal(size=(3, 4)).astype(np.float32)},
           lambda: [u.value for u in st.SGD(lr=0.1)._rule(p, g)] + [p - 0.1 * g])  # fmt: skip
    X, W = S.Variable("X", dtype="float32"), S.Variable("W", dtype="float64")
    y = S.Variable("y")
    yield ({X: rng.normal(size=(5, 4)), W: rng.normal(size=(3, 4)),
            y: np.eye(3)[[0, 1, 2, 1, 0]]},
           lambda: [S.softmax_cross_entropy(S.matmul(X, W, trans_B=True) * 0.5 + 1, y),
                    S.reduce_sum(S.exp(X), axis=1) / 3, X @ W.T])  # fmt: skip


def test_values_as_built_are_the_executors_bit_for_bit():
    from tinygrad_edu import symbolic as S

    for feeds, build in _graphs():
        with as_built.as_built(feeds) as built:
            outputs = build()
        want = S.Executor(outputs).run(feeds)
        for node, value in zip(outputs, want, strict=True):
            got = built.value(node)
            assert got is not None and got.dtype == value.dtype and got.shape == value.shape
            assert np.array_equal(got, value), node.name
        assert len(built.nodes) > len(outputs)


def test_a_node_it_cannot_vouch_for_has_no_value():
    """A node built before the block, one reading it, an unfed Variable's consumers, and every
    node once any node made (or a Variable fed) is changed afterwards: no value."""
    from tinygrad_edu import symbolic as S

    a, outside = S.Variable("a"), S.constant(2.0)
    with as_built.as_built({a: np.array([1.0, 2.0])}) as built:
        inside = a * 3.0
        mixed = a * outside
        unfed = S.Variable("u") + a
        later = inside.exp()
    assert np.array_equal(built.value(inside), [3.0, 6.0])
    assert built.value(mixed) is None and built.value(unfed) is None
    assert built.value(outside) is None
    inside.inputs = (a, S.constant(4.0))  # rewired: `later` would hold a stale value
    assert built.value(later) is None and built.value(inside) is None
    with as_built.as_built({a: np.array([1.0])}) as built:
        total = (a + 1) * 2
    total.inputs[0].const_attr = 5  # the constant input replaced: x + 5
    assert built.value(total) is None
    with as_built.as_built({a: np.array([1.0])}) as built:
        total = a * 2
    a.op = total.op  # a fed Variable changed
    assert built.value(total) is None


def _rewired_loss(a, b):
    """A wrong answer made right-looking: the graph's values were computed for the right q,
    then an input reassigned makes it log(e^(ab)) + a² (the 1 gone)."""
    inner = (a * b).exp()
    one_plus = 1 + inner
    term = one_plus.log()
    q = (term + a * a).sum()
    term.inputs = (inner,)
    return q


def _outside_loss():
    from tinygrad_edu import symbolic as S

    one = S.constant(1.0)  # made before the check: its value is not the check's to vouch for

    def loss(a, b):
        return S.reduce_sum((one + (a * b).exp()).log() + a * a)

    return loss


def test_a_graph_it_cannot_vouch_for_falls_back_to_the_engine(day_one):
    """On day one a rewired graph or a node built outside the check is never passed: the check
    falls back to the Executor, which names the assignment it needs."""
    for answer in (_rewired_loss, _outside_loss()):
        result = lesson02.build_loss.check(answer)
        assert result.status == lessons.UNSOLVED and "needs assignment A1.1" in result.message
    result = lesson04.model.check(lambda x, w: ((x * w).tanh() * x + w**2).sum())
    assert result.passed and "in both engines" in result.message


def test_the_rewired_graph_fails_where_the_engine_is_written():
    """The same rewired answer in the full library: the Executor computes the graph as it is."""
    result = lesson02.build_loss.check(_rewired_loss)
    assert result.status == lessons.FAIL
    assert result.hint == lesson02.build_loss.wrong[1].hint  # log(e^(ab)): the 1 is missing


def test_a_recorded_graph_is_rebuilt_with_its_edges():
    from tinygrad_edu import symbolic as S

    x, w = S.Variable("x"), S.Variable("w")
    z = S.reduce_sum(x * w + S.exp(x))
    outputs = [z, z * 2.0]
    order = S.topo_sort(outputs)
    for keep in (True, False):
        data = json.loads(json.dumps(as_built.graph_data(order, outputs, order=keep)))
        nodes, outs = as_built.rebuilt(data)
        assert len(nodes) == len(order) and len(outs) == 2
        shape = {n.name: (n.op.name, sorted(i.name for i in n.inputs)) for n in order}
        assert {n.name: (n.op.name, sorted(i.name for i in n.inputs)) for n in nodes} == shape
        assert [o.name for o in outs] == [o.name for o in outputs]
    assert [n[0] for n in data["nodes"]] == sorted(n.name for n in order)


def _rewiring_rule(node):
    """A rule that changes the graph it is given (a pass must not)."""
    if node.op.name == "mul" and len(node.inputs) == 2:
        node.inputs = node.inputs[::-1]
    return None


def test_a_rule_that_changes_the_graph_is_caught():
    from tinygrad_course.lessons import lesson09

    result = lesson09.mul_by_one.check(_rewiring_rule)
    assert result.status == lessons.FAIL and result.message == "the original graph changed"


def test_a_rule_that_changes_the_graph_is_caught_on_day_one(day_one):
    from tinygrad_course.lessons import lesson09

    result = lesson09.mul_by_one.check(_rewiring_rule)
    assert result.status == lessons.FAIL and result.message == "the original graph changed"
