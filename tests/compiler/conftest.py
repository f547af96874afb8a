"""Fixtures of the tg.compile tests."""

import pytest

from tinygrad_edu.eager import dispatch


@pytest.fixture
def eager_ops(monkeypatch):
    """Counts the results the eager dispatcher computes (one per op it runs)."""
    count = [0]
    init = dispatch._init

    def counting(*a, **k):
        count[0] += 1
        return init(*a, **k)

    monkeypatch.setattr(dispatch, "_init", counting)
    return count
