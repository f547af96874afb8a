"""``tinygrad-edu render``: draw an example in both graph forms and animate its backward pass.

``tinygrad-edu render --example seed --out DIR`` writes ``seed_symbolic``, ``seed_eager`` and
``seed_both`` (PNG and SVG) and ``seed_backward.gif`` (the stepper), and prints each path.
"""

from __future__ import annotations

import os

from .examples import EXAMPLES

__all__ = ["add_arguments", "run", "render_example"]


def add_arguments(parser) -> None:
    """Arguments of the ``render`` subcommand."""
    parser.add_argument(
        "--example",
        choices=sorted(EXAMPLES),
        default="seed",
        help="which example to draw (default: seed)",
    )
    parser.add_argument("--out", default="renders", help="output directory (default: renders)")
    parser.add_argument(
        "--formats",
        nargs="+",
        default=["png", "svg"],
        help="image formats for the drawings (default: png svg)",
    )
    parser.add_argument("--no-gif", action="store_true", help="skip the stepper animation")


def render_example(name: str, out: str, formats=("png", "svg"), gif: bool = True) -> list[str]:
    """Write the drawings of example ``name`` into ``out``; returns the written paths."""
    import tinygrad_edu as tg  # noqa: PLC0415

    from .draw import check_dot, draw_both, draw_eager, draw_symbolic, render  # noqa: PLC0415
    from .stepper import BackwardStepper  # noqa: PLC0415

    check_dot()
    fn, make_inputs = EXAMPLES[name]
    inputs = make_inputs()
    os.makedirs(out, exist_ok=True)

    from ..symbolic import Variable, gradients  # noqa: PLC0415

    variables = {k: Variable(k, shape=v.shape, dtype=v.dtype.name) for k, v in inputs.items()}
    y = fn(**variables)
    feed = {variables[k]: v for k, v in inputs.items()}
    grads = gradients(y, list(variables.values()))
    labels = {g: f"∂{y.name}/∂{k}" for k, g in zip(variables, grads)}
    sym = draw_symbolic([y, *grads], feed=feed, labels=labels)
    leaves = {k: tg.tensor(v, requires_grad=True) for k, v in inputs.items()}
    for k, t in leaves.items():
        t.name = k
    loss = fn(**leaves).sum()
    loss.name = "loss"
    stepper = BackwardStepper.record(loss)  # fills .grad, so the eager drawing shows it
    eager = draw_eager(loss, show_saved=True)
    both = draw_both(fn, **inputs)
    paths = []
    for stem, graph in (("symbolic", sym), ("eager", eager), ("both", both)):
        for fmt in formats:
            paths.append(render(graph, os.path.join(out, f"{name}_{stem}.{fmt}"), format=fmt))
    if gif:
        paths.append(stepper.save_gif(os.path.join(out, f"{name}_backward.gif")))
    return paths


def run(args) -> int:
    """Render the chosen example and print the paths written."""
    from .draw import DotNotFoundError  # noqa: PLC0415

    try:
        paths = render_example(args.example, args.out, args.formats, gif=not args.no_gif)
    except DotNotFoundError as e:
        print(f"error: {e}")
        return 1
    for p in paths:
        print(p)
    return 0
