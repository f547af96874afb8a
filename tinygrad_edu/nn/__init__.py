"""Neural-network pieces on the eager engine."""

from . import functional

__all__ = ["functional"]
