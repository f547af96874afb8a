"""``tinygrad-edu demo`` (``make demo``): the project in one command.

1. Draws the seed example ``D = (A + B) * C; E = D @ (A + C)`` as a symbolic tensor graph and
   as an eager backward graph, and the backward stepper (the ``render`` subcommand).
2. Checks that the two engines compute the same gradients for it.
3. Trains an MLP (64-128-10, ReLU, Adam with a cosine schedule) on the bundled 8x8 digits
   with a text progress bar, saves a plot of the loss and the test accuracy, and saves the
   model as an ``.npz`` file.
4. Trains a small CNN (two conv/batch-norm/ReLU/max-pool blocks and a linear layer) on the same
   digits in **both engines from the same weights** (eager modules; one symbolic training
   graph with Adam and batch norm's running statistics as update nodes), and plots both
   engines' curves beside the MLP's accuracy.
5. Prints where every file went (and writes ``summary.json`` with the numbers).

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

__all__ = ["add_arguments", "run", "train_digits", "train_digits_cnn", "digits_cnn",
           "compare_engines_on_seed"]  # fmt: skip


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
    parser.add_argument("--cnn-epochs", type=int, default=10,
                        help="CNN epochs in each engine (default: 10; 0 skips the CNN)")


# -- 1. drawings ------------------------------------------------------------------------------
def _render(out_dir: str) -> list[str]:
    """Draw the seed example through the ``render`` subcommand; [] with a message if it can't."""
    from tinygrad_edu.cli import main  # noqa: PLC0415  (render is the library's command)

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


# -- 4. a CNN in both engines ------------------------------------------------------------------
_CNN_LR, _BN_MOMENTUM = 0.005, 0.1


def digits_cnn():
    """The demo's CNN for 1x8x8 digits, as eager modules: two blocks of conv 3x3 (pad 1),
    batch norm, ReLU and 2x2 max-pool (1 -> 32 -> 64 channels, 8x8 -> 4x4 -> 2x2), then a
    linear layer 256 -> 10.

    >>> import tinygrad_edu as tg
    >>> digits_cnn()(tg.zeros(5, 1, 8, 8)).shape
    (5, 10)
    """
    from tinygrad_edu import nn  # noqa: PLC0415

    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(256, 10),
    )  # fmt: skip


def _symbolic_cnn(state: dict, device: str, lr_var):
    """The same CNN as one symbolic training graph, its weights starting from ``state`` (the
    eager model's ``state_dict``): returns ``(x, y, step, predict, scope)``.

    The training step is forward (batch norm with the batch's statistics), ``gradients()``,
    Adam's update nodes and, for each batch norm, two more update nodes that move the running
    mean and (unbiased) variance as PyTorch does; ``predict`` runs the network with the running
    statistics (evaluation)."""
    from tinygrad_edu import symbolic as S  # noqa: PLC0415
    from tinygrad_edu.symbolic import training as st  # noqa: PLC0415

    scope = st.Scope(device=device)
    P = {k: scope.parameter(k, v) for k, v in state.items() if "running" not in k and
         "num_batches" not in k}  # fmt: skip
    R = {k: scope.variable(k, v) for k, v in state.items() if "running" in k}
    x, y = S.Variable("x", dtype="float32"), S.Variable("y", dtype="float32")
    stat_updates = []

    def block(h, conv, bn, training):
        h = S.conv2d(h, P[f"{conv}.weight"], P[f"{conv}.bias"], padding=1)
        rm, rv = R[f"{bn}.running_mean"], R[f"{bn}.running_var"]
        if training:  # the running statistics follow the batch's, as update nodes
            mean = S.reduce_mean(h, axis=(0, 2, 3))
            centred = h - S.reshape(mean, (1, -1, 1, 1))
            n = S.apply_op("numel", h, axis=(0, 2, 3))
            var = S.reduce_mean(centred * centred, axis=(0, 2, 3)) * (n / (n - 1))
            m = _BN_MOMENTUM
            stat_updates.append(st.Update(rm, (1 - m) * rm + m * mean))
            stat_updates.append(st.Update(rv, (1 - m) * rv + m * var))
        stats = (None, None) if training else (rm, rv)
        h = S.batch_norm(h, *stats, P[f"{bn}.weight"], P[f"{bn}.bias"], training=training,
                         ndim=4)  # fmt: skip
        return S.max_pool2d(S.relu(h), 2)

    def net(training):
        h = block(block(x, "0", "1", training), "4", "5", training)
        h = S.reshape(h, (-1, 256))
        return S.matmul(h, P["9.weight"], trans_B=True) + P["9.bias"]

    loss = S.softmax_cross_entropy(net(True), y)
    updates = st.Adam(lr=lr_var).minimize(loss, list(P.values())) + stat_updates
    step = st.TrainingExecutor([loss], updates)
    predict = st.TrainingExecutor([net(False)], scope=scope)
    return x, y, step, predict, scope


def train_digits_cnn(
    epochs: int = 10, device: str = "cpu", seed: int = 0, batch_size: int = 64,
    lr: float = _CNN_LR, progress: bool = True,
) -> dict:
    """Train :func:`digits_cnn` on the digits in both engines, in lockstep: the same initial
    weights, the same batches, Adam with the same cosine schedule.

    Returns:
        dict with ``model`` (the eager network), ``test_accuracy`` (eager, final),
        ``histories`` (``{"eager": ..., "symbolic": ...}``, each with ``epoch_loss`` and
        ``test_accuracy`` per epoch), ``max_weight_diff`` (largest difference between the two
        engines' final weights) and ``seconds`` (per engine).
    """
    import tinygrad_edu as tg  # noqa: PLC0415
    from tinygrad_edu import backend, optim  # noqa: PLC0415
    from tinygrad_edu.data import DataLoader, load_digits  # noqa: PLC0415
    from tinygrad_edu.nn.functional import cross_entropy  # noqa: PLC0415
    from tinygrad_edu.symbolic import Variable  # noqa: PLC0415

    Xtr, ytr = load_digits("train", seed=seed)
    Xte, yte = load_digits("test", seed=seed)
    Xtr, Xte = Xtr.reshape(-1, 1, 8, 8), Xte.reshape(-1, 1, 8, 8)
    tg.manual_seed(seed)
    model = digits_cnn().to(device)
    lr_var = Variable("lr", shape=(), dtype="float32")
    x, y, step, predict, scope = _symbolic_cnn(model.state_dict(), device, lr_var)
    opt = optim.Adam(model.parameters(), lr=lr)
    loader = DataLoader(Xtr, ytr, batch_size=batch_size, seed=seed, device=device)
    xp = backend.get_namespace(device)
    onehot, x_test = xp.eye(10, dtype=xp.float32), xp.asarray(Xte)
    histories = {e: {"epoch_loss": [], "test_accuracy": []} for e in ("eager", "symbolic")}
    seconds = {"eager": 0.0, "symbolic": 0.0}
    bar = _Progress(epochs * len(loader)) if progress else None
    for epoch in range(epochs):
        rate = lr * 0.5 * (1 + math.cos(math.pi * epoch / epochs))
        opt.param_groups[0]["lr"] = rate
        losses = {"eager": [], "symbolic": []}
        model.train()
        for i, (xb, yb) in enumerate(loader):
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            losses["eager"].append(loss.item())
            t1 = time.perf_counter()
            feed = {x: xb._data, y: onehot[yb._data], lr_var: _np.float32(rate)}
            losses["symbolic"].append(float(step.run(feed)[0]))
            seconds["eager"] += t1 - t0
            seconds["symbolic"] += time.perf_counter() - t1
            if bar is not None and i % 4 == 0:
                text = f"CNN epoch {epoch + 1}/{epochs} loss {losses['eager'][-1]:.3f}"
                bar.update(epoch * len(loader) + i + 1, text)
        model.eval()
        with tg.no_grad():
            eager_pred = backend.to_numpy(model(tg.tensor(x_test))._data).argmax(1)
        sym_pred = predict.run({x: x_test})[0].argmax(1)
        for engine, pred in (("eager", eager_pred), ("symbolic", sym_pred)):
            histories[engine]["epoch_loss"].append(float(_np.mean(losses[engine])))
            histories[engine]["test_accuracy"].append(float((pred == yte).mean()))
        if bar is not None:
            accs = " ".join(f"{e} {histories[e]['test_accuracy'][-1]:.3f}" for e in histories)
            bar.update((epoch + 1) * len(loader), f"CNN epoch {epoch + 1}/{epochs} test acc "
                                                  f"{accs}", final=True)  # fmt: skip
    state = model.state_dict()
    diff = max(float(_np.max(_np.abs(state[k].numpy() - scope[k]))) for k in scope.variables
               if k in state)  # fmt: skip
    return {"model": model, "test_accuracy": histories["eager"]["test_accuracy"][-1],
            "histories": histories, "max_weight_diff": diff, "seconds": seconds}  # fmt: skip


def _plot_cnn(cnn: dict, mlp_history: dict | None, path: str) -> str | None:
    """The CNN's loss and test accuracy per epoch in both engines, the MLP's accuracy beside."""
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
        from matplotlib.ticker import MaxNLocator  # noqa: PLC0415
    except ImportError:
        print("   no plot: matplotlib is not installed (pip install matplotlib)")
        return None
    hist = cnn["histories"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    styles = {"eager": ("tab:purple", "o-", 6), "symbolic": ("tab:orange", "x--", 7)}
    for engine, (color, fmt, ms) in styles.items():
        epochs = _np.arange(1, len(hist[engine]["epoch_loss"]) + 1)
        ax1.plot(epochs, hist[engine]["epoch_loss"], fmt, color=color, ms=ms,
                 label=f"CNN, {engine} engine")  # fmt: skip
        ax2.plot(epochs, _np.array(hist[engine]["test_accuracy"]) * 100, fmt, color=color,
                 ms=ms, label=f"CNN, {engine} engine")  # fmt: skip
    if mlp_history is not None:
        acc = _np.array(mlp_history["test_accuracy"]) * 100
        ax2.plot(_np.arange(1, len(acc) + 1), acc, "s-", color="tab:green", ms=3, alpha=0.6,
                 label="MLP (eager)")  # fmt: skip
    ax1.set_yscale("log")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("mean training loss (log scale)")
    ax1.set_title("CNN training loss: the two engines agree")
    ax1.legend()
    ax1.grid(alpha=0.3)
    ax2.axhline(98, color="gray", ls="--", lw=1, label="98% target")
    final = 100 * cnn["test_accuracy"]
    ax2.set_title(f"Test accuracy (CNN final {final:.1f}%)")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("accuracy (%)")
    ax2.set_ylim(85, 100.5)
    for ax in (ax1, ax2):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax2.legend(loc="lower right")
    ax2.grid(alpha=0.3)
    fig.suptitle("CNN (2 x conv-BN-ReLU-pool, linear) on the 8x8 digits, eager and symbolic "
                 "from the same weights")  # fmt: skip
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


# -- the subcommand ----------------------------------------------------------------------------
def run(args) -> int:
    """Run the demo; returns 0 on success, 1 when the engines disagree or the device is
    missing."""
    from tinygrad_edu import backend  # noqa: PLC0415

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
    cnn_epochs = getattr(args, "cnn_epochs", 10)
    if cnn_epochs > 0:
        print(f"== 4. training a CNN on the 8x8 digits in both engines from the same weights "
              f"({cnn_epochs} epochs, Adam lr={_CNN_LR} cosine, batch {args.batch_size})")
        cnn = train_digits_cnn(cnn_epochs, device, args.seed, args.batch_size)
        accs = {e: h["test_accuracy"][-1] for e, h in cnn["histories"].items()}
        print(f"   test accuracy: eager {100 * accs['eager']:.1f}%, symbolic "
              f"{100 * accs['symbolic']:.1f}% (MLP {100 * acc:.1f}%); largest weight "
              f"difference between the engines {cnn['max_weight_diff']:.1e}; "
              f"{cnn['seconds']['eager']:.1f} s eager, {cnn['seconds']['symbolic']:.1f} s "
              "symbolic" + ("" if accs["eager"] >= 0.98 else "  (below 98%: try more "
                                                               "--cnn-epochs)"))  # fmt: skip
        cnn_plot = _plot_cnn(cnn, result["history"], os.path.join(out, "training_cnn.png"))
        cnn_path = cnn["model"].save(os.path.join(out, "digits_cnn.npz"))
        files += [p for p in (cnn_plot, cnn_path) if p]
        summary["cnn"] = {"test_accuracy": accs, "histories": cnn["histories"],
                          "max_weight_diff": cnn["max_weight_diff"], "epochs": cnn_epochs,
                          "train_seconds": cnn["seconds"]}  # fmt: skip
    summary_path = os.path.join(out, "summary.json")
    with open(summary_path, "w") as f:
        json.dump(summary, f, indent=1)
    files.append(summary_path)

    print("== 5. files")
    for p in files:
        print(f"   {p}")
    print("   reload the model: net.load_state_dict(tinygrad_edu.nn.load("
          f"{model_path!r}))")  # fmt: skip
    return 0 if agree else 1
