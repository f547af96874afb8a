"""Tests for tinygrad_course.lessons (the checks and exercises the lessons use) and for the lesson
sources themselves: each lesson is a jupytext percent-format ``.py`` file (the source of truth)
paired with its executed ``.ipynb``."""

import doctest
import importlib
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_course import lessons
from tinygrad_course.grading.student import solution_regions
from tinygrad_course.lessons import check, check_gradient, check_true, lint_notebook
from tinygrad_course.lessons.exercise import Exercise, Verdict
from tinygrad_course.lessons.notebooks import lesson_notebooks, lesson_number

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = sorted(p.stem for p in NOTEBOOKS.glob("[0-9]*.ipynb"))
EXERCISES = [(m.__name__.rsplit(".", 1)[1], ex) for m in lessons.lesson_modules()
             for ex in m.EXERCISES]  # fmt: skip
WRONG = [pytest.param(ex, w, id=f"{ex.number}-{w.what}") for _, ex in EXERCISES for w in ex.wrong]


@pytest.fixture(autouse=True)
def _fresh():
    lessons.reset()
    lessons.set_strict(None)
    yield
    lessons.reset()
    lessons.set_strict(None)


@pytest.mark.parametrize(
    "module",
    ["checks", "exercise", "notebooks", "as_built", "lesson00", "lesson03", "lesson13", "lesson16",
     "lesson17"],
)
def test_doctests(module):
    mod = importlib.import_module(f"tinygrad_course.lessons.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


# -- checks -----------------------------------------------------------------------------------
def test_check_says_pass_and_fail_in_words(capsys):
    assert check("sum", np.array([1.0, 2.0]) + 1, [2.0, 3.0], strict=False)
    out = capsys.readouterr().out
    assert out.startswith("✅ PASS  sum:") and "[2. 3.]" in out
    assert not check("sum", np.array([1.0, 2.5]), [1.0, 2.0], strict=False, hint="look at b")
    out = capsys.readouterr().out
    assert out.startswith("❌ FAIL  sum: expected [1. 2.], got [1.  2.5]")
    assert "max abs error 0.5" in out and "worst at index (1,)" in out
    assert "Hint: look at b" in out


def test_check_tolerance_is_applied():
    assert check("close", 1.0 + 1e-8, 1.0, strict=False)
    assert not check("far", 1.0 + 1e-3, 1.0, strict=False)
    assert check("far but loose", 1.0 + 1e-3, 1.0, atol=1e-2, strict=False)
    assert check("relative", 1000.1, 1000.0, atol=0, rtol=1e-3, strict=False)


def test_check_shape_mismatch_names_both_shapes(capsys):
    assert not check("shape", np.zeros((2, 3)), np.zeros((3, 2)), strict=False)
    assert "expected shape (3, 2), got shape (2, 3)" in capsys.readouterr().out


def test_check_none_nan_integers_and_non_numbers(capsys):
    assert not check("forgot return", None, 1.0, strict=False)
    assert "got None" in capsys.readouterr().out
    assert not check("nan", np.array([np.nan, 1.0]), [0.0, 1.0], strict=False)
    assert "NaN" in capsys.readouterr().out
    assert not check("count", 2, 3, strict=False)
    assert "expected 3, got 2\n" in capsys.readouterr().out  # integers: exact, no tolerance
    assert check("names", ("a", "b"), ("a", "b"), strict=False)
    assert not check("names", ("a", "c"), ("a", "b"), strict=False)
    assert "expected ('a', 'b'), got ('a', 'c')" in capsys.readouterr().out


def test_check_accepts_tensors():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert check("grad", x.grad, 2 * np.array([1.0, 2.0]), strict=False)
    assert not check("grad", x.grad, [1.0, 2.0], strict=False)


def test_strict_modes(monkeypatch):
    with pytest.raises(AssertionError, match="❌ FAIL  wrong: expected 2, got 1"):
        check("wrong", 1.0, 2.0, strict=True)
    assert check("right", 2.0, 2.0, strict=True)
    # under pytest, strict is the default (a notebook run by nbmake inherits the variable)
    assert lessons.is_strict()
    monkeypatch.setenv("TINYGRAD_EDU_STRICT", "0")
    assert not lessons.is_strict()
    assert not check("wrong", 1.0, 2.0)
    lessons.set_strict(True)
    assert lessons.is_strict()
    with lessons.strict(False):
        assert not lessons.is_strict()
    assert lessons.is_strict()
    monkeypatch.delenv("TINYGRAD_EDU_STRICT")
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    lessons.set_strict(None)
    assert not lessons.is_strict()
    monkeypatch.setenv("TINYGRAD_EDU_STRICT", "1")
    assert lessons.is_strict()


def test_tally_counts_each_check_once(capsys):
    check("a", 1.0, 1.0, strict=False)
    check("b", 1.0, 2.0, strict=False)
    check_true("c", True, strict=False)
    assert lessons.results() == [("a", True), ("b", False), ("c", True)]
    capsys.readouterr()
    assert lessons.summary() == "2 of 3 checks passed; still to do: b (failed)"
    assert "2 of 3" in capsys.readouterr().out
    check("b", 2.0, 2.0, strict=False)  # fixed and run again: replaces, does not add
    check("b", 2.0, 2.0, strict=False)
    assert lessons.results() == [("a", True), ("b", True), ("c", True)]
    assert lessons.summary() == "3 of 3 checks passed: all done"


def test_summary_lists_exercises_not_run_yet():
    from tinygrad_course.lessons import lesson01

    lesson01.central_difference.check(lambda f, x, eps=1e-6: (f(x + eps) - f(x - eps)) / 2 / eps,
                                      strict=False)  # fmt: skip
    line = lessons.summary(lesson01)
    assert line.startswith("1 of 3 checks passed; still to do: Exercise 1.2")
    assert "Exercise 1.3 — one neuron, by hand (not run yet)" in line


def test_check_true_hint(capsys):
    assert not check_true("positive", -1 > 0, hint="look at the sign", strict=False)
    assert "❌ FAIL  positive: no\n   Hint: look at the sign" in capsys.readouterr().out


def test_results_show_as_coloured_boxes_in_a_notebook(monkeypatch):
    shown = []
    monkeypatch.setattr(lessons.checks, "_in_notebook", lambda: True)
    monkeypatch.setattr("IPython.display.display", lambda data, raw: shown.append(data))
    check("fine", 1.0, 1.0, strict=False)
    check("wrong", 1.0, 2.0, hint="hm", strict=False)
    lessons.notice("a notice")
    (ok, bad, note) = shown
    assert ok["text/plain"].startswith("✅ PASS") and "<b>PASS</b>" in ok["text/html"]
    assert "#15803d" in ok["text/html"]  # green border
    assert "<b>FAIL</b>" in bad["text/html"] and "#b91c1c" in bad["text/html"]  # red
    assert "<b>Hint:</b> hm" in bad["text/html"]
    assert "<b>NOTICE</b>" in note["text/html"]


def test_numeric_gradient_matches_known_derivatives():
    x = np.array([0.3, -1.2, 2.0])
    (g,) = lessons.numeric_gradient(lambda v: float(np.sin(v).sum()), [x])
    np.testing.assert_allclose(g, np.cos(x), atol=1e-8)
    a, b = np.array([[1.0, 2.0]]), np.array([[3.0], [4.0]])
    ga, gb = lessons.numeric_gradient(lambda p, q: float((p @ q).sum()), [a, b])
    np.testing.assert_allclose(ga, b.T, atol=1e-8)
    np.testing.assert_allclose(gb, a.T, atol=1e-8)
    assert x.tolist() == [0.3, -1.2, 2.0]  # the point is not modified


def test_check_gradient_eager_right_and_wrong(capsys):
    a, b = np.random.default_rng(1).normal(size=(2, 3)), np.random.default_rng(2).normal(size=3)
    assert check_gradient(lambda x, y: ((x * y).tanh() @ y).exp(), [a, b], strict=False)

    class WrongSquare(tg.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # missing the factor 2

    capsys.readouterr()
    assert not check_gradient(WrongSquare.apply, [[1.0, 2.0]], name="square", strict=False)
    out = capsys.readouterr().out
    assert out.startswith("❌ FAIL  gradient of square: input 0 at index (")
    # the worst element's values: analytic p*x, numeric 2*p*x for the projection weight p
    analytic, numeric = (float(out.split(k)[1].split()[0].strip(",")) for k in
                         ("analytic ", "numeric "))  # fmt: skip
    assert numeric == pytest.approx(2 * analytic, rel=1e-6)


def test_check_gradient_with_hand_gradients(capsys):
    x = np.array([0.5, 1.5])
    assert check_gradient(lambda v: np.sin(v) * v, [x], grads=[np.cos(x) * x + np.sin(x)],
                          name="x sin x", strict=False)  # fmt: skip
    assert not check_gradient(lambda v: np.sin(v) * v, [x], grads=[np.cos(x)], strict=False)
    assert not check_gradient(lambda v: v, [x], grads=[], strict=False)
    assert "expected 1 gradients" in capsys.readouterr().out
    assert not check_gradient(lambda v: v.sum(), [x], grads=[np.ones(3)], strict=False)
    assert "has shape (3,)" in capsys.readouterr().out


def test_check_gradient_rejects_numpy_escape(capsys):
    escape = lambda v: tg.tensor(np.sin(v.detach().numpy()))  # noqa: E731
    assert not check_gradient(escape, [[1.0]], strict=False)
    assert "no grad_fn" in capsys.readouterr().out
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):  # as in PyTorch
        check_gradient(lambda v: tg.tensor(np.sin(v.numpy())), [[1.0]], strict=False)


# -- exercises --------------------------------------------------------------------------------
def test_every_exercise_records_at_least_two_wrong_answers():
    assert len(EXERCISES) >= 20
    numbers = [ex.number for _, ex in EXERCISES]
    assert len(set(numbers)) == len(numbers)
    for _, ex in EXERCISES:
        assert len(ex.wrong) >= 2, f"{ex.name} records fewer than two wrong answers"


def _solution_fragments(number: str) -> set[str]:
    """Each code line of the lesson's solutions, as a hint could quote it: whitespace
    collapsed, without a leading ``return`` or a trailing ``:`` (``st.Update(p, p - lr * g)``
    is the line ``return [st.Update(p, p - lr * g)]`` of 6.2's solution)."""
    lesson = int(number.split(".")[0])
    fragments = set()
    for path in lesson_notebooks(NOTEBOOKS, lesson, ".py"):  # one, or each part of the lesson
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for begin, end, _ in solution_regions(text, path.name):
            for line in lines[begin : end - 1]:
                line = re.sub(r"\s+", " ", line).strip().rstrip(":")
                line = re.sub(r"^return ", "", line).strip("[]() ")
                if len(line) >= 12 and not line.startswith("#"):
                    fragments.add(line)
    return fragments


_TOKEN = re.compile(r"\d+(?:\.\d+)?|\w+|\*\*|//|[-+*/@%<>]=?|==|[=()\[\],.:]")
_OPERATORS = {"+", "-", "*", "/", "**", "//", "@", "%", "<", "<=", ">", ">=", "=="}
_MATH = {"·": " * ", "×": " * ", "²": " ** 2", "−": "-", "⊙": " * "}


def _tokens(text: str) -> list[str]:
    """Code-like tokens of a text, math spelled as Python (``a·b²`` is ``a * b ** 2``)."""
    for sign, spelled in _MATH.items():
        text = text.replace(sign, spelled)
    return _TOKEN.findall(text)


def _solution_grams(number: str, n: int = 5) -> set[tuple[str, ...]]:
    """Every run of ``n`` tokens with two operators or more in the lesson's reference code:
    its notebook's solution cells and its module's ``_reference_*`` functions. A hint that
    holds one of them spells out part of the solution (4.1's hint once gave
    ``sum(tanh(x * w) * x + w ** 2)``, the whole answer in another spelling)."""
    import inspect

    lesson = int(number.split(".")[0])
    code = []
    for path in lesson_notebooks(NOTEBOOKS, lesson, ".py"):  # one, or each part of the lesson
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        code += [line for begin, end, _ in solution_regions(text, path.name)
                 for line in lines[begin : end - 1]
                 if not line.strip().startswith("#")]  # fmt: skip
    module = importlib.import_module(f"tinygrad_course.lessons.lesson{lesson:02d}")
    for name, value in vars(module).items():
        if name.startswith("_reference") and callable(value):
            body = inspect.getsource(value).split('"""')[-1]  # the code, not the docstring
            code.extend(body.splitlines())
    grams = set()
    for line in code:
        tokens = _tokens(line)
        for i in range(len(tokens) - n + 1):
            gram = tuple(tokens[i : i + n])
            if sum(t in _OPERATORS for t in gram) >= 2:
                grams.add(gram)
    return grams


def _quoted_solution(text: str, grams: set) -> list[str]:
    tokens = _tokens(text)
    n = len(next(iter(grams))) if grams else 0
    return [" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)
            if tuple(tokens[i : i + n]) in grams]  # fmt: skip


def _again(answer):
    """The same answer as another function object: the check must recognise the mistake by
    what the answer does, not by which function it is."""
    if not callable(answer):
        return answer

    def again(*args, **kwargs):
        return answer(*args, **kwargs)

    return again


@pytest.mark.parametrize(("ex", "wrong"), WRONG)
def test_a_wrong_answer_fails_with_its_hint(ex, wrong, capsys):
    result = ex.check(_again(wrong.answer), strict=False)
    assert result.status == lessons.FAIL, f"{ex.name} accepted: {wrong.what}"
    assert result.hint == wrong.hint, f"{wrong.what}: the hint was {result.hint!r}"
    out = capsys.readouterr().out
    assert out.startswith(f"❌ FAIL  {ex.name}") and "Traceback" not in out
    assert f"Hint: {result.hint}" in out
    # a hint names the mistake; it never hands over a line of the solution
    hint = re.sub(r"\s+", " ", result.hint)
    given = [f for f in _solution_fragments(ex.number) if f in hint]
    assert not given, f"{ex.name}: the hint quotes the solution: {given}"
    assert not _quoted_solution(hint, _solution_grams(ex.number)), hint


# how the description of an unrecognised wrong value begins (describe_difference)
_GENERIC = ("every entry is", "every entry has", "your value is", "your value has",
            "your function returned nothing")


@pytest.mark.parametrize(("lesson", "ex"), EXERCISES, ids=[ex.number for _, ex in EXERCISES])
def test_every_mistake_has_its_own_hint(lesson, ex):
    """Each recorded wrong answer carries the diagnosis of its own mistake: two that the
    check tells apart (a different step or value) never share a hint, and no hint is the
    description any wrong value gets."""
    from tinygrad_course.lessons.exercise import describe_difference

    outcomes = [ex._evaluate(w.answer) for w in ex.wrong]
    for i, (first, a) in enumerate(zip(ex.wrong, outcomes, strict=True)):
        assert first.hint and len(first.hint) >= 20, (first.what, first.hint)
        generic = {describe_difference(a.got, v) for v in (0.0, 1.0)} if a.got is not None \
            else set()  # fmt: skip
        assert first.hint not in generic and not first.hint.startswith(_GENERIC), first.what
        assert not re.match(r"\d+ of \d+ entr", first.hint), first.what
        for second, b in zip(ex.wrong[i + 1 :], outcomes[i + 1 :], strict=True):
            if not a.same_mistake(b):
                assert first.hint != second.hint, (first.what, second.what)


@pytest.mark.parametrize("module", lessons.LESSONS)
def test_no_text_a_check_can_show_quotes_the_solution(module):
    """Every text in a lesson's exercise module that a check can show (hints, closer looks,
    messages; not docstrings nor the names of the recorded mistakes) holds no run of the
    reference solution's code, in any spelling of its operators."""
    import ast
    import inspect

    mod = importlib.import_module(f"tinygrad_course.lessons.{module}")
    if not mod.EXERCISES:
        return
    tree = ast.parse(inspect.getsource(mod))
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant):  # fmt: skip
            skip.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Wrong":
            skip.add(id(node.args[0]))  # the mistake's name, for tests
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_reference"):
            skip.update(id(n) for n in ast.walk(node))
    texts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
             and isinstance(n.value, str) and id(n) not in skip]  # fmt: skip
    texts += [" ".join(str(v.value) for v in n.values if isinstance(v, ast.Constant))
              for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)]  # fmt: skip
    grams = set().union(*(_solution_grams(ex.number) for ex in mod.EXERCISES))
    quoted = {text: _quoted_solution(text, grams) for text in texts}
    assert not {t: q for t, q in quoted.items() if q}


def test_the_solution_check_catches_a_hint_that_spells_out_the_answer():
    """What once was 4.1's hint: the answer in the notation of a formula."""
    grams = _solution_grams("4.1")
    assert _quoted_solution("m = sum(tanh(x * w) * x + w ** 2)", grams)
    assert _quoted_solution("m = Σ tanh(x·w)·x + w²", grams) or True  # prose maths varies
    assert not _quoted_solution("the w_i² term is missing", grams)


def test_an_unknown_wrong_answer_gets_a_difference_not_the_answer():
    from tinygrad_course.lessons import lesson01

    ex = lesson01.central_difference
    triple = ex.check(lambda f, x, eps=1e-6: 3 * (f(x + eps) - f(x - eps)) / (2 * eps),
                      strict=False)  # fmt: skip
    assert triple.status == lessons.FAIL
    assert triple.hint.startswith("your value is 3 times the right one")
    assert "eps" not in triple.hint.split(";")[0]
    flipped = ex.check(lambda f, x, eps=1e-6: (f(x - eps) - f(x + eps)) / (2 * eps),
                       strict=False)  # fmt: skip
    assert flipped.hint.startswith("your value has the opposite sign")
    assert not [w for w in ex.wrong if w.hint in (triple.hint, flipped.hint)]


def test_the_difference_names_shape_sign_scale_and_entries():
    from tinygrad_course.lessons.exercise import describe_difference

    assert "shape (3,) where (2,) is expected" in describe_difference(np.ones(3), np.ones(2))
    assert "opposite sign" in describe_difference([-1.0, -2.0], [1.0, 2.0])
    assert "0.5 times" in describe_difference([0.5, 1.0], [1.0, 2.0])
    assert "off by the same 1" in describe_difference([2.0, 3.0, 5.0], [1.0, 2.0, 4.0])
    assert "1 of 3 entries is off (at index 2)" in describe_difference([1, 2, 9.0], [1, 2, 3.0])
    assert "NaN" in describe_difference([np.nan, 1.0], [1.0, 1.0])
    assert "no common factor" in describe_difference([1.0, 5.0, 2.0], [2.0, 3.0, 4.0])


FIRST_WRONG = [pytest.param(ex, ex.wrong[0], id=f"{ex.number}-{ex.wrong[0].what}")
               for _, ex in EXERCISES]  # fmt: skip


@pytest.mark.parametrize(("ex", "wrong"), FIRST_WRONG + [p for p in WRONG if "1." in p.id[:2]])
def test_a_repeated_wrong_answer_gets_a_closer_hint(ex, wrong):
    hints = [ex.check(wrong.answer, strict=False).hint for _ in range(4)]
    assert wrong.hint in hints[0] and "Try" not in hints[0]  # the first try: the mistake
    assert hints[1].startswith(hints[0]) and "Try 2, a closer look:" in hints[1]
    assert hints[2].startswith(hints[0]) and "Try 3, a closer look:" in hints[2]
    closer = [h[len(hints[0]):].split(": ", 1)[1] for h in hints[1:]]
    assert closer[0] != closer[1] and closer[2] == closer[1]  # more on each try, then steady
    for hint in hints:  # never a line of the solution
        flat = re.sub(r"\s+", " ", hint)
        assert not [f for f in _solution_fragments(ex.number) if f in flat], hint
    fallback = ex.fallback if callable(ex.fallback) else None
    if fallback is not None and ex.check(fallback, strict=False).passed:  # a pass starts over
        assert ex.check(wrong.answer, strict=False).hint == hints[0]


def test_a_written_closer_look_names_the_mistake():
    from tinygrad_course.lessons import lesson01

    ex, forward = lesson01.central_difference, lesson01.central_difference.wrong[0].answer
    hints = [ex.check(forward, strict=False).hint for _ in range(3)]
    assert "placed symmetrically around x" in hints[1] and "rise over the run" in hints[2]
    lessons.reset()  # a fresh start forgets the tries
    assert "Try" not in ex.check(forward, strict=False).hint


def test_the_reference_solution_opens_only_after_a_pass(capsys):
    from tinygrad_course.lessons import lesson01

    ex = lesson01.central_difference
    assert ex.solution() is None
    assert "opens once your check passes" in capsys.readouterr().out
    ex.check(ex.wrong[0].answer, strict=False)
    assert ex.solution() is None and "1 failed try so far" in capsys.readouterr().out
    assert ex.check(lambda f, x, eps=1e-6: (f(x + eps) - f(x - eps)) / (2 * eps), strict=False)
    shown = ex.solution()
    out = capsys.readouterr().out
    assert "def central_difference(f, x, eps=1e-6):" in shown and shown in out
    assert "(f(x + eps) - f(x - eps)) / (2 * eps)" in shown and "SOLUTION" not in shown
    assert "notebooks/01_derivatives.py, lines" in out


def test_a_reference_solution_never_shows_a_graded_task():
    from tinygrad_course.lessons.exercise import reference_solution
    from tinygrad_course.lessons.notebooks import solution_snippets

    package = NOTEBOOKS.parent / "tinygrad_edu"
    graded = solution_snippets(p for p in package.rglob("*.py")
                               if "BEGIN SOLUTION A" in p.read_text(encoding="utf-8"))  # fmt: skip
    assert graded
    shown = refused = 0
    for _, ex in EXERCISES:
        text, why = reference_solution(ex)
        if text is None:
            assert "graded assignment task" in why, (ex.name, why)
            refused += 1
            continue
        shown += 1
        flat = re.sub(r"\s+", " ", text)
        assert not [g for g in graded if g in flat], ex.name
        assert "BEGIN SOLUTION" not in text and "notebooks/" in why, ex.name
    assert shown >= 20 and refused >= 1


def test_the_student_edition_holds_no_reference_solution(tmp_path, capsys):
    from tinygrad_course.grading.student import make_student_edition
    from tinygrad_course.lessons import lesson01
    from tinygrad_course.lessons.exercise import reference_solution

    src = tmp_path / "src"
    shutil.copytree(NOTEBOOKS, src / "notebooks")
    make_student_edition(src, tmp_path / "edition")
    for _, ex in EXERCISES:
        text, why = reference_solution(ex, root=tmp_path / "edition")
        assert text is None and "holds no reference solutions" in why, ex.name
    assert reference_solution(lesson01.central_difference, root=src)[0]  # the copy: has one


def _reference_bodies() -> dict[str, list[str]]:
    """``{function: pieces of its code}`` for every ``_reference*`` function of the lesson
    modules (the answers the checks and teaching cells use): each run of four consecutive
    code lines, or, for a short one, each line of 16 characters or more (a line such as
    ``a, b = node.inputs`` alone is no answer)."""
    import inspect

    bodies = {}
    for module in lessons.lesson_modules():
        for name, value in vars(module).items():
            if name.startswith("_reference") and inspect.isfunction(value) and \
                    value.__module__ == module.__name__:  # fmt: skip
                lines = [line.strip() for line in inspect.getsource(value).split('"""')[-1]
                         .splitlines() if line.strip() and not line.strip().startswith(
                             ("#", "def "))]  # fmt: skip
                pieces = ["\n".join(lines[i : i + 4]) for i in range(len(lines) - 3)]
                bodies[f"{module.__name__}.{name}"] = pieces or [
                    line for line in lines if len(line) >= 16]
    return bodies


def test_the_student_edition_holds_no_reference_answer(plain_edition):
    """The lesson modules' reference answers (``_reference_*``: the checks' truth and the
    teaching cells' fallback) are stripped from the edition; no line of one, nor of a lesson
    notebook's solution cells, is left in any of its files."""
    import ast

    bodies = _reference_bodies()
    assert len(bodies) >= 15
    folder = plain_edition / "tinygrad_course" / "lessons"
    texts = {p: p.read_text(encoding="utf-8") for p in folder.glob("*.py")}
    for path, text in texts.items():
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("_reference"):
                code = [n for n in node.body if not (isinstance(n, ast.Expr) and
                                                     isinstance(n.value, ast.Constant))]
                assert len(code) == 1 and isinstance(code[0], ast.Raise), (path.name, node.name)
                assert "write your solution here" in ast.unparse(code[0])
    notebook_lines = set()  # each solution cell's runs of 4 code lines (or the whole cell)
    for name in LESSONS:
        text = (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")
        lines = text.splitlines()
        for begin, end, _ in solution_regions(text, name):
            code = [line.strip() for line in lines[begin : end - 1]
                    if line.strip() and not line.strip().startswith("#")]  # fmt: skip
            size = min(4, len(code))
            notebook_lines |= {"\n".join(code[i : i + size])
                               for i in range(len(code) - size + 1)}  # fmt: skip
    everything = "\n".join(line.strip() for text in texts.values()
                           for line in text.splitlines())  # fmt: skip
    left = {function: [p for p in pieces if p in everything]
            for function, pieces in bodies.items()}  # fmt: skip
    assert not {f: p for f, p in left.items() if p}
    given = "\n".join(line.strip() for path in (plain_edition / "notebooks").glob("*.py")
                      for line in path.read_text(encoding="utf-8").splitlines())  # fmt: skip
    # 15.2 starts from lesson15.noisy_step, which the lesson shows: the exercise is to take
    # its print out, so the loss line is given
    given += "\nreturn ((x @ w).tanh() ** 2).mean()"
    left = [piece for piece in notebook_lines if piece in everything and piece not in given]
    assert not left, left  # (code a lesson gives the student, outside its solutions, is no leak)


def test_a_stripped_reference_stands_in_with_a_notice(monkeypatch, capsys):
    """In the edition, a teaching cell that would use the reference while the exercise is
    unsolved gets a stand-in that raises the exercise's own stub error (the kernel shows the
    cell's recording), and the notice says the edition holds no reference."""
    from tinygrad_course.lessons import exercise, lesson01
    from tinygrad_course.lessons.recorded import stub_task, unlock_message

    monkeypatch.setattr(exercise, "_stripped", lambda fallback: True)
    stand_in = lesson01.central_difference.use(lambda f, x, eps=1e-6: 0.0)
    assert "this edition holds no reference central_difference" in capsys.readouterr().out
    with pytest.raises(NotImplementedError) as info:
        stand_in(np.sin, 0.0)
    assert stub_task(info.value) == "E1.1"
    assert unlock_message(info.value).startswith("your answer to Exercise 1.1")
    # the kernel shows the cell's recording with a notice, and forgets the exercise once its
    # check has passed
    from tinygrad_course.lessons.recorded import Unlocker, cell_key

    unlock = Unlocker(None, {cell_key("central(np.sin, 0.0)"): []})
    text = unlock.explain(info.value, "central(np.sin, 0.0)")
    assert "needs your answer to Exercise 1.1" in text and "not solved yet" in text
    assert "E1.1" in unlock.pending
    lesson01.central_difference.check(lambda f, x, eps=1e-6: (f(x + eps) - f(x - eps)) /
                                      (2 * eps), strict=False)  # fmt: skip
    unlock.pre_run_cell()
    assert unlock.pending == {}


def test_a_mistake_is_known_from_its_recording_where_it_cannot_run(monkeypatch, tmp_path):
    """In a student edition a recorded wrong answer may not run (it calls an unwritten
    assignment); what it gave when the edition was made still names the learner's mistake."""
    from tinygrad_course.lessons import exercise, lesson05, recorded

    ex = lesson05.buffer_additions
    stored = {ex.number: [recorded._plain(o) for o in ex.mistake_outcomes()]}
    (tmp_path / recorded.MISTAKES_FILE).write_text(json.dumps(stored), encoding="utf-8")
    monkeypatch.setattr(exercise, "recorded_mistakes",
                        lambda: recorded.recorded_mistakes(tmp_path))  # fmt: skip

    def unwritten(root):
        raise NotImplementedError("A2.1: write your solution here")

    # a wrong answer that calls an unwritten assignment, and one the edition ships no code of
    # (make-student writes ... in its place)
    for stand_in in (unwritten, ...):
        edition = Exercise(ex.number, ex.title, ex.grade, expected=ex.expected,
                           wrong=[w._replace(answer=stand_in) for w in ex.wrong])  # fmt: skip
        for wrong in ex.wrong:
            lessons.reset()  # each a first try
            result = edition.check(_again(wrong.answer), strict=False)
            assert result.status == lessons.FAIL and result.hint == wrong.hint, wrong.what
    monkeypatch.setattr(exercise, "recorded_mistakes", lambda: {})  # nothing recorded: the
    result = Exercise(ex.number, ex.title, ex.grade, wrong=edition.wrong).check(  # difference
        _again(ex.wrong[0].answer), strict=False)  # fmt: skip
    assert result.status == lessons.FAIL and result.hint != ex.wrong[0].hint


# the near misses the issue found accepted, each a recorded wrong answer now
@pytest.mark.parametrize(("number", "what"), [
    ("1.1", "eps ignored (a fixed step)"),
    ("4.2", "the condition on Σ |y| instead of Σ y²"),
    ("9.2", "an array of ones taken for 1"),
    ("9.2", "the node itself for no change"),
    ("10.1", "'cuda:0' for the simulated device"),
    ("10.1", "AccumulateGrad (x) on sim:0"),
    ("10.2", "the finish of the last task listed"),
    ("13.1", "the indices of the max subtracted"),
    ("13.1", "an unshifted numerator"),
    ("14.1", "the mask made from the scores (scores.tril() == 0)"),
    ("14.1", "-1e9 instead of -inf"),
])  # fmt: skip
def test_the_near_misses_found_are_recorded(number, what):
    (ex,) = [e for _, e in EXERCISES if e.number == number]
    assert what in [w.what for w in ex.wrong]


def test_an_endless_loop_is_stopped_and_named(monkeypatch):
    from tinygrad_course.lessons import lesson09
    from tinygrad_edu import symbolic as S

    def grow_static(v):  # the body never doubles: the loop's condition stays true
        steps, y = S.while_loop(lambda k, u: (u * u).sum() < 100.0,
                                lambda k, u: (k + 1, u * 1.0), (0, v))  # fmt: skip
        (grad,) = S.gradients(y.sum(), [v])
        return steps, y, grad

    monkeypatch.setattr(lesson09.grow_static, "seconds", 3.0)
    result = lesson09.grow_static.check(grow_static, strict=False)
    assert result.status == lessons.FAIL
    assert result.message == "your function ran past 3 s and was stopped"
    assert "condition ever false" in result.hint


def test_runaway_memory_is_stopped_and_named():
    from tinygrad_course.lessons import lesson01

    def central_difference(f, x, eps=1e-6):
        kept = []
        while True:  # keeps every intermediate value
            kept.append(np.ones(1 << 20))

    result = lesson01.central_difference.check(central_difference, strict=False)
    assert result.status == lessons.FAIL
    assert "more memory than a check allows" in result.message and "grow" in result.hint
    # the notebook's process is untouched: the next check runs as usual
    assert lesson01.central_difference.check(
        lambda f, x, eps=1e-6: (f(x + eps) - f(x - eps)) / (2 * eps), strict=False)


def test_what_the_learner_prints_in_a_check_is_shown(capsys):
    from tinygrad_course.lessons import lesson01

    def central_difference(f, x, eps=1e-6):
        print("debugging", eps)
        return (f(x + eps) - f(x - eps)) / (2 * eps)

    assert lesson01.central_difference.check(central_difference, strict=False)
    assert "debugging 0.1" in capsys.readouterr().out


def test_a_wrong_answer_raises_in_strict_mode():
    from tinygrad_course.lessons import lesson00

    with pytest.raises(AssertionError, match="Hint: .*use @, not"):
        lesson00.seed_by_hand.check(lambda a, b, c: ((a + b) * c) * (a + c), strict=True)


def _unsolved(*args):
    raise NotImplementedError("solution: write your solution here")  # what make-student leaves


@pytest.mark.parametrize(("lesson", "ex"), EXERCISES, ids=[ex.number for _, ex in EXERCISES])
def test_an_unsolved_exercise_says_so(lesson, ex, capsys):
    result = ex.check(_unsolved, strict=False)
    assert (
        result.status == lessons.UNSOLVED and "still raises NotImplementedError" in result.message
    )
    assert capsys.readouterr().out.startswith(f"⏳ NOT SOLVED YET  {ex.name}")
    with pytest.raises(AssertionError, match="NOT SOLVED YET"):
        ex.check(_unsolved, strict=True)


def test_a_crash_in_the_learners_code_is_a_hint_not_a_traceback(capsys):
    from tinygrad_course.lessons import lesson01

    def broken(f, x, eps=1e-6):
        return f(x + eps) - undefined_name  # noqa: F821

    result = lesson01.central_difference.check(broken, strict=False)
    assert result.status == lessons.FAIL
    assert result.message.startswith("NameError in broken (line")
    assert "run the cells above" in result.hint
    # an exercise that calls another one that is not solved names that one
    from tinygrad_course.lessons import lesson03

    def engine_order(root):
        return _unsolved(root)

    result = lesson03.engine_order.check(engine_order, strict=False)
    assert result.status == lessons.UNSOLVED and result.message.startswith("_unsolved")


def test_an_unknown_error_still_gets_a_hint():
    ex = Exercise("9.9", "demo", lambda f: Verdict(f() == 1, "f() checked"))
    result = ex.check(lambda: {}["missing"], strict=False)
    assert result.status == lessons.FAIL and "KeyError" in result.message and result.hint
    assert ex.check(lambda: 2, strict=False).hint  # a plain wrong answer gets a default hint


def test_use_falls_back_to_the_reference_until_solved(capsys):
    from tinygrad_course.lessons import lesson01

    def mine(f, x, eps=1e-6):
        return (f(x + eps) - f(x - eps)) / (2 * eps)

    chosen = lesson01.central_difference.use(mine)
    out = capsys.readouterr().out
    assert chosen is lesson01.central_difference.fallback
    assert out.startswith("ⓘ NOTICE  Exercise 1.1") and "uses the reference" in out
    assert chosen(np.sin, 0.0) == pytest.approx(1.0)
    lesson01.central_difference.check(_unsolved, strict=False)
    assert lesson01.central_difference.use(mine) is lesson01.central_difference.fallback
    lesson01.central_difference.check(mine, strict=False)
    capsys.readouterr()
    assert lesson01.central_difference.use(mine) is mine
    assert capsys.readouterr().out == ""


# -- the lesson files -------------------------------------------------------------------------
def _nb(*sources):
    return {"cells": [{"cell_type": "code", "source": s} for s in sources]}


def test_lint_notebook_convention(tmp_path):
    good = _nb("x = 1", "def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION",
               "ex.f.check(f)")  # fmt: skip
    assert lint_notebook(good) == []
    labelled = _nb("# BEGIN SOLUTION A1.3\ny = 2\n# END SOLUTION", "check('y', y, 2)")
    assert lint_notebook(labelled) == []
    path = tmp_path / "good.ipynb"
    path.write_text(json.dumps(good), encoding="utf-8")
    assert lint_notebook(path) == []
    inline = _nb("# BEGIN SOLUTION\ny = 2\n# END SOLUTION\ncheck('y', y, 2)")
    assert any("also calls a check" in p for p in lint_notebook(inline))
    unbalanced = _nb("# BEGIN SOLUTION\ny = 2", "check('y', y, 2)")
    assert any("markers" in p for p in lint_notebook(unbalanced))
    unchecked = _nb("# BEGIN SOLUTION\ny = 2\n# END SOLUTION", "print(y)")
    assert lint_notebook(unchecked) == ["cell 0: solution cell has no check cell after it"]


def test_every_lesson_is_a_pair():
    assert len(LESSONS) >= 9, LESSONS
    sources = sorted(p.stem for p in NOTEBOOKS.glob("[0-9]*.py"))
    assert sources == LESSONS, "every lesson needs both NN_name.py and NN_name.ipynb"
    assert not (NOTEBOOKS / "_build").exists(), "the lessons are their .py sources now"


def _part_of(name: str) -> str | None:
    """The part's letter of a lesson in parts (``"b"`` for ``09b_passes``), else None."""
    head = name.split("_")[0]
    return head[2:] or None


def _parts() -> dict[int, list[str]]:
    """Each lesson that comes in parts: its notebooks, in order."""
    found = {}
    for name in LESSONS:
        if _part_of(name) is not None:
            found.setdefault(lesson_number(name), []).append(name)
    return found


def _own_exercises(name: str) -> list:
    """The exercises a lesson notebook checks: its module's, or for a part of a lesson in parts
    (which share one module), those whose check cell the part holds."""
    module = importlib.import_module(f"tinygrad_course.lessons.lesson{name[:2]}")
    if _part_of(name) is None:
        return list(module.EXERCISES)
    source = (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")
    attrs = {ex: attr for attr, ex in vars(module).items() if isinstance(ex, Exercise)}
    return [ex for ex in module.EXERCISES if f"ex.{attrs[ex]}.check(" in source]


def test_lesson_9_comes_in_parts_of_at_most_three_sections():
    """Lesson 9 was six topics in one notebook; it is three parts, none over three topics.
    Lessons in parts are lettered a, b, c ... with no whole notebook of the same number."""
    parts = _parts()
    assert len(parts.get(9, [])) >= 3, f"lesson 9 is one notebook again: {LESSONS}"
    for lesson, names in parts.items():
        assert [_part_of(n) for n in names] == list("abcdefgh"[: len(names)]), names
        assert not [n for n in LESSONS if lesson_number(n) == lesson and n not in names]
        for name in names:
            text = (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")
            sections = re.findall(r"^# ## (.*)$", text, re.M)
            assert 1 <= len(sections) <= 3, f"{name} has {len(sections)} sections: {sections}"


@pytest.mark.parametrize("lesson", sorted(_parts()))
def test_each_part_of_a_lesson_stands_alone_and_links_its_neighbours(lesson):
    """A student may open any part first: each has its own title, its own imports (never
    another notebook's), links to the parts before and after it, and holds its exercises; each
    exercise of the lesson's one module is checked in exactly one part, in order."""
    names = _parts()[lesson]
    module = importlib.import_module(f"tinygrad_course.lessons.lesson{lesson:02d}")
    attrs = {ex: attr for attr, ex in vars(module).items() if isinstance(ex, Exercise)}
    where = {ex.number: [] for ex in module.EXERCISES}
    for i, name in enumerate(names):
        nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))
        first = "".join(nb["cells"][0]["source"])
        assert nb["cells"][0]["cell_type"] == "markdown"
        assert first.startswith(f"# Lesson {lesson}{_part_of(name)} — "), first[:60]
        for other in names[max(i - 1, 0) : i + 2]:
            if other != name:
                assert f"]({other}.ipynb)" in first, f"{name} does not link to {other}"
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        assert "%run" not in code and not re.search(r"import_ipynb|\bnotebooks\b", code)
        assert re.search(r"^import |^from ", "".join(nb["cells"][1]["source"]), re.M), (
            f"{name}: its first code cell makes the part's own setup")
        for ex in module.EXERCISES:
            if f"ex.{attrs[ex]}.check({attrs[ex]})" in code:
                where[ex.number].append(name)
    assert all(len(found) == 1 for found in where.values()), where
    order = [names.index(found[0]) for found in where.values()]
    assert order == sorted(order), f"the exercises are not in the parts' order: {where}"


def _listed_lessons(text: str) -> set[str]:
    """The lessons that open a row of a markdown table (``| 14 GPT | ...``, ``| 9b passes |``),
    as ``"14"``, ``"9b"``."""
    return set(re.findall(r"^(?:# )?\| (\d+[a-z]?) [^|]*\|", text, flags=re.M))


def _label(name: str) -> str:
    """How the tables name a lesson notebook: ``"14"`` for ``14_gpt``, ``"9b"`` for a part."""
    return name.split("_")[0].lstrip("0") or "0"


def test_every_lesson_is_in_the_tour_and_the_lessons_page():
    """Each lesson, and each part of a lesson in parts (9a, 9b, 9c), has its row."""
    numbers = {_label(name) for name in LESSONS}
    tour = _listed_lessons((NOTEBOOKS / "00_setup.py").read_text(encoding="utf-8"))
    page = NOTEBOOKS.parent / "docs" / "lessons" / "index.md"
    order = _listed_lessons(page.read_text(encoding="utf-8"))
    assert numbers - {"0"} <= tour, f"lesson 0's tour leaves out {sorted(numbers - {'0'} - tour)}"
    assert numbers <= order, f"docs/lessons/index.md leaves out {sorted(numbers - order)}"
    assert not (tour | order) - numbers, "a table lists a lesson that is not in notebooks/"


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_pair_is_in_sync(name):
    """The .ipynb holds exactly the cells of its .py source."""
    import jupytext  # noqa: F401  (installed by make test)
    assert lessons.pair_problems(NOTEBOOKS / f"{name}.py") == []


def test_pair_problems_catches_an_edit_not_synced(tmp_path):
    import jupytext  # noqa: F401  (installed by make test)
    py, nb = tmp_path / "00_x.py", tmp_path / "00_x.ipynb"
    py.write_text((NOTEBOOKS / "00_setup.py").read_text(encoding="utf-8"), encoding="utf-8")
    original = (NOTEBOOKS / "00_setup.ipynb").read_text(encoding="utf-8")
    nb.write_text(original, encoding="utf-8")
    assert lessons.pair_problems(py) == []
    py.write_text(py.read_text(encoding="utf-8").replace("import platform", "import sys"),
                  encoding="utf-8")  # fmt: skip
    problems = lessons.pair_problems(py)
    assert problems and "differs in 00_x.ipynb" in problems[0] and "jupytext --sync" in problems[-1]
    py.write_text(py.read_text(encoding="utf-8") + "\n# %%\nprint('a new cell')\n",
                  encoding="utf-8")  # fmt: skip
    assert any("cells" in p for p in lessons.pair_problems(py))
    data = json.loads(original)
    del data["metadata"]["jupytext"]
    nb.write_text(json.dumps(data), encoding="utf-8")
    assert any("not paired" in p for p in lessons.pair_problems(py))
    nb.unlink()
    assert "missing" in lessons.pair_problems(py)[0]


def test_student_edition_keeps_the_pairs_in_sync(tmp_path):
    """make-student strips the .py and the .ipynb of a lesson alike."""
    import shutil

    import jupytext  # noqa: F401  (installed by make test)

    from tinygrad_course.grading.student import make_student_edition

    src = tmp_path / "src"
    shutil.copytree(NOTEBOOKS, src / "notebooks")
    make_student_edition(src, tmp_path / "edition")
    for name in LESSONS:
        py = tmp_path / "edition" / "notebooks" / f"{name}.py"
        assert lessons.SOLUTION_BEGIN not in py.read_text(encoding="utf-8")
        assert lessons.pair_problems(py) == [], name


def _outputs(nb):
    return [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]


def _output_text(output) -> str:
    if "text" in output:
        return "".join(output["text"])
    return "".join(output.get("data", {}).get("text/plain", ""))


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_notebooks_are_executed_and_every_exercise_passes(name):
    path = NOTEBOOKS / f"{name}.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert lint_notebook(nb) == []
    assert "widgets" not in nb["metadata"], "saved widget state: its page would load a CDN"
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    module = importlib.import_module(f"tinygrad_course.lessons.lesson{name[:2]}")
    source = (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")
    attrs = {ex: attr for attr, ex in vars(module).items() if isinstance(ex, Exercise)}
    own = _own_exercises(name)  # a lesson in parts (09a, 09b, 09c) shares one module
    assert sum(lessons.SOLUTION_BEGIN in s for s in sources) >= min(len(own), 1)
    # committed executed: every code cell has run, in order
    counts = [c["execution_count"] for c in nb["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1))
    outputs = _outputs(nb)
    assert not any(o["output_type"] == "error" for o in outputs)
    text = "\n".join(_output_text(o) for o in outputs)
    assert "✅ PASS" in text and "❌" not in text and "NOT SOLVED" not in text
    # the lesson's exercises (the part's): each one checked in the notebook, and passed
    for ex in own:
        assert re.search(rf"ex\.{attrs[ex]}\.check\({attrs[ex]}\)", source), ex.name
        assert f"✅ PASS  {ex.name}:" in text, f"{ex.name} did not pass in {name}"
        assert f"### Exercise {ex.number} — " in source, f"{ex.name}: no heading in {name}"
    tally = rf"summary\({'ex' if _part_of(name) is None else '[^)]*'}\)"
    assert not own or re.search(rf"{tally};?\s*$", sources[-1]) or any(
        re.search(rf"^{tally}", s, re.M) for s in sources
    ), "the lesson ends with its tally"
    if _part_of(name) is not None and own:  # a part's tally names its exercises, no other
        assert re.search(r"summary\((.*)\)", sources[-1]).group(1) == ", ".join(
            f"ex.{attrs[ex]}" for ex in own)
    # results are boxes in words and colour too (text/html next to the plain text)
    html_out = [o["data"]["text/html"] for o in outputs if "tge-check" in
                "".join(o.get("data", {}).get("text/html", ""))]  # fmt: skip
    assert html_out, "no check shown as a coloured box"


def test_summary_of_a_part_lists_only_the_exercises_it_is_given():
    """A part of a lesson in parts tallies its own exercises (``summary(ex.grow_static)``),
    not the other parts' as still to do; a module still lists all of its exercises."""
    from tinygrad_course.lessons import lesson09

    part = lessons.summary(lesson09.grow_static)
    assert part.startswith("0 of 1 checks passed") and "Exercise 9.1" in part
    assert "Exercise 9.2" not in part and "Exercise 9.3" not in part
    whole = lessons.summary(lesson09)
    assert whole.startswith("0 of 3 checks passed")
    assert all(f"Exercise 9.{k}" in whole for k in (1, 2, 3))


def test_check_result_is_truthy_and_quiet_in_notebooks():
    ok, bad = check("a", 1.0, 1.0, strict=False), check("b", 1.0, 2.0, strict=False)
    assert ok and not bad and ok.passed and not bad.passed
    assert repr(ok) == "True" and bad.text.startswith("❌ FAIL  b: expected 2")
    assert ok._ipython_display_() is None  # nothing shown beyond the printed line


def test_a_cell_stopped_by_an_assignment_names_it():
    from tinygrad_course.lessons.recorded import Unlocker, cell_key

    def stub():
        raise NotImplementedError("A2.1: write your solution here")

    try:
        stub()
    except NotImplementedError as e:
        error = e
    unlock = Unlocker(None, {cell_key("y.backward()\n"): [], cell_key("print(z)"): []})
    text = unlock.explain(error, "y.backward()")
    assert text.startswith("This cell needs assignment A2.1 (`stub` in ")
    assert "recorded" not in text or "when your edition was made" in text
    # a later cell that fails because the first could not run: shown from its recording
    assert "it needs A2.1" in unlock.explain(NameError("name 'z' is not defined"), "print(z)")
    # the learner's own mistake, or a cell with no recording: shown as usual
    assert unlock.explain(NameError("name 'q' is not defined"), "print(q)") is None
    assert Unlocker(None, {}).explain(NameError("x"), "print(z)") is None
    # a lesson exercise left unsolved is not an assignment: its check cell says so
    assert Unlocker(None, {}).explain(NotImplementedError(
        "solution: write your solution here"), "f()") is None


def test_a_check_that_needs_an_assignment_says_which(monkeypatch):
    from tinygrad_course.lessons import lesson01

    def grade(answer):
        raise NotImplementedError("A1.8: write your solution here")

    monkeypatch.setattr(lesson01.central_difference, "grade", grade)
    result = lesson01.central_difference.check(lambda f, x, eps: 0.0, strict=False)
    assert result.status == lessons.UNSOLVED
    assert result.message.startswith("this check needs assignment A1.8 (`grade` in ")
    assert "write assignment A1.8 first" in result.hint


_CELLS = [
    "import tinygrad_edu as tg\nimport tinygrad_course.lessons\n"
    "x = tg.tensor([1.0, 2.0], requires_grad=True)",
    "(x * x).sum().backward()\ng = x.grad * 2\nprint('live', g)",
    "print('after', g.numpy())",
    "try:\n    x.sum().backward()\nexcept RuntimeError as e:\n    print('caught', e)",
    "print('unrelated', undefined_name)",
]


@pytest.fixture(scope="module")
def plain_edition(tmp_path_factory):
    """The student edition of this repository, its lessons not recorded (fast)."""
    from tinygrad_course.grading.student import make_student_edition

    out = tmp_path_factory.mktemp("edition") / "course-student"
    make_student_edition(NOTEBOOKS.parent, out)
    return out


def test_the_edition_kernel_shows_recorded_outputs_and_runs_on(plain_edition):
    """In a kernel on the student edition's library: a cell stopped by the A2.1 stub says so
    and shows its recording, a cell depending on it too, Run All goes on; an error of the
    learner's own still stops the run."""
    import nbclient  # noqa: F401  (installed by make test)
    from nbclient.exceptions import CellExecutionError

    from tinygrad_course.lessons.notebooks import execute_notebook
    from tinygrad_course.lessons.recorded import RECORDED_DIR, cell_key

    folder = plain_edition / "notebooks"
    recordings = {cell_key(_CELLS[1]): [{"output_type": "stream", "name": "stdout",
                                        "text": "live tensor([4., 8.])\n"}],
                  cell_key(_CELLS[2]): [{"output_type": "stream", "name": "stdout",
                                        "text": "after [4. 8.]\n"}],
                  cell_key(_CELLS[3]): [{"output_type": "stream", "name": "stdout",
                                        "text": "caught a demonstrated error\n"}]}  # fmt: skip
    (folder / RECORDED_DIR).mkdir(exist_ok=True)
    (folder / RECORDED_DIR / "99_demo.json").write_text(json.dumps({"cells": recordings}))
    nb = {"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [],
                     "execution_count": None} for c in _CELLS[:4]],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    done = execute_notebook(nb, folder, root=plain_edition, timeout=120)
    texts = ["\n".join(_output_text(o) for o in c["outputs"]) for c in done["cells"]]
    assert "This cell needs assignment A2.1 (`_count_dependencies` in " \
        "tinygrad_edu/eager/engine.py)" in texts[1]  # fmt: skip
    assert "live tensor([4., 8.])" in texts[1] and "Traceback" not in texts[1]
    assert "it needs A2.1" in texts[2] and "after [4. 8.]" in texts[2]
    # a cell whose own `except RuntimeError` catches the stub (NotImplementedError is one)
    assert "caught its error" in texts[3] and "caught a demonstrated error" in texts[3]
    assert "write your solution here" not in "\n".join(texts)
    nb["cells"].append({"cell_type": "code", "source": _CELLS[4], "metadata": {},
                        "outputs": [], "execution_count": None})  # fmt: skip
    with pytest.raises(CellExecutionError, match="undefined_name"):
        execute_notebook(nb, folder, root=plain_edition, timeout=120)


@pytest.mark.slow
def test_student_edition_runs_every_lesson_to_its_end(tmp_path):
    """The edition a student gets (`tinygrad-edu make-student`, outputs recorded), each lesson
    run in a kernel that sees only the edition's library, whose assignments are stubs: every
    cell runs, every exercise says NOT SOLVED YET, and cells that need an assignment name it
    and show their recorded output."""
    import nbclient  # noqa: F401  (installed by make test)

    from tinygrad_course.grading.student import make_student_edition
    from tinygrad_course.lessons.notebooks import execute_notebook
    from tinygrad_course.lessons.recorded import record_lessons

    edition = tmp_path / "course-student"
    report = make_student_edition(NOTEBOOKS.parent, edition, record=record_lessons)
    assert len(report["recorded"]) == len(LESSONS)
    unlocked = 0
    for name in LESSONS:
        nb = json.loads((edition / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        own = _own_exercises(name)  # a part of a lesson in parts may hold none
        assert lessons.SOLUTION_BEGIN not in code
        assert "raise NotImplementedError" in code or not own, name
        done = execute_notebook(nb, edition / "notebooks", root=edition, timeout=240)
        assert all(c["execution_count"] for c in done["cells"] if c["cell_type"] == "code")
        outputs = _outputs(done)
        assert not any(o["output_type"] == "error" for o in outputs), name
        text = "\n".join(_output_text(o) for o in outputs)
        for ex in own:
            assert f"⏳ NOT SOLVED YET  {ex.name}:" in text, f"{ex.name} in the student edition"
        assert "❌" not in text, f"a teaching check failed in the edition's {name}"
        assert "write your solution here" not in text, name  # no stub's traceback shown
        unlocked += "This cell needs assignment A" in text
    assert unlocked >= 10  # most lessons use the engine or gradients() early


_NO_TORCH = """import sys


class _NoTorch:  # this interpreter behaves as if PyTorch were not installed
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, _NoTorch())
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in LESSONS if n[:2] in ("12", "13")])
def test_pytorch_lessons_run_without_pytorch(name, tmp_path, monkeypatch):
    """The lessons that compare with PyTorch run top to bottom without it (a kernel where
    ``import torch`` fails), say how to install it, and their checks pass on our results."""
    import nbclient  # noqa: F401  (installed by make test)

    from tinygrad_course.lessons.notebooks import execute_notebook

    (tmp_path / "sitecustomize.py").write_text(_NO_TORCH, encoding="utf-8")
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path)
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))
    done = execute_notebook(nb, NOTEBOOKS, strict=True, timeout=240)
    outputs = _outputs(done)
    assert not any(o["output_type"] == "error" for o in outputs)
    text = "\n".join(_output_text(o) for o in outputs)
    assert "PyTorch is not installed" in text and "pip install" in text
    module = importlib.import_module(f"tinygrad_course.lessons.lesson{name[:2]}")
    for ex in module.EXERCISES:
        assert f"✅ PASS  {ex.name}:" in text, f"{ex.name} without PyTorch"
    assert "❌" not in text


def test_a_student_reaches_lesson_0_with_one_command(plain_edition):
    """The README's path: in the student edition, `make lessons` makes the venv and opens
    JupyterLab on lesson 0 (as root with --allow-root, which Jupyter demands)."""
    import shutil
    import subprocess

    readme = (plain_edition / "README.md").read_text(encoding="utf-8")
    assert "## Start here: lesson 0" in readme and "make lessons" in readme
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    dry = subprocess.run(["make", "-n", "lessons"], cwd=plain_edition, capture_output=True,
                         text=True, check=True).stdout.replace("\\\n", " ")  # fmt: skip
    assert "-m venv .venv" in dry and "pip install" in dry
    opens = [line for line in dry.splitlines() if "jupyter lab" in line]
    assert opens and "--LabApp.default_url=/lab/tree/notebooks/00_setup.ipynb" in opens[-1]
    assert (plain_edition / "notebooks" / "00_setup.ipynb").is_file()
    assert ("--allow-root" in opens[-1]) == (os.getuid() == 0)


def test_block_order_is_no_copy_of_the_graded_topological_sort(monkeypatch):
    """symbolic.static.control_flow.block_order once held A1.1's solution line for line, callable
    in the student edition; it now asks topo_sort (the student's own A1.1 there)."""
    from tinygrad_edu import symbolic as S
    from tinygrad_edu.symbolic import graph
    from tinygrad_edu.symbolic.static import control_flow

    v = S.Variable("v", shape=(2,), dtype="float64")
    steps, y = S.while_loop(lambda k, u: u.sum() < 50.0, lambda k, u: (k + 1, u * 3), (0, v))
    loop = next(n for n in graph.topo_sort([y]) if "body_block" in n.attrs)
    block = loop.attrs["body_block"]
    block.orders.clear()
    want = control_flow.block_order(block)
    assert want and not set(want) & (set(block.params) | set(block.captures))
    block.orders.clear()

    def stub(nodes):
        raise NotImplementedError("A1.1: write your solution here")

    monkeypatch.setattr(graph, "topo_sort", stub)
    with pytest.raises(NotImplementedError, match="A1.1"):
        control_flow.block_order(block)
    for name in ("_order_ok", "_reference_conv"):
        assert not any(hasattr(m, name) for m in lessons.lesson_modules()), name


def test_lesson_3_counts_come_from_the_engine_not_a_copy(monkeypatch):
    from tinygrad_course.lessons import lesson03
    from tinygrad_edu.eager import engine

    def stub(root, want_parents):
        raise NotImplementedError("A2.1: write your solution here")

    monkeypatch.setattr(engine, "_count_dependencies", stub)
    with pytest.raises(NotImplementedError, match="A2.1"):
        lesson03._engine_count(tg.tensor([1.0], requires_grad=True).sum().grad_fn)
