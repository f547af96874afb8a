"""Parameter combinations of the layer ops, shared by the central-difference cases
(``tests/opinfo/grad_layers.py``) and the comparisons with PyTorch (``test_conv_torch.py``)."""

# (N, C, H, W, O, kernel, stride, padding, dilation, groups): odd sizes, every parameter
CONV_CONFIGS = [
    (2, 2, 4, 5, 3, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (1, 2, 5, 4, 2, (2, 3), (2, 1), (0, 1), (1, 1), 1),
    (1, 2, 5, 5, 2, (2, 2), (1, 2), (1, 0), (2, 1), 2),
    (2, 3, 3, 3, 3, (3, 1), (2, 2), (2, 0), (1, 1), 3),
    (1, 1, 3, 4, 2, (3, 4), (1, 1), (0, 0), (1, 1), 1),  # the kernel covers the whole input
]

# (shape, kernel, stride, padding, dilation, ceil_mode)
POOL_CONFIGS = [
    ((2, 2, 4, 4), (2, 2), None, (0, 0), (1, 1), False),
    ((1, 2, 5, 6), (3, 3), (2, 2), (1, 1), (1, 1), False),
    ((1, 1, 5, 5), (2, 3), (2, 1), (1, 0), (1, 1), True),
    ((2, 1, 6, 5), (2, 2), (1, 2), (0, 1), (2, 1), True),
    ((1, 3, 3), (3, 2), (1, 1), (1, 0), (1, 1), False),  # unbatched (C, H, W)
]
