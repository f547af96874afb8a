"""``draw(loss, modules=model)``: each module's ops in one labelled cluster, nested like the
modules; shapes on op nodes; collapsed modules; and the im2col picture."""

import re

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu import nn, viz

from .conftest import needs_dot


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )  # fmt: skip
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(8 * 2 * 2, 3)

    def forward(self, x):
        return self.fc(self.flatten(self.features(x)))


@pytest.fixture
def lenet_loss():
    tg.manual_seed(0)
    model = LeNet()
    loss = nn.functional.cross_entropy(model(tg.randn(5, 1, 8, 8)), np.array([0, 1, 2, 0, 1]))
    return model, loss


def _by_label(data, groups):
    out = {}
    for rec in data.nodes:
        out.setdefault(rec.label, set()).add(groups.get(rec.id))
    return out


def test_each_op_goes_to_the_innermost_module(lenet_loss):
    model, loss = lenet_loss
    data = viz.eager_graph(loss, dict(model.named_parameters()))
    groups = viz.module_groups(data, model)
    labels = _by_label(data, groups)
    assert labels["ConvolutionBackward0"] == {"features.0", "features.3"}
    assert labels["ReluBackward0"] == {"features.1", "features.4"}
    assert labels["MaxPool2DWithIndicesBackward0"] == {"features.2", "features.5"}
    assert labels["ViewBackward0"] == {"flatten"}
    assert labels["MmBackward0"] == {"fc"} and labels["AddBackward0"] == {"fc"}
    assert labels["NllLossBackward0"] == labels["LogSoftmaxBackward0"] == {None}  # the loss
    # parameters (their AccumulateGrad and leaf boxes) sit with the module that owns them
    assert labels["features.0.weight"] == {"features.0"} and labels["fc.bias"] == {"fc"}
    assert groups.get("o0") is None


def test_dot_has_nested_labelled_clusters_and_shapes(lenet_loss):
    model, loss = lenet_loss
    src = viz.draw(loss, modules=model).source
    names = re.findall(r"subgraph (cluster_\w+)", src)
    assert names[:1] == ["cluster_features"] and "cluster_features_0" in names
    assert "cluster_fc" in names and "cluster_flatten" in names
    # nesting: features_0 opens before features closes
    assert src.index("cluster_features_0") > src.index("cluster_features {")
    assert "features.0 · Conv2d(1, 4, kernel_size=(3, 3)" in src
    assert "fc · Linear(in_features=32, out_features=3, bias=True)" in src
    assert "5×4×8×8" in src and "5×8×2×2" in src  # op nodes show their forward shapes
    assert "module (its ops)" in src  # the legend says what the boxes are
    # without modules= the drawing is as before: no clusters, no shape line on op boxes
    plain = viz.draw(loss).source
    assert "cluster_" not in plain and "5×4×8×8" not in plain


def test_collapsed_modules_are_one_box_each(lenet_loss):
    model, loss = lenet_loss
    src = viz.draw(loss, modules=model, collapse=True).source
    assert "ConvolutionBackward0" not in src and "ReluBackward0" not in src
    assert "features · Sequential" in src and "6 ops" in src and "5×8×2×2" in src
    assert "fc · Linear" in src and "2 ops" in src
    assert "NllLossBackward0" in src  # outside every module: still drawn
    part = viz.draw(loss, modules=model, collapse=["features.0"]).source
    assert part.count("ConvolutionBackward0") == 1 and "features.0 · Conv2d" in part
    assert "collapsed module" in part
    with pytest.raises(ValueError, match=r"collapse names \['conv9'\] are not modules"):
        viz.draw(loss, modules=model, collapse=["conv9"])
    with pytest.raises(ValueError, match="collapse= needs modules="):
        viz.draw(loss, collapse=True)
    with pytest.raises(TypeError, match="expects an nn.Module"):
        viz.draw(loss, modules="model")


def test_a_module_called_twice_holds_both_calls():
    tg.manual_seed(1)
    shared, head = nn.Linear(3, 3), nn.Linear(3, 1)
    net = nn.Sequential(shared, nn.Tanh(), shared, head)
    loss = net(tg.randn(4, 3)).sum()
    data = viz.eager_graph(loss)
    groups = viz.module_groups(data, net)
    labels = _by_label(data, groups)
    assert labels["MmBackward0"] == {"0", "3"}  # shared is registered as "0" (and "2")
    assert sum(1 for r in data.nodes if r.label == "MmBackward0" and groups[r.id] == "0") == 2


def test_ops_outside_module_calls_are_not_claimed():
    lin = nn.Linear(2, 2)
    x = tg.randn(3, 2, requires_grad=True)
    y = (lin(x) * 2).exp().sum()  # mul, exp, sum happen outside the Linear
    data = viz.eager_graph(y)
    labels = _by_label(data, viz.module_groups(data, nn.Sequential(lin)))
    assert labels["MulBackward0"] == {None} and labels["ExpBackward0"] == {None}
    assert labels["MmBackward0"] == {"0"}


@needs_dot
def test_module_drawing_renders(tmp_path, lenet_loss):
    model, loss = lenet_loss
    path = viz.render(viz.draw(loss, modules=model), tmp_path / "lenet.png")
    from PIL import Image

    with Image.open(path) as im:
        assert im.size[0] > 400 and im.size[1] > 400


def test_im2col_matrix_is_the_libraries_layout():
    img = np.arange(1.0, 17.0).reshape(4, 4)
    cols = viz.im2col_matrix(img, kernel_size=3)
    assert cols.shape == (9, 4)
    assert cols[:, 0].tolist() == [1, 2, 3, 5, 6, 7, 9, 10, 11]  # the top-left window
    assert cols[:, 3].tolist() == [6, 7, 8, 10, 11, 12, 14, 15, 16]
    strided = viz.im2col_matrix(np.arange(25.0).reshape(5, 5), kernel_size=2, stride=3,
                                padding=1)  # fmt: skip
    assert strided.shape == (4, 4) and strided[:, 0].tolist() == [0, 0, 0, 0.0]


def test_im2col_picture(tmp_path):
    import matplotlib  # noqa: F401  (installed by make test)
    path = tmp_path / "im2col.png"
    viz.draw_im2col(path=str(path))
    from PIL import Image

    with Image.open(path) as im:
        assert 800 <= im.size[0] <= 1000  # made for a 900-pixel lesson column
    with pytest.raises(ValueError, match="bigger than the image"):
        viz.draw_im2col(size=2, kernel_size=3)
