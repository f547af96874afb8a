r"""A picture of **im2col**: how a convolution becomes one matrix product.

:func:`draw_im2col` numbers the pixels of a small image, lays every receptive field out as a
column (exactly what ``tinygrad_edu.ops.conv.im2col`` computes, so the picture is the code's),
and shows the product with the kernel as a row; a last panel shows col2im, the way back:
adding each column onto the pixels it came from, where overlapping windows add up (the count
of windows that cover each pixel).

>>> fig = draw_im2col()  # doctest: +SKIP
>>> fig.savefig("im2col.png")  # doctest: +SKIP
"""

from __future__ import annotations

import numpy as np  # display only: the picture's numbers

__all__ = ["draw_im2col", "im2col_matrix"]

_COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04",
           "#db2777", "#4b5563"]  # fmt: skip


def im2col_matrix(image, kernel_size=3, stride=1, padding=0):
    """The im2col matrix of one single-channel ``image`` (H, W): shape
    ``(kh*kw, OH*OW)``, one column per window, in the library's own layout.

    >>> im2col_matrix(np.arange(1.0, 10.0).reshape(3, 3), kernel_size=2)
    array([[1., 2., 4., 5.],
           [2., 3., 5., 6.],
           [4., 5., 7., 8.],
           [5., 6., 8., 9.]])
    """
    from ..ops.conv import im2col, pair  # noqa: PLC0415

    k, s = pair("im2col", "kernel_size", kernel_size), pair("im2col", "stride", stride)
    p = pair("im2col", "padding", padding, minimum=0)
    x = np.asarray(image, dtype=np.float64)[None, None]
    cols = im2col(np, x, k, s, p, (1, 1))  # (C, kh, kw, N, OH, OW)
    return cols.reshape(k[0] * k[1], -1)


def _grid(ax, values, title, colors=None, fmt="{:g}", outline=()):
    """A table of numbers as coloured squares; ``outline`` = (row, col, h, w, colour) boxes."""
    from matplotlib.patches import Rectangle  # noqa: PLC0415

    rows, cols = values.shape
    for r in range(rows):
        for c in range(cols):
            face = colors[r][c] if colors is not None else "#f8fafc"
            ax.add_patch(Rectangle((c, rows - 1 - r), 1, 1, facecolor=face, edgecolor="#94a3b8",
                                   lw=0.8))  # fmt: skip
            v = values[r, c]
            text = "" if np.isnan(v) else fmt.format(v)
            ax.text(c + 0.5, rows - 0.5 - r, text, ha="center", va="center", fontsize=11)
    for i, (r, c, h, w, color) in enumerate(outline):
        pad = 0.06 + 0.05 * (i % 4)
        ax.add_patch(Rectangle((c + pad, rows - r - h + pad), w - 2 * pad, h - 2 * pad,
                               fill=False, edgecolor=color, lw=2.2))  # fmt: skip
    ax.set_xlim(-0.1, cols + 0.1)
    ax.set_ylim(-0.1, rows + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=12)


def _tint(color, alpha=0.25):
    from matplotlib.colors import to_rgb  # noqa: PLC0415

    r, g, b = to_rgb(color)
    return (1 - alpha + alpha * r, 1 - alpha + alpha * g, 1 - alpha + alpha * b)


def draw_im2col(size: int = 4, kernel_size: int = 3, stride: int = 1, path: str | None = None):
    """Draw im2col for a ``size`` x ``size`` image (pixels numbered 1, 2, ...) and a square
    kernel: the windows on the image, the column matrix, the product with the kernel as a row,
    and col2im's overlap counts. Returns the matplotlib ``Figure`` (and saves it to ``path``
    when given, at 120 dpi: about 900 pixels wide).

    Raises:
        ImportError: when matplotlib is missing (``pip install "tinygrad_edu[notebooks]"``).
        ValueError: when the kernel does not fit the image or more than 9 windows result.
    """
    try:
        import matplotlib  # noqa: PLC0415

        if path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        raise ImportError('draw_im2col needs matplotlib: pip install "tinygrad_edu[notebooks]"'
                          ) from None  # fmt: skip
    if kernel_size > size:
        raise ValueError(f"draw_im2col: kernel {kernel_size} is bigger than the image {size}")
    image = np.arange(1.0, size * size + 1).reshape(size, size)
    cols = im2col_matrix(image, kernel_size, stride)
    out = (size - kernel_size) // stride + 1
    n = out * out
    if n > len(_COLORS):
        raise ValueError(f"draw_im2col: {n} windows are too many to draw; use a smaller image")
    k = kernel_size
    windows = [((i // out) * stride, (i % out) * stride, k, k, _COLORS[i]) for i in range(n)]
    counts = np.zeros_like(image)
    for r, c, *_ in windows:
        counts[r : r + k, c : c + k] += 1

    fig = plt.figure(figsize=(9, 6.2), dpi=100)
    grid = fig.add_gridspec(2, 3, width_ratios=[size, n + 1, size], height_ratios=[k * k, 3.2],
                            wspace=0.3, hspace=0.12)  # fmt: skip
    ax = fig.add_subplot(grid[0, 0])
    _grid(ax, image, f"input {size}×{size}:\n{n} windows of {k}×{k}", outline=windows)
    ax = fig.add_subplot(grid[0, 1])
    tints = [[_tint(_COLORS[j]) for j in range(n)] for _ in range(k * k)]
    _grid(ax, cols, f"im2col: cols ({k * k}×{n}),\none column per window", colors=tints)
    ax = fig.add_subplot(grid[0, 2])
    shades = [[_tint("#6d28d9", 0.12 * v) for v in row] for row in counts]
    _grid(ax, counts, "col2im adds columns back:\nwindows covering each pixel", colors=shades)
    ax = fig.add_subplot(grid[1, :])
    ax.axis("off")
    text = (
        f"convolution = one matrix product:  w (1×{k * k}) @ cols ({k * k}×{n}) = y (1×{n}),"
        f" reshaped to {out}×{out}\n"
        f"C channels, O filters, N images:    W (O × C·{k * k}) @ cols (C·{k * k} × N·{n})\n"
        "backward:   ∂L/∂W = G @ colsᵀ      ∂L/∂x = col2im(Wᵀ @ G)   (overlaps add up)"
    )
    ax.text(0.0, 0.85, text, va="top", ha="left", fontsize=10.5, family="monospace",
            transform=ax.transAxes, linespacing=1.7)  # fmt: skip
    fig.subplots_adjust(top=0.84)
    fig.suptitle("im2col: every receptive field becomes a column", fontsize=14, y=0.99)
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
        plt.close(fig)
    return fig
