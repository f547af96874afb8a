"""``viz.draw_anatomy``: the labels show the tensor's real numbers (ours and PyTorch's), in
PyTorch's names and Paddle's, and the picture fits the 900 px column."""

import re

import pytest

import tinygrad_edu as tg
from tinygrad_edu import viz
from tinygrad_edu.viz.anatomy import LABELS
from tinygrad_edu.viz.style import MAX_WIDTH_PX, natural_size

from .conftest import needs_dot

torch = pytest.importorskip("torch")


def _views(lib):
    b = lib.arange(12.0).reshape(3, 4).clone().requires_grad_()
    return {"slice": (b * 1)[1:, ::2], "transpose": (b * 1).transpose(0, 1), "leaf": b,
            "expand": (b * 1)[:1].expand(2, 4)}  # fmt: skip


@pytest.mark.parametrize("case", ["slice", "transpose", "leaf", "expand"])
def test_the_record_reads_the_same_numbers_from_ours_and_from_torch(case):
    ours, theirs = viz.anatomy_record(_views(tg)[case]), viz.anatomy_record(_views(torch)[case])
    for key in ("shape", "strides", "offset", "cells", "dtype", "contiguous", "grad_fn",
                "output_nr", "version", "is_view", "base", "creation_meta", "requires_grad"):
        assert ours[key] == theirs[key], key
    assert ours["storage"]["numel"] == theirs["storage"]["numel"] == 12
    assert ours["storage"]["values"] == theirs["storage"]["values"]


def _cell_text(source, label):
    """The value printed beside ``label`` in a box of the DOT source."""
    pattern = re.escape(label) + r"</FONT></TD><TD[^>]*><FONT[^>]*>([^<]*)</FONT>"
    return re.search(pattern, source).group(1)


@pytest.mark.parametrize("lib", [tg, torch], ids=["ours", "torch"])
def test_the_labels_show_the_real_strides_offset_and_version(lib):
    b = lib.zeros(4, 6)
    v = b[1:, 2::2]
    v.add_(1)  # the version counter, shared with the base, goes to 1
    source = viz.draw_anatomy(v).source
    n = LABELS["pytorch"]
    assert _cell_text(source, n["strides"]) == "[" + ", ".join(map(str, v.stride())) + "]"
    assert _cell_text(source, n["offset"]) == str(v.storage_offset()) == "8"
    assert _cell_text(source, n["version"]) == str(v._version) == "1"
    assert _cell_text(source, n["creation_meta"]) == "DEFAULT"
    assert "DifferentiableViewMeta" in source and "TensorImpl" in source
    p = LABELS["paddle"]
    paddle = viz.draw_anatomy(v, names="paddle").source
    assert _cell_text(paddle, p["strides"]) == "[6, 2]"
    assert _cell_text(paddle, p["requires_grad"]) == "True"  # stop_gradient_: no grad needed
    for name in ("AutogradMeta", "grad_node_", "out_slot_id_", "out_rank_", "persistable_",
                 "retain_grads_", "DenseTensor", "holder_"):
        assert name in paddle, name


def test_paddle_names_show_persistable_and_the_grad_node():
    w = tg.nn.Parameter(tg.zeros(2, 2))
    source = viz.draw_anatomy(w, names="paddle").source
    assert _cell_text(source, "persistable_") == "True"
    assert _cell_text(source, "stop_gradient_") == "False"


def test_bad_names_and_inputs_are_refused():
    with pytest.raises(ValueError, match="pytorch' or 'paddle"):
        viz.draw_anatomy(tg.zeros(2), names="jax")
    with pytest.raises(TypeError, match="expected a tensor"):
        viz.draw_anatomy([1, 2])


@needs_dot
@pytest.mark.parametrize("names", ["pytorch", "paddle"])
def test_the_drawing_fits_the_column_unscaled(names):
    for x in (_views(tg)["slice"], _views(torch)["expand"], tg.arange(40.0)[3:]):
        g = viz.draw_anatomy(x, names=names)
        width, height = natural_size(g)
        assert 0 < width <= MAX_WIDTH_PX  # laid out to fit: not shrunk, so it stays legible
        svg = g.pipe(format="svg").decode()
        assert float(re.search(r'<svg[^>]*?width="([\d.]+)pt"', svg).group(1)) / 0.75 <= 901
