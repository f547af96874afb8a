"""The student edition of a lesson's exercise module: its recorded wrong answers left out.

A lesson's exercise records the wrong answers learners give (``Wrong(what, answer, hint)``),
and many of them are the solution with one token changed: the central difference divided by
``eps`` instead of ``2 * eps``, a convolution's size without its ``+ 1``, a factory whose
default flags build the right answer. An edition that shipped them would hand the solution
over. So the edition keeps each ``Wrong``'s ``what`` and ``hint`` (the diagnosis a learner
needs) and writes ``...`` in place of its answer; the check knows each mistake from what it
gave when the edition was made (``notebooks/.recorded/mistakes.json``, written by
``make-student``). Then the module's private definitions that only the wrong answers used
(their named functions, factories and the helpers those call) are removed, until none is
left; a definition that anything else uses (a ``fallback=``, a grade function) stays.

This works on text, like the solution markers: grading imports nothing of the lessons, which
sit above it. A module is treated when it imports ``Wrong`` by name (``from .exercise import
Wrong``); the calls to that name are its wrong answers.

>>> text = '''from .exercise import Wrong
...
...
... def _off_by_one(n):
...     return n
...
...
... WRONG = [Wrong("no + 1", _off_by_one, "count the first one too")]
... '''
>>> print(strip_wrong_answers(text))
from .exercise import Wrong
<BLANKLINE>
<BLANKLINE>
WRONG = [Wrong("no + 1", ..., "count the first one too")]
<BLANKLINE>
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

__all__ = ["strip_wrong_answers", "strip_wrong_answers_in", "wrong_answer_nodes", "WRONG_NAME"]

WRONG_NAME = "Wrong"  # the class of a recorded wrong answer: Wrong(what, answer, hint)


def _wrong_names(tree: ast.Module) -> set[str]:
    """The names under which a module imports :data:`WRONG_NAME`."""
    return {alias.asname or alias.name for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) for alias in node.names
            if alias.name == WRONG_NAME}  # fmt: skip


def wrong_answer_nodes(tree: ast.Module) -> list[ast.expr]:
    """The answer argument of every ``Wrong(...)`` call in ``tree`` (its second positional
    argument, or ``answer=``), in source order."""
    names, found = _wrong_names(tree), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in names:  # fmt: skip
            if len(node.args) >= 2:
                found.append(node.args[1])
            found.extend(k.value for k in node.keywords if k.arg == "answer")
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _offsets(text: str) -> list[int]:
    """The character offset at which each line starts (index 0: line 1)."""
    starts, at = [], 0
    for line in text.splitlines(keepends=True):
        starts.append(at)
        at += len(line)
    return starts + [at]


def _at(text: str, starts: list[int], line: int, col: int) -> int:
    """The character offset of ``(line, col)``, ``col`` counted in UTF-8 bytes as the ast
    module counts it."""
    begin = starts[line - 1]
    end = starts[line] if line < len(starts) else len(text)
    return begin + len(text[begin:end].encode("utf-8")[:col].decode("utf-8"))


def _loaded(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _defined(statement: ast.stmt) -> str | None:
    """The private name a module-level statement defines (a function, a class, one name
    assigned), else None."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        name = statement.name
    elif isinstance(statement, ast.Assign | ast.AnnAssign):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return None
        name = targets[0].id
    else:
        return None
    return name if name.startswith("_") else None


def _sets_attribute_of(statement: ast.stmt) -> str | None:
    """``_f`` for ``_f.__name__ = "f"``: a statement that only dresses a definition up."""
    if isinstance(statement, ast.Assign) and all(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
            for t in statement.targets):  # fmt: skip
        owners = {t.value.id for t in statement.targets}
        if len(owners) == 1:
            return owners.pop()
    return None


def _imported(statement: ast.stmt) -> dict[str, ast.alias]:
    """The names a module-level ``from ... import`` binds (name -> its alias)."""
    if not isinstance(statement, ast.ImportFrom):
        return {}
    return {(a.asname or a.name): a for a in statement.names if a.name != "*"}


def _remove_unused(text: str, candidates: set[str], keep: frozenset[str]) -> str:
    """``text`` without the module-level definitions of ``candidates`` that nothing else in
    the module uses, nor the private names of them it imports from another module, repeated
    until none is left (a helper only a removed one called goes too). ``keep``: names
    another module imports from this one."""
    while True:
        body = ast.parse(text).body
        uses: dict[str, int] = {}
        for statement in body:
            # an attribute set on a definition is no use of it; a definition's own name
            # inside it (recursion) neither
            own = _defined(statement) or _sets_attribute_of(statement)
            for name in _loaded(statement) - ({own} if own else set()):
                uses[name] = uses.get(name, 0) + 1

        unused = {name for name in candidates - keep if not uses.get(name)}
        gone = [s for s in body if (_defined(s) or _sets_attribute_of(s)) in unused]
        imports = {s: [n for n in _imported(s) if n in unused and n.startswith("_")]
                   for s in body}  # fmt: skip
        imports = {s: names for s, names in imports.items() if names}
        if not gone and not imports:
            return text
        for statement in gone:
            candidates |= _loaded(statement)
        lines = text.splitlines(keepends=True)
        edits: dict[int, str] = {}  # first line (0-based) -> its replacement
        drop = set()
        for statement in gone:
            first = min(
                [statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", [])]
            )
            last = statement.end_lineno
            while last < len(lines) and not lines[last].strip():
                last += 1  # the blank lines after it: the gap before it stays as it was
            drop.update(range(first - 1, last))
        for statement, names in imports.items():
            left = [a for n, a in _imported(statement).items() if n not in names]
            drop.update(range(statement.lineno - 1, statement.end_lineno))
            if left:
                kept = ast.ImportFrom(statement.module, left, statement.level)
                edits[statement.lineno - 1] = ast.unparse(kept) + "\n"
        text = "".join(edits.get(n, "") if n in drop else line for n, line in enumerate(lines))


def strip_wrong_answers(text: str, filename: str = "<string>", keep=frozenset()) -> str:
    """The student edition of a module's text: ``...`` in place of the answer of every
    ``Wrong(...)``, and the private definitions only those answers used removed (see the
    module's docstring), except the names in ``keep`` (another module imports them). A
    module that does not import ``Wrong``, or does not parse (copied as it is, as the
    solution markers leave it), is returned as it is."""
    if WRONG_NAME not in {name for _, name in _imports(filename, text)}:
        return text
    try:
        tree = ast.parse(text, filename)
    except (SyntaxError, ValueError):
        return text
    answers = [a for a in wrong_answer_nodes(tree)
               if not (isinstance(a, ast.Constant) and a.value is Ellipsis)]  # fmt: skip
    if not answers:
        return text
    candidates = set().union(*(_loaded(a) for a in answers))
    starts = _offsets(text)
    for answer in reversed(answers):  # from the end: earlier offsets stay valid
        begin = _at(text, starts, answer.lineno, answer.col_offset)
        end = _at(text, starts, answer.end_lineno, answer.end_col_offset)
        text = text[:begin] + "..." + text[end:]
        starts = _offsets(text)
    return _remove_unused(text, candidates, frozenset(keep))


_FROM_IMPORT = re.compile(
    r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M
)


def _imports(path: str, text: str) -> set[tuple[str, str]]:
    """``(module, name)`` for each name the module at ``path`` (a relative POSIX path)
    imports with ``from ... import``, the module as a path without ``.py`` (``pkg/lesson03``,
    a relative import resolved against ``path``). Read by a pattern, not parsed, since every
    module of the repository is read: a match inside a string only keeps more."""
    found = set()
    for match in _FROM_IMPORT.finditer(text):
        dots, module, names = match.groups()
        target = module.replace(".", "/")
        if dots:
            parents = PurePosixPath(path).parents
            if len(dots) > len(parents):
                continue
            target = (parents[len(dots) - 1] / target).as_posix() if target else ""
        for part in re.sub(r"#[^\n]*", "", names).strip("()").split(","):
            words = part.split()
            if words:
                found.add((target, words[0]))
    return found


def _imported_from(path: str, imports: dict[str, set[str]]) -> set[str]:
    """The names that ``imports`` (module -> names, see :func:`_imports`) take from the module
    at ``path``; an absolute import may name it from any folder above it."""
    module = path[: -len(".py")]
    module = module[: -len("/__init__")] if module.endswith("/__init__") else module
    parts = module.split("/")
    return set().union(*(imports.get("/".join(parts[k:]), set()) for k in range(len(parts))))


def strip_wrong_answers_in(texts: dict[str, str]) -> dict[str, str]:
    """:func:`strip_wrong_answers` for every module of a repository (``{relative POSIX path:
    text}``, the same keys back): a definition that another module imports stays (lesson 5
    imports lesson 3's helpers), unless that module imported it only for its own wrong
    answers."""
    imports = {k: _imports(k, t) for k, t in texts.items()}
    todo = {k: t for k, t in texts.items() if WRONG_NAME in {n for _, n in imports[k]}}
    others = set().union(*(found for k, found in imports.items() if k not in todo))
    done: dict[tuple[str, frozenset], str] = {}
    while True:
        everything: dict[str, set[str]] = {}
        for target, name in others.union(*(imports[k] for k in todo)):
            everything.setdefault(target, set()).add(name)
        out = {}
        for k, t in todo.items():
            keep = frozenset(_imported_from(k, everything))
            if (k, keep) not in done:  # most modules keep what they kept in the last round
                done[k, keep] = strip_wrong_answers(t, k, keep)
            out[k] = done[k, keep]
        now = {k: _imports(k, t) for k, t in out.items()}
        if all(now[k] == imports[k] for k in todo):
            return {**texts, **out}
        imports.update(now)
