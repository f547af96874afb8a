"""Tests for tinygrad_edu.lessons (the checks the lesson notebooks use) and for the lesson
sources themselves: each lesson is a jupytext percent-format ``.py`` file (the source of truth)
paired with its executed ``.ipynb``."""

import doctest
import json
from pathlib import Path

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu import lessons
from tinygrad_edu.lessons import check, check_gradient, check_true, lint_notebook

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = sorted(p.stem for p in NOTEBOOKS.glob("[0-9]*.ipynb"))


@pytest.fixture(autouse=True)
def _fresh():
    lessons.reset()
    lessons.set_strict(None)
    yield
    lessons.reset()
    lessons.set_strict(None)


def test_doctests():
    result = doctest.testmod(lessons, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 6 and result.failed == 0


def test_check_pass_and_fail_messages(capsys):
    assert check("sum", np.array([1.0, 2.0]) + 1, [2.0, 3.0], strict=False)
    out = capsys.readouterr().out
    assert out.startswith("✅ sum:") and "[2. 3.]" in out
    assert not check("sum", np.array([1.0, 2.5]), [1.0, 2.0], strict=False)
    out = capsys.readouterr().out
    assert out.startswith("❌ sum: expected [1. 2.], got [1.  2.5]")
    assert "max abs error 0.5" in out and "worst at index (1,)" in out


def test_check_tolerance_is_applied():
    assert check("close", 1.0 + 1e-8, 1.0, strict=False)
    assert not check("far", 1.0 + 1e-3, 1.0, strict=False)
    assert check("far but loose", 1.0 + 1e-3, 1.0, atol=1e-2, strict=False)
    assert check("relative", 1000.1, 1000.0, atol=0, rtol=1e-3, strict=False)


def test_check_shape_mismatch_names_both_shapes(capsys):
    assert not check("shape", np.zeros((2, 3)), np.zeros((3, 2)), strict=False)
    assert "expected shape (3, 2), got shape (2, 3)" in capsys.readouterr().out


def test_check_none_and_nan_and_non_numbers(capsys):
    assert not check("forgot return", None, 1.0, strict=False)
    assert "got None" in capsys.readouterr().out
    assert not check("nan", np.array([np.nan, 1.0]), [0.0, 1.0], strict=False)
    assert "NaN" in capsys.readouterr().out
    assert check("names", ("a", "b"), ("a", "b"), strict=False)
    assert not check("names", ("a", "c"), ("a", "b"), strict=False)
    assert "expected ('a', 'b'), got ('a', 'c')" in capsys.readouterr().out


def test_check_accepts_tensors():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert check("grad", x.grad, 2 * np.array([1.0, 2.0]), strict=False)
    assert not check("grad", x.grad, [1.0, 2.0], strict=False)


def test_strict_modes(monkeypatch):
    with pytest.raises(AssertionError, match="❌ wrong: expected 2, got 1"):
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


def test_results_and_summary(capsys):
    check("a", 1.0, 1.0, strict=False)
    check("b", 1.0, 2.0, strict=False)
    check_true("c", True, strict=False)
    assert lessons.results() == [("a", True), ("b", False), ("c", True)]
    capsys.readouterr()
    assert lessons.summary() == "2 of 3 checks passed (still to do: b)"
    assert "2 of 3" in capsys.readouterr().out


def test_check_true_hint(capsys):
    assert not check_true("positive", -1 > 0, hint="look at the sign", strict=False)
    assert "❌ positive: no: look at the sign" in capsys.readouterr().out


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
    assert out.startswith("❌ gradient of square: input 0 at index (")
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
    assert not check_gradient(lambda v: tg.tensor(np.sin(v.numpy())), [[1.0]], strict=False)
    assert "no grad_fn" in capsys.readouterr().out


def _nb(*sources):
    return {"cells": [{"cell_type": "code", "source": s} for s in sources]}


def test_lint_notebook_convention(tmp_path):
    good = _nb("x = 1", "def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION",
               "check('f', f(), 1)")  # fmt: skip
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


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_pair_is_in_sync(name):
    """The .ipynb holds exactly the cells of its .py source."""
    pytest.importorskip("jupytext")
    assert lessons.pair_problems(NOTEBOOKS / f"{name}.py") == []


def test_pair_problems_catches_an_edit_not_synced(tmp_path):
    pytest.importorskip("jupytext")
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


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_notebooks_follow_the_convention(name):
    path = NOTEBOOKS / f"{name}.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert lint_notebook(nb) == []
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert sum(lessons.SOLUTION_BEGIN in s for s in sources) >= 1
    # committed executed: every code cell has run, in order
    counts = [c["execution_count"] for c in nb["cells"] if c["cell_type"] == "code"]
    assert counts == list(range(1, len(counts) + 1))
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not any(o["output_type"] == "error" for o in outputs)
    text = "".join("".join(o.get("text", "")) for o in outputs)
    assert "✅" in text and "❌" not in text


def test_check_result_is_truthy_and_quiet_in_notebooks():
    ok, bad = check("a", 1.0, 1.0, strict=False), check("b", 1.0, 2.0, strict=False)
    assert ok and not bad and ok.passed and not bad.passed
    assert repr(ok) == "True" and bad.message.startswith("❌ b: expected 2")
    assert ok._ipython_display_() is None  # nothing shown beyond the printed line
