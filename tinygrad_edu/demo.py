"""``tinygrad-edu demo`` (``make demo``): the project in one command.

1. Draws the seed example ``D = (A + B) * C; E = D @ (A + C)`` as a symbolic tensor graph and
   as an eager backward graph, and the backward stepper (the ``render`` subcommand).
2. Checks that the two engines compute the same gradients for it.
3. Trains an MLP (64-128-10, ReLU, Adam with a cosine schedule) on the bundled 8x8 digits
   with a text progress bar, saves a plot of the loss and the test accuracy, and saves the
   model as an ``.npz`` file.
4. Prints where every file went (and writes ``summary.json`` with the numbers).

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> add_arguments(p)
>>> p.parse_args(["--epochs", "3"]).epochs
3
"""

from __future__ import annotations

import json
import math
import os
import sys
import time

import numpy as _np  # comparing results and bookkeeping, not the model's math

__all__ = ["add_arguments", "run", "train_digits", "compare_engines_on_seed"]


def add_arguments(parser) -> None:
    """Arguments of the ``demo`` subcommand."""
    parser.add_argument("--out", default=os.path.join("out", "demo"),
                        help="output directory (default: out/demo)")  # fmt: skip
    parser.add_argument("--epochs", type=int, default=20, help="training epochs (default: 20)")
    parser.add_argument("--device", default="cpu",
                        help="cpu (default) or cuda (needs CuPy and a GPU)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--batch-size", type=int, default=64, help="mini-batch size (default: 64)")
    parser.add_argument("--lr", type=float, default=0.01, help="Adam learning rate (default: 0.01)")
    parser.add_argument("--hidden", type=int, default=128, help="hidden units (default: 128)")
    parser.add_argument("--no-render", action="store_true", help="skip the graph drawings")


# -- 1. drawings ------------------------------------------------------------------------------
def _render(out_dir: str) -> list[str]:
    """Draw the seed example through the ``render`` subcommand; [] with a message if it can't."""
    from .cli import main  # noqa: PLC0415

    print("== 1. the seed example, drawn in both forms (tinygrad-edu render)")
    try:
        code = main(["render", "--example", "seed", "--out", out_dir])
    except SystemExit as e:  # argparse's error: the render subcommand is not installed
        code = e.code
    except Exception as e:  # drawing is optional for the rest of the demo
        print(f"   skipped the drawings: {type(e).__name__}: {e}")
        return []
    if code:
        print("   skipped the drawings (the render subcommand is not available or failed; "
              "install Graphviz and the 'viz' extra: pip install -e '.[viz]')")  # fmt: skip
        return []
    return sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir) if f.startswith("seed_"))


# -- 2. both engines agree ---------------------------------------------------------------------
def _seed_example(A, B, C):
    D = (A + B) * C
    return D @ (A + C)


def compare_engines_on_seed(seed: int = 0) -> float:
    """Gradients of ``sum(E)`` for the seed example in both engines; the max abs difference.

    >>> compare_engines_on_seed() < 1e-5
    True
    """
    import tinygrad_edu as tg  # noqa: PLC0415
    from tinygrad_edu.symbolic import Executor, Variable, gradients  # noqa: PLC0415

    rng = _np.random.default_rng(seed)
    inputs = {k: rng.uniform(-1, 1, (3, 3)).astype(_np.float32) for k in "ABC"}
    leaves = {k: tg.tensor(v, requires_grad=True) for k, v in inputs.items()}
    _seed_example(**leaves).sum().backward()
    variables = {k: Variable(k, shape=(3, 3)) for k in inputs}
    grads = gradients(_seed_example(**variables), list(variables.values()))
    values = Executor(grads).run({variables[k]: v for k, v in inputs.items()})
    return max(float(_np.max(_np.abs(leaves[k].grad.numpy() - g)))
               for k, g in zip(inputs, values))  # fmt: skip


# -- 3. training -------------------------------------------------------------------------------
class _Progress:
    """A text progress bar on stderr (redrawn in place on a terminal, a line per epoch
    otherwise)."""

    def __init__(self, total: int, width: int = 30, stream=None):
        self.total, self.width = total, width
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()

    def update(self, done: int, text: str, final: bool = False) -> None:
        if not (self.tty or final):
            return
        filled = int(self.width * done / max(self.total, 1))
        bar = "#" * filled + "." * (self.width - filled)
        secs = time.perf_counter() - self.start
        line = f"[{bar}] {100 * done / max(self.total, 1):3.0f}% {text} {secs:5.1f}s"
        self.stream.write(("\r" + line) if self.tty else (line + "\n"))
        if self.tty and final:
            self.stream.write("\n")
        self.stream.flush()


def train_digits(epochs: int = 20, device: str = "cpu", seed: int = 0, batch_size: int = 64,
                 lr: float = 0.01, hidden: int = 128, progress: bool = True) -> dict:  # fmt: skip
    """Train a 64-hidden-10 MLP on the digits with Adam (cosine learning-rate schedule);
    returns the model and its history.

    Returns:
        dict with ``model``, ``test_accuracy`` (final), ``history`` (``step_loss`` per batch,
        ``epoch_loss``, ``test_accuracy`` per epoch) and ``seconds``.
    """
    import tinygrad_edu as tg  # noqa: PLC0415
    from tinygrad_edu import nn, optim  # noqa: PLC0415
    from tinygrad_edu.data import DataLoader, load_digits  # noqa: PLC0415

    Xtr, ytr = load_digits("train", seed=seed)
    Xte, yte = load_digits("test", seed=seed)
    tg.manual_seed(seed)
    model = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10)).to(device)
    opt = optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(Xtr, ytr, batch_size=batch_size, seed=seed, device=device)
    x_test = tg.tensor(Xte, device=device)
    history = {"step_loss": [], "epoch_loss": [], "test_accuracy": []}
    bar = _Progress(epochs * len(loader)) if progress else None
    start = time.perf_counter()
    for epoch in range(epochs):
        # a cosine schedule: the learning rate glides from lr to near 0, steadying the end
        opt.param_groups[0]["lr"] = lr * 0.5 * (1 + math.cos(math.pi * epoch / epochs))
        model.train()
        losses = []
        for i, (xb, yb) in enumerate(loader):
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if bar is not None and (i % 4 == 0):
                bar.update(epoch * len(loader) + i + 1, f"epoch {epoch + 1}/{epochs} "
                                                        f"loss {losses[-1]:.3f}")  # fmt: skip
        model.eval()
        with tg.no_grad():
            acc = float((model(x_test).numpy().argmax(1) == yte).mean())
        history["step_loss"] += losses
        history["epoch_loss"].append(float(_np.mean(losses)))
        history["test_accuracy"].append(acc)
        if bar is not None:
            mean_loss = history["epoch_loss"][-1]
            text = f"epoch {epoch + 1}/{epochs} loss {mean_loss:.3f} test acc {acc:.3f}"
            bar.update((epoch + 1) * len(loader), text, final=True)
    return {"model": model, "test_accuracy": history["test_accuracy"][-1], "history": history,
            "seconds": time.perf_counter() - start}  # fmt: skip


def _plot(history: dict, path: str, title: str = "") -> str | None:
    """Loss per step (and per epoch) and test accuracy per epoch, side by side, as a PNG."""
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
        import matplotlib.ticker  # noqa: PLC0415, F401
    except ImportError:
        print("   no plot: matplotlib is not installed (pip install matplotlib)")
        return None
    steps = _np.arange(1, len(history["step_loss"]) + 1)
    per_epoch = len(steps) / max(len(history["epoch_loss"]), 1)
    epochs = _np.arange(1, len(history["epoch_loss"]) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    ax1.plot(steps, history["step_loss"], color="tab:blue", alpha=0.35, lw=1, label="per batch")
    ax1.plot(epochs * per_epoch, history["epoch_loss"], "o-", color="tab:blue", ms=3,
             label="epoch mean")  # fmt: skip
    ax1.set_yscale("log")
    ax1.set_xlabel("training step (batch)")
    ax1.set_ylabel("cross-entropy loss (log scale)")
    ax1.set_title("Training loss")
    ax1.legend()
    ax1.grid(alpha=0.3)
    acc = _np.array(history["test_accuracy"]) * 100
    ax2.plot(epochs, acc, "o-", color="tab:green", ms=4, label="test accuracy")
    ax2.axhline(95, color="gray", ls="--", lw=1, label="95% target")
    ax2.set_xlabel("epoch")
    ax2.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax2.set_ylabel("accuracy (%)")
    ax2.set_title(f"Test accuracy (final {acc[-1]:.1f}%)")
    ax2.set_ylim(min(80.0, float(acc.min()) - 2), 100)
    ax2.legend(loc="lower right")
    ax2.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


# -- the subcommand ----------------------------------------------------------------------------
def run(args) -> int:
    """Run the demo; returns 0 on success, 1 when the engines disagree or the device is
    missing."""
    from . import backend  # noqa: PLC0415

    out = args.out
    device = getattr(args, "device", "cpu") or "cpu"
    if backend.parse_device(device).type == "cuda" and not backend.cuda_available():
        print(f"error: --device {device} needs CuPy and a visible NVIDIA GPU; install CuPy with "
              f"{backend.GPU_INSTALL_HINT} or use --device cpu")  # fmt: skip
        return 1
    os.makedirs(out, exist_ok=True)
    files = [] if getattr(args, "no_render", False) else _render(out)

    print("== 2. both engines on the seed example: gradients of sum(E) w.r.t. A, B, C")
    diff = compare_engines_on_seed(args.seed)
    agree = diff < 1e-4
    print(f"   max |eager - symbolic| = {diff:.2e}  ({'agree' if agree else 'DISAGREE'})")

    print(f"== 3. training an MLP 64-{args.hidden}-10 on the 8x8 digits ({args.epochs} epochs, "
          f"Adam lr={args.lr} cosine, batch {args.batch_size}, device {device})")  # fmt: skip
    result = train_digits(args.epochs, device, args.seed, args.batch_size, args.lr, args.hidden)
    acc = result["test_accuracy"]
    print(f"   test accuracy {100 * acc:.1f}% after {result['seconds']:.1f} s"
          + ("" if acc >= 0.95 else "  (below 95%: try more --epochs)"))  # fmt: skip
    title = f"MLP 64-{args.hidden}-10 on the 8x8 digits (eager engine, Adam, cosine schedule)"
    plot = _plot(result["history"], os.path.join(out, "training.png"), title)
    model_path = result["model"].save(os.path.join(out, "digits_mlp.npz"))
    files += [p for p in (plot, model_path) if p]
    summary = {
        "engines_max_abs_diff": diff,
        "test_accuracy": acc,
        "train_seconds": result["seconds"],
        "epochs": args.epochs,
        "device": device,
        "history": result["history"],
    }
    summary_path = os.path.join(out, "summary.json")
    with open(summary_path, "w") as f:
        json.dump(summary, f, indent=1)
    files.append(summary_path)

    print("== 4. files")
    for p in files:
        print(f"   {p}")
    print("   reload the model: net.load_state_dict(tinygrad_edu.nn.load("
          f"{model_path!r}))")  # fmt: skip
    return 0 if agree else 1
