"""The eager drawing says where each tensor and backward op lives when it is off the CPU."""

import re

import tinygrad_edu as tg
from tinygrad_edu import viz


def test_drawing_names_devices_and_the_move():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    w.name = "w"
    loss = ((w * 3).to("sim:0") ** 2).sum()
    src = viz.draw(loss).source
    assert "ToCopyBackward0" in src and "grad sim:0 → cpu" in src
    # output, SumBackward0, PowBackward0 live on sim:0; the leaf w and w*3's MulBackward0 do not
    assert len(re.findall(r"on sim:0", src)) == 3
    assert "on cpu" not in src


def test_a_cpu_only_drawing_names_no_device():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    src = viz.draw((x * x).sum()).source
    assert "on cpu" not in src and "→" not in src


def test_a_move_to_another_simulated_device():
    x = tg.tensor([1.0], requires_grad=True, device="sim:1")
    src = viz.draw((x.to("sim:0") * 2).sum()).source
    assert "grad sim:0 → sim:1" in src and "on sim:1" in src
