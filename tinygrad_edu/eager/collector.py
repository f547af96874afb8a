"""Long graphs and Python's cycle collector.

NOTE [Long graphs and the cycle collector]
    Python frees most objects by reference counting; its cycle collector only looks for
    unreachable cycles. It runs when allocations outnumber deallocations, and now and then a
    *full* collection walks every tracked object in the process. A graph being recorded is
    the worst case for it: every op adds a node, a tensor, edge tuples, all long-lived until
    ``backward()``, so a 100,000-op chain triggers full collections again and again (measured:
    about half of the chain's forward time, see docs/performance.md). Those walks find
    nothing: the graph holds no cycles (NOTE [Saved outputs and reference cycles] in
    ``node.py``). PyTorch never pays this because its graph lives in C++, out of the
    collector's sight.

    So every ``FREEZE_EVERY`` recorded nodes the dispatcher calls :func:`graph_grew`, which
    moves everything tracked so far into the collector's permanent generation
    (``gc.freeze()``, a constant-time list splice): later collections skip it, while
    reference counting still frees it as usual. ``backward()`` calls :func:`thaw` when it
    returns (``gc.unfreeze()``), and so does the ``MAX_FREEZES``-th freeze without a
    backward in between (a graph that is never differentiated), so the collector never
    looks away for long.

    What it costs: garbage *cycles* made while a long graph is recorded (by any code of the
    program) are collected after the next ``backward()`` instead of during the recording,
    or after about a million recorded nodes at most. A program that freezes objects itself
    (``gc.freeze()`` before forking workers) is left alone: nothing here freezes while
    ``gc.get_freeze_count()`` says someone else did, or while the collector is disabled.
    Short graphs (a training step of a few dozen ops) rarely reach a freeze at all.
"""

from __future__ import annotations

import gc

__all__ = ["FREEZE_EVERY", "MAX_FREEZES", "graph_grew", "thaw", "freezes"]

FREEZE_EVERY = 1 << 14  # recorded nodes between freezes (a power of two: a mask tests it)
MAX_FREEZES = 64  # freezes without a backward before the collector sees everything again


class _Frozen:
    count = 0  # freezes made here since the last thaw


def freezes() -> int:
    """How many freezes were made here since the last :func:`thaw` (0: nothing frozen)."""
    return _Frozen.count


def graph_grew() -> None:
    """``FREEZE_EVERY`` more nodes were recorded: freeze what is tracked (see the NOTE)."""
    if _Frozen.count >= MAX_FREEZES:
        thaw()  # a graph that is never differentiated: let one full collection see it all
        return
    if not gc.isenabled() or (_Frozen.count == 0 and gc.get_freeze_count()):
        return  # the program manages the collector itself
    gc.freeze()
    _Frozen.count += 1


def thaw() -> None:
    """Give what was frozen here back to the collector (called when ``backward()`` returns)."""
    if _Frozen.count:
        _Frozen.count = 0
        gc.unfreeze()
