"""tinygrad_edu: an educational autograd library.

Two engines over one op library: a symbolic engine (tensors are graph nodes, ops are edges)
in :mod:`tinygrad_edu.symbolic`, and an eager engine (backward ops are nodes) that is the
top-level API.
"""

__version__ = "0.1.0"
