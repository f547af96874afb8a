"""Without PyTorch installed, viz still imports and draws our graphs; its PyTorch entry points
say how to install PyTorch. (Run in a child process where ``import torch`` fails.)"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import sys
    sys.modules["torch"] = None  # `import torch` now raises ImportError, as if not installed
    import numpy as np
    import tinygrad_edu as tg
    from tinygrad_edu import viz
    from tinygrad_edu.viz.examples import seed, seed_inputs

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    assert "MulBackward0" in viz.draw(y).source
    assert viz.draw_backward_order(y).order[-1] == "AccumulateGrad"
    assert "cluster_symbolic" in viz.draw_both(seed, **seed_inputs()).source
    t = tg.from_dlpack(np.arange(3.0))  # DLPack needs no PyTorch either
    assert t.tolist() == [0.0, 1.0, 2.0]
    for call in (
        lambda: viz.draw_both(seed, forms=("eager", "torch"), **seed_inputs()),
        lambda: viz.torch_run_order(y),
    ):
        try:
            call()
        except ImportError as e:
            assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in str(e)
            assert "needs PyTorch" in str(e), e
        else:
            raise AssertionError("no ImportError")
    print("ok")
    """
)


def test_viz_without_pytorch():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
