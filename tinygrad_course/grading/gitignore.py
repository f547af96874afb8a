"""``.gitignore`` rules, for copying a repository the way git sees it.

The patterns of git's documentation: blank lines and ``#`` comments are skipped; ``!``
re-includes; a trailing ``/`` matches folders only; a pattern with a ``/`` anywhere but at
its end is anchored to the folder of its ``.gitignore``, one without matches a name at any
depth; ``*``, ``?`` and ``[...]`` match within one path segment and ``**`` across segments.
A ``.gitignore`` in a subfolder applies below it, after its parents' rules. As in git, a file
inside an ignored folder cannot be re-included.

>>> rules = Ignore()
>>> rules.add("", "build/\\n*.pyc\\n!keep.pyc\\n/out\\ndocs/**/tmp\\n")
>>> [p for p in ["build/x.py", "a/build/y", "m.pyc", "keep.pyc", "out", "a/out", "docs/a/b/tmp"]
...  if rules.ignored(p, is_dir=False)]
['m.pyc', 'out', 'docs/a/b/tmp']
>>> rules.ignored("a/build", is_dir=True), rules.ignored("a/build", is_dir=False)
(True, False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Ignore"]


def _segment(pattern: str) -> str:
    """Regex for one path segment of a glob (no ``/`` inside)."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = j
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _compile(pattern: str) -> re.Pattern:
    parts = pattern.split("/")
    regex = []
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if part == "**":
            regex.append("(?:.*/)?" if not last else ".*")
        else:
            regex.append(_segment(part) + ("" if last else "/"))
    return re.compile("".join(regex) + r"\Z")


@dataclass
class _Rule:
    base: str  # the folder of its .gitignore ("" for the root), with a trailing "/"
    regex: re.Pattern
    anchored: bool
    negate: bool
    dir_only: bool


@dataclass
class Ignore:
    """The ``.gitignore`` rules of a tree; :meth:`add` each file's text, top down."""

    rules: list = field(default_factory=list)

    def add(self, folder: str, text: str) -> None:
        """Add the rules of ``folder/.gitignore`` (``folder`` relative, ``""`` for the root)."""
        base = folder.strip("/") + "/" if folder.strip("/") else ""
        for raw in text.splitlines():
            line = raw.rstrip()
            if raw.endswith("\\ "):
                line = raw[:-2] + " "
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            if line.startswith("\\"):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            self.rules.append(_Rule(base, _compile(line), anchored, negate, dir_only))

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether ``path`` (relative to the root, ``/``-separated) is ignored by the rules
        (its parent folders are the caller's business: walk top down and prune)."""
        result = False
        for rule in self.rules:
            if rule.dir_only and not is_dir:
                continue
            if not path.startswith(rule.base):
                continue
            rel = path[len(rule.base) :]
            target = rel if rule.anchored else rel.rsplit("/", 1)[-1]
            if rule.regex.match(target):
                result = not rule.negate
        return result
