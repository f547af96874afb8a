"""Which uploaded file is which: mapping a submission onto the files students submit.

Students upload single files, a folder, or their whole repository, at any depth. Each file
to submit (a path of the manifest, like ``tinygrad_edu/eager/engine.py``) is matched by path:

1. **Full path**: an uploaded file whose path ends with the whole manifest path
   (``my-repo/tinygrad_edu/eager/engine.py``). Several at different depths: the shallowest
   wins (``build/lib/...`` copies lose); several at the same depth: ambiguous, none is used.
2. **Path ending**: an uploaded path that is itself the end of the manifest path
   (``engine.py`` or ``eager/engine.py`` uploaded on its own), when it ends exactly one
   manifest path.
3. **File name**: for a manifest path still unmatched, one uploaded file whose name is its
   file name, also after undoing a browser's or a file manager's renaming
   (``graph (1).py``, ``graph-2.py``, ``graph copy.py``, ``Copy of graph.py``).

Nothing is matched by name when a path matched, so the ``__init__.py`` files of a whole
repository never land on ``backend/__init__.py``. Every decision the student should know
about (a renamed file, an ambiguous one, a file that is too big, not UTF-8 or a link, a file
not submitted, files ignored) becomes a line of :attr:`Mapping.notes`, which the autograder
shows to the student.

>>> m = map_paths(["repo/pkg/a.py", "repo/pkg/__init__.py", "b (1).py", "notes.txt"],
...               ["pkg/a.py", "pkg/sub/b.py", "pkg/c.py"])
>>> m
{'pkg/a.py': 'repo/pkg/a.py', 'pkg/sub/b.py': 'b (1).py'}
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .notebook import NotebookError, notebook_source

__all__ = ["Mapping", "map_paths", "map_submission", "normalize_name", "MAX_FILE_BYTES"]

MAX_FILE_BYTES = 1 << 20
MAX_NOTEBOOK_BYTES = 16 << 20  # a notebook's outputs (plots) weigh more than its code
_SKIP_DIRS = {"__MACOSX", "__pycache__", ".git", ".venv", "venv", "node_modules"}
_RENAMED = [
    re.compile(r"^(?P<stem>.+?)\s*\(\d+\)(?P<ext>\.[^.]+)$"),  # graph (1).py, graph(2).py
    re.compile(r"^(?P<stem>.+?)[-_ ]\d+(?P<ext>\.[^.]+)$"),  # graph-1.py, graph_2.py
    re.compile(r"^(?P<stem>.+?)[-_ ]?copy(?:\s*\d+)?(?P<ext>\.[^.]+)$", re.I),  # graph copy.py
    re.compile(r"^copy of (?P<stem>.+?)(?P<ext>\.[^.]+)$", re.I),  # Copy of graph.py
]


def normalize_name(name: str) -> str:
    """A file name with a browser's or file manager's copy renaming undone.

    >>> [normalize_name(n) for n in ["graph (1).py", "graph-2.py", "graph copy.py", "x.py"]]
    ['graph.py', 'graph.py', 'graph.py', 'x.py']
    """
    for pattern in _RENAMED:
        m = pattern.match(name)
        if m:
            return m.group("stem") + m.group("ext")
    return name


@dataclass
class Mapping:
    """The result of :func:`map_submission`.

    Attributes:
        used: manifest path -> the uploaded path used for it.
        texts: manifest path -> the file's text.
        notes: lines for the student (renamings, ambiguities, problems, what was ignored).
        missing: manifest paths nothing was uploaded for.
    """

    used: dict = field(default_factory=dict)
    texts: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    missing: list = field(default_factory=list)

    def report(self) -> str:
        """The lines the student reads at the top of their results."""
        lines = ["Files used from your submission:"]
        lines += [f"  {target}  <-  {src}" for target, src in sorted(self.used.items())]
        if not self.used:
            lines.append("  (none)")
        return "\n".join(lines + self.notes)


def _parts(path: str) -> tuple[str, ...]:
    return tuple(p for p in path.replace("\\", "/").split("/") if p and p != ".")


def map_paths(uploaded, manifest, notes: list | None = None) -> dict:
    """Manifest path -> uploaded path, by the rules of this module (notes appended)."""
    notes = [] if notes is None else notes
    uploaded = sorted(uploaded)
    targets = {m: _parts(m) for m in manifest}
    full: dict[str, list[str]] = {}
    ending: dict[str, list[str]] = {}
    matched = set()
    for up in uploaded:
        parts = _parts(up)
        fulls = [m for m, mp in targets.items() if parts[-len(mp) :] == mp]
        ends = [m for m, mp in targets.items()
                if len(parts) < len(mp) and mp[-len(parts) :] == parts]  # fmt: skip
        for m in fulls:
            full.setdefault(m, []).append(up)
        if len(ends) == 1:
            ending.setdefault(ends[0], []).append(up)
        if fulls or len(ends) == 1:
            matched.add(up)
    used: dict[str, str] = {}
    for m in manifest:
        for cands in (full.get(m, []), ending.get(m, [])):
            if not cands:
                continue
            depth = min(len(_parts(c)) for c in cands)
            best = [c for c in cands if len(_parts(c)) == depth]
            if len(best) == 1:
                used[m] = best[0]
                others = [c for c in cands if c != best[0]]
                if others:
                    notes.append(f"Note: used {best[0]} for {m}; ignored {', '.join(others)}.")
            else:
                notes.append(
                    f"Problem: {len(best)} files could be {m}: {', '.join(best)}. None was "
                    "used; upload only one."
                )
                used[m] = None
            break
    # 3. by file name, for what is still unmatched
    leftovers = [u for u in uploaded if u not in matched and u.endswith(".py")]
    for m, mp in targets.items():
        if m in used:
            continue
        cands = [u for u in leftovers if mp[-1] in (_parts(u)[-1], normalize_name(_parts(u)[-1]))]
        if len(cands) == 1:
            used[m] = cands[0]
            name = _parts(cands[0])[-1]
            if name != mp[-1]:
                notes.append(
                    f"Note: used {cands[0]} as {m}: its name looks like a renamed copy of "
                    f"{mp[-1]}. Name it {mp[-1]} next time."
                )
        elif len(cands) > 1:
            notes.append(
                f"Problem: {len(cands)} files could be {m} (by their names): "
                f"{', '.join(cands)}. None was used; upload only one."
            )
    used = {m: u for m, u in used.items() if u}
    ignored = [u for u in uploaded if u not in set(used.values())]
    if ignored:
        sample = ", ".join(ignored[:8]) + (", ..." if len(ignored) > 8 else "")
        notes.append(
            f"Ignored {len(ignored)} file(s) that are not among the files graded: {sample}"
        )
    return {m: used[m] for m in manifest if m in used}


def _uploaded(root: Path, notes: list) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):  # never follows links
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for d in dirs:
            if os.path.islink(os.path.join(folder, d)):
                rel = (Path(folder) / d).relative_to(root).as_posix()
                notes.append(f"Problem: {rel} is a link; links are not followed. Upload the "
                             "folder.")  # fmt: skip
        for name in sorted(files):
            if name.startswith(".") or name.endswith((".pyc", ".pyo")):
                continue
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                notes.append(f"Problem: {rel} is a link; links are not followed. Upload the file.")
                continue
            if stat.S_ISREG(mode):
                found.append(rel)
    return found


def _read(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError("not a regular file")
        return f.read(limit + 1)


def _text(root: Path, src: str, notes: list | None) -> str | None:
    """The text of an uploaded file, or None (with a note when ``notes`` is given)."""

    def say(line):
        if notes is not None:
            notes.append(line)

    limit = MAX_NOTEBOOK_BYTES if src.endswith(".ipynb") else MAX_FILE_BYTES
    try:
        data = _read(root / src, limit)
    except OSError as e:
        say(f"Problem: {src} could not be read ({e.strerror or e}).")
        return None
    if len(data) > limit:
        say(f"Problem: {src} is larger than {limit // 1024} KiB; it was not used.")
        return None
    try:
        text = data.decode("utf-8-sig")
        return notebook_source(text, notes) if src.endswith(".ipynb") else text
    except UnicodeDecodeError as e:
        say(f"Problem: {src} is not UTF-8 text (byte {e.start}); it was not used.")
        return None
    except NotebookError as e:
        say(f"Problem: {src} could not be read as a notebook: {e}. It was not used.")
        return None


def _same(a: str, b: str) -> bool:
    return a.replace("\r\n", "\n").strip() == b.replace("\r\n", "\n").strip()


def _candidates(uploaded, target: str) -> list[str]:
    """Every upload that could be ``target``: by path, path ending or (renamed) file name."""
    mp = _parts(target)
    out = []
    for up in uploaded:
        parts = _parts(up)
        if (parts[-len(mp) :] == mp or (len(parts) < len(mp) and mp[-len(parts) :] == parts)
                or mp[-1] in (parts[-1], normalize_name(parts[-1]))):  # fmt: skip
            out.append(up)
    return out


def map_submission(root, manifest, starter: dict | None = None) -> Mapping:
    """Map the files under ``root`` onto the ``manifest`` paths and read the ones used.

    ``starter``: manifest path -> the starter code. When the file the rules pick is the
    starter code unchanged (a ``build/lib`` copy) and exactly one other upload that could be
    that file differs from it (``sgd (1).py``, renamed by a browser), that one is used, and
    the student is told why."""
    root = Path(root)
    mapping = Mapping()
    uploaded = _uploaded(root, mapping.notes) if root.is_dir() else []
    used = map_paths(uploaded, manifest, mapping.notes)
    for target in manifest:  # a notebook assignment's module, submitted as its notebook
        if target not in used and target.endswith(".py"):
            name = _parts(target)[-1][:-3] + ".ipynb"
            books = [u for u in uploaded if normalize_name(_parts(u)[-1]) == name]
            if len(books) == 1:
                used[target] = books[0]
                mapping.notes.append(f"Note: used the notebook {books[0]} as {target}: its "
                                     "code cells, in order.")  # fmt: skip
                ignored = [n for n in mapping.notes if n.startswith("Ignored ")]
                for n in ignored:  # it is used after all
                    mapping.notes.remove(n)
                    rest = [u for u in uploaded if u not in set(used.values())]
                    if rest:
                        sample = ", ".join(rest[:8]) + (", ..." if len(rest) > 8 else "")
                        mapping.notes.append(f"Ignored {len(rest)} file(s) that are not among "
                                             f"the files graded: {sample}")  # fmt: skip
    for target, src in used.items():
        text = _text(root, src, mapping.notes)
        if text is None:
            continue
        if starter and target in starter and _same(text, starter[target]):
            changed = []
            for other in _candidates(uploaded, target):
                if other != src:
                    alt = _text(root, other, None)
                    if alt is not None and not _same(alt, starter[target]):
                        changed.append((other, alt))
            if len(changed) == 1:
                mapping.notes.append(
                    f"Note: used {changed[0][0]} for {target}, not {src}: {src} is the "
                    "starter code unchanged, and this file is the only other upload that "
                    "could be it."
                )
                src, text = changed[0]
        mapping.used[target], mapping.texts[target] = src, text
    mapping.missing = [m for m in manifest if m not in mapping.used]
    if mapping.missing:
        mapping.notes.append(
            "Not submitted (graded with the starter code, which scores nothing): "
            + ", ".join(mapping.missing)
        )
    return mapping
