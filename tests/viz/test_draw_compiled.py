"""Drawing what tg.compile captured: the forward and backward graphs (tensor-as-node), before
and after the passes, and the compiled call as one node in the eager graph."""

import pytest

import tinygrad_edu as tg
from tinygrad_edu import viz

from .conftest import needs_dot


def _compiled_model():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.Tanh(), tg.nn.Linear(4, 2))
    cm = tg.compile(model)
    x = tg.randn(5, 3)
    cm(x)
    return cm, cm(x)


@pytest.mark.parametrize("part", ["forward", "backward"])
@pytest.mark.parametrize("passes", [False, True])
def test_both_graphs_are_drawn_with_parameter_names(part, passes):
    cm, _ = _compiled_model()
    src = viz.draw_compiled(cm, part, passes).source
    assert f"the {part} graph" in src
    if part == "forward":
        assert "0.weight" in src and "2.bias" in src and "tanh" in src
    else:
        assert "grad_out0" in src and "saved: " in src


def test_the_eager_graph_shows_one_compiled_node():
    _, out = _compiled_model()
    src = viz.draw(out.sum()).source
    assert "CompiledFunctionBackward" in src and "TanhBackward0" not in src


def test_clear_errors_before_a_call_and_for_a_wrong_part():
    f = tg.compile(lambda x: x * 2)
    with pytest.raises(ValueError, match="call the compiled function once"):
        viz.draw_compiled(f)
    f(tg.ones(2))
    with pytest.raises(ValueError, match="part must be one of"):
        viz.draw_compiled(f, "sideways")
    with pytest.raises(ValueError, match="no backward graph"):
        viz.draw_compiled(f, "backward")
    with pytest.raises(TypeError, match="expected what tg.compile returned"):
        viz.draw_compiled(lambda x: x)


@needs_dot
def test_renders_to_png(tmp_path):
    cm, _ = _compiled_model()
    path = viz.draw_compiled(cm, "backward").render(str(tmp_path / "bw"), format="png")
    assert (tmp_path / "bw.png").stat().st_size > 1000 and path.endswith(".png")
