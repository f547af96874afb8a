import xml.etree.ElementTree as ET

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_edu.eager import Observer, observe
from tinygrad_edu.symbolic import Executor, Variable, gradients
from tinygrad_edu.viz.examples import seed, seed_inputs

from .conftest import needs_dot, reference_seed_grads

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class CountRuns(Observer):
    """An independent count of the nodes the engine runs, in order."""

    def __init__(self):
        self.ran = []

    def node_started(self, task, node, grads):
        self.ran.append(node)


def _fresh_seed():
    leaves = {k: tg.tensor(v, requires_grad=True) for k, v in seed_inputs().items()}
    for k, t in leaves.items():
        t.name = k
    return seed(**leaves).sum(), leaves


def test_frame_count_equals_nodes_run():
    loss, _ = _fresh_seed()
    counter = CountRuns()
    with observe(counter):
        loss.backward(retain_graph=True)
    loss2, leaves = _fresh_seed()
    st = viz.BackwardStepper.record(loss2)
    assert len(st.frames) == len(counter.ran) + 2
    assert [f.kind for f in st.frames] == ["start"] + ["run"] * len(counter.ran) + ["done"]
    assert [f.node.name() for f in st.frames[1:-1]] == [n.name() for n in counter.ran]
    # recording really ran backward: .grad filled, as a reference computation says
    ref = reference_seed_grads(seed_inputs())
    for k, t in leaves.items():
        assert np.allclose(t.grad.numpy(), ref[k], atol=1e-5)


def test_captions_explain_why_a_node_goes_first():
    """Reverse creation order, AccumulateGrad's top priority, and ties among AccumulateGrads
    (first made ready, first run) each get their own reason."""
    loss, _ = _fresh_seed()
    st = viz.BackwardStepper.record(loss)
    by_title = {f.title: f.caption for f in st.frames}
    assert by_title["AddBackward0 #2"].startswith(  # A + C, the second add the code made
        "2 nodes were ready; AddBackward0 #2 was created last (highest sequence_nr)"
    )
    assert "AccumulateGrad (C) goes first: every AccumulateGrad has the largest" in (
        by_title["AccumulateGrad (C)"]
    )
    assert "AccumulateGrad (A) and AccumulateGrad (B) tie on sequence_nr" in (
        by_title["AccumulateGrad (A)"]
    )
    titles = [f.title for f in st.frames]
    assert titles.index("AccumulateGrad (A)") < titles.index("AccumulateGrad (B)")


def test_frames_track_engine_state():
    loss, leaves = _fresh_seed()
    st = viz.BackwardStepper.record(loss)
    start, done = st.frames[0], st.frames[-1]
    assert start.ready == [st._root]
    assert all(v >= 1 for v in start.dependencies.values())
    assert all(v == 0 for v in done.dependencies.values()) and done.ready == []
    assert all(g is None for g in start.leaf_grads.values())
    for t in leaves.values():
        assert np.allclose(done.leaf_grads[t], t.grad.numpy())
    # A and C are used twice: their AccumulateGrad nodes received 2 gradients (summed)
    acc = {f.title: f for f in st.frames if f.title.startswith("AccumulateGrad")}
    assert acc["AccumulateGrad (A)"].received_count == 2
    assert acc["AccumulateGrad (C)"].received_count == 2
    assert acc["AccumulateGrad (B)"].received_count == 1
    assert "summed into one" in acc["AccumulateGrad (A)"].caption
    assert sum(f.summed for f in st.frames) == 2  # two fan-in sums happened
    # the ready queue runs the highest sequence number first
    for f in st.frames[1:-1]:
        prev = st.frames[st.frames.index(f) - 1]
        assert f.node is prev.ready[0]
        seqs = [n.sequence_nr for n in prev.ready]
        assert seqs == sorted(seqs, reverse=True)
    # .grad fills in step by step: A's grad appears only once its AccumulateGrad ran
    i_acc = st.frames.index(acc["AccumulateGrad (A)"])
    assert st.frames[i_acc - 1].leaf_grads[leaves["A"]] is None
    assert st.frames[i_acc].leaf_grads[leaves["A"]] is not None


def test_frame_drawing_shows_state():
    loss, _ = _fresh_seed()
    st = viz.BackwardStepper.record(loss)
    i = next(k for k, f in enumerate(st.frames) if f.title == "MulBackward0")
    src = st.draw(i).source
    assert "running" in src and "queue #1" in src and "ready queue (next first)" in src
    assert "waits for 1 gradient" in src and "done" in src
    assert f"step {i} of {len(st.frames) - 1}" in src
    assert st.draw(0).source == st.draw(0).source
    with pytest.raises(IndexError, match="frames"):
        st.draw(len(st.frames))


def test_symbolic_stepper_frames_follow_executor_order():
    vs = {k: Variable(k, shape=(2, 2)) for k in "ABC"}
    E = seed(**vs)
    grads = gradients(E, list(vs.values()))
    feed = {vs[k]: v for k, v in seed_inputs().items()}
    st = viz.BackwardStepper.record_symbolic([E, *grads], feed)
    order = Executor([E, *grads]).order
    assert len(st.frames) == len(order) + 2
    assert [f.node for f in st.frames[1:-1]] == order
    sums = [f for f in st.frames if f.node is not None and f.node.is_adjoint_sum]
    assert len(sums) == 2 and all("partial adjoints" in f.caption for f in sums)
    last = st.frames[-1]
    assert np.allclose(last.values[grads[0]], reference_seed_grads(seed_inputs())["A"], atol=1e-5)
    assert "computing" in st.draw(5).source


@needs_dot
def test_gif_and_frames_written(tmp_path):
    from PIL import Image

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    x.name = "x"
    st = viz.BackwardStepper.record((x * x).sum())
    paths = st.save_frames(tmp_path / "frames")
    assert len(paths) == len(st.frames)
    assert all(open(p, "rb").read(8) == PNG_MAGIC for p in paths)
    gif = st.save_gif(tmp_path / "steps.gif", duration=100)
    with Image.open(gif) as im:
        assert im.n_frames == len(st.frames)
        sizes = set()
        for k in range(im.n_frames):
            im.seek(k)
            sizes.add(im.size)
        assert len(sizes) == 1  # padded: the animation does not jump


def test_widget_slider():
    import shutil

    import ipywidgets  # noqa: F401  (installed by make test)

    if shutil.which("dot") is None:
        pytest.skip("Graphviz `dot` not installed")
    x = tg.tensor([1.0], requires_grad=True)
    st = viz.BackwardStepper.record((x * 3).sum())
    box = st.widget()
    slider, caption, image = box.children
    assert slider.max == len(st.frames) - 1
    slider.value = 2
    assert image.value[:8] == PNG_MAGIC and st.frames[2].title in caption.value


# -- missing dot, render helper, CLI --------------------------------------------------------
def test_missing_dot_message(monkeypatch, tmp_path):
    loss, _ = _fresh_seed()
    dot = viz.draw(loss)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(viz.DotNotFoundError) as err:
        viz.render(dot, tmp_path / "x.png")
    msg = str(err.value)
    for hint in ("apt-get install graphviz", "brew install graphviz", "conda install graphviz"):
        assert hint in msg
    assert ".source" in msg and "digraph" in dot.source  # DOT is still there
    st = viz.BackwardStepper.record(_fresh_seed()[0])
    with pytest.raises(viz.DotNotFoundError):
        st.save_gif(tmp_path / "x.gif")
    from tinygrad_edu.cli import main

    assert main(["render", "--out", str(tmp_path / "out")]) == 1


@needs_dot
def test_cli_render_writes_all_files(tmp_path, capsys):
    from PIL import Image

    from tinygrad_edu.cli import main

    assert main(["render", "--example", "seed", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out.split()
    names = sorted(p.rsplit("/", 1)[-1] for p in printed)
    assert names == sorted(
        [f"seed_{s}.{f}" for s in ("symbolic", "eager", "both") for f in ("png", "svg")]
        + ["seed_backward.gif"]
    )
    for p in printed:
        if p.endswith(".png"):
            assert open(p, "rb").read(8) == PNG_MAGIC
            with Image.open(p) as im:
                assert im.width > 0 and im.height > 0
        elif p.endswith(".svg"):
            assert ET.parse(p).getroot().tag.endswith("svg")
        else:
            with Image.open(p) as im:
                assert im.format == "GIF" and im.n_frames > 5
