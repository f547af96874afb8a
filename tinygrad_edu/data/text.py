r"""A bundled text for character-level language models.

``shakespeare.txt`` holds the dialogue of three of Shakespeare's plays (Macbeth, Julius Caesar
and The Tempest; public domain), about 297,000 characters over 61 distinct ones, written as
``Speaker:`` lines followed by the speech, stage directions removed: the same shape as the
"tiny Shakespeare" text that courses train their first GPT on, small enough to ship.

>>> from tinygrad_edu.data import load_shakespeare
>>> text = load_shakespeare()
>>> len(text) > 250_000, len(sorted(set(text)))
(True, 61)
>>> print(text[:43])
First Witch:
When shall we three meet again
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["load_shakespeare"]

_PATH = Path(__file__).with_name("shakespeare.txt")


def load_shakespeare() -> str:
    """The bundled text (see the module docstring), as one string."""
    return _PATH.read_text(encoding="utf-8")
