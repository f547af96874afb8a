"""No import circles in ``tinygrad_edu/``: the modules form layers, imports point down.

Every ``import`` statement counts, also one inside a function (a lazy import hides a circle
from Python, not from a reader). Importing a submodule also runs its package's ``__init__``,
but that is not counted as an edge: a package that re-exports its modules would otherwise sit
in a circle with each of them.

The circles that remain are listed in :data:`KNOWN_CIRCLES`, to be broken by later changes:
the test fails on a circle that is not listed, and on a listed one that is gone (delete it
from the list, so that it cannot come back).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "tinygrad_edu"
COURSE = "tinygrad_course"

#: Circles not broken yet. Each entry: the modules of one circle (a strongly connected
#: component of the import graph); the circle found may be smaller than the entry.
#: Empty since issue 23 broke the last two (the eager engine's, symbolic program <->
#: serialize <-> control_flow); keep it so.
KNOWN_CIRCLES: list = []


#: The layers of the package, bottom first (docs/concepts/layers.md draws them): a module may
#: import from its own unit and from the layers below it, never from above.
LAYERS = [
    ["backend", "cli", "size"],  # cli finds its subcommands' modules by name (importlib)
    ["dtypes", "testing", "finite_diff"],  # tg.testing.assert_close; gradient checks' numerics
    ["ops"],
    ["eager", "symbolic"],
    ["linalg", "amp", "utils", "special", "fft", "jit", "distributions"],  # over eager
    ["cuda"],  # tg.cuda (is_available: the CuPy backend; cuda.amp)
    ["backends", "accelerator"],
    ["autograd", "nn", "optim", "data"],
    ["compiler"],  # tg.compile: the eager engine traced into the symbolic one
    ["(package)"],  # tinygrad_edu/__init__.py: `import tinygrad_edu as tg`
    ["viz"],
    ["__main__"],
]  # the course (lessons, grading, demo) is the package tinygrad_course, above all of these


def unit(module: str) -> str:
    """The subpackage or top-level module that ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(package)"


def unit_graph(graph: dict) -> dict:
    """unit -> the other units it imports from."""
    out: dict = {}
    for module, targets in graph.items():
        for t in targets:
            if unit(t) != unit(module):
                out.setdefault(unit(module), set()).add(unit(t))
    return out


def _modules() -> dict:
    """module name -> its file."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict) -> set:
    """The modules of the package that ``name`` imports, anywhere in its file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            # `from pkg import mod` imports the module pkg.mod; `from mod import name` imports mod
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]  # fmt: skip
        else:
            continue
        for target in targets:
            while target and target not in modules:  # `import a.b.c` of a module inside
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def circles(graph: dict) -> list:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, result, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.add(m)
                    if m == node:
                        break
                if len(component) > 1:
                    result.append(component)
    return result


def test_the_finder_sees_a_circle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [{"a", "b", "c"}]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_imports_inside_functions_are_edges():
    graph = import_graph()
    # viz.traverse imports the symbolic package inside symbolic_graph()
    assert "tinygrad_edu.symbolic" in graph["tinygrad_edu.viz.traverse"]


def test_no_import_circle_outside_the_known_list():
    found = circles(import_graph())
    new = [sorted(c) for c in found if not any(c <= known for known in KNOWN_CIRCLES)]
    assert not new, (
        f"import circles: {new}. Make the imports point down (a module that needs something "
        "from above receives it, it does not import it, not even inside a function)"
    )


def test_the_known_list_has_no_circle_that_is_gone():
    found = circles(import_graph())
    gone = [sorted(k) for k in KNOWN_CIRCLES if not any(c <= k for c in found)]
    assert not gone, f"these circles are broken now: delete them from KNOWN_CIRCLES: {gone}"


def test_every_unit_imports_only_from_the_layers_below():
    level = {u: k for k, layer in enumerate(LAYERS) for u in layer}
    units = {unit(m) for m in _modules()}
    assert units <= set(level), f"put {sorted(units - set(level))} into a layer of LAYERS"
    upward = sorted((a, b) for a, targets in unit_graph(import_graph()).items() for b in targets
                    if level[b] >= level[a])  # fmt: skip
    assert not upward, (
        f"imports that point up or sideways: {upward}; a module that needs something from "
        "above receives it (an argument, a registration), it does not import it"
    )


#: viz's modules in layers, bottom first (as its package docstring lists them)
VIZ_LAYERS = [
    ["records", "torch_graph", "style", "examples"],
    ["blocks", "modules", "anatomy"],
    ["traverse"],
    ["symbolic_form", "eager_form", "run_engines", "im2col"],
    ["draw", "order", "memory_plan", "stepper.record", "kernels"],
    ["stepper.captions", "stepper.layout", "stepper.export", "stepper.animate", "compiled"],
    ["stepper", "player"],
    ["render_command", "(viz)"],
]


def _check_sublayers(prefix: str, layers: list, label: str) -> None:
    level = {f"{prefix}.{m}" if m != f"({label})" else prefix: k
             for k, layer in enumerate(layers) for m in layer}  # fmt: skip
    graph = {m: t for m, t in import_graph().items() if m == prefix or m.startswith(prefix + ".")}
    assert set(graph) == set(level), f"place {sorted(set(graph) ^ set(level))} in its layers"
    upward = sorted((a, b) for a, targets in graph.items() for b in targets
                    if b in level and level[b] >= level[a])  # fmt: skip
    assert not upward, f"{label} imports that point up or sideways: {upward}"


def test_viz_modules_import_only_from_the_layers_below():
    _check_sublayers("tinygrad_edu.viz", VIZ_LAYERS, "viz")


#: the eager engine's modules in layers, bottom first (as eager/core.py's docstring draws them):
#: the core, the nodes, the engine, dispatch (apply_op), Tensor, the public functions
EAGER_LAYERS = [
    ["grad_mode", "collector", "printing"],
    ["core"],
    ["node", "convert"],
    ["engine"],
    ["engine_threads", "engine_hooks", "engine_errors", "engine_observer", "backward"],
    ["out", "split_node", "cell_node"],
    ["dispatch"],
    ["functional", "dlpack", "random", "loss_node"],
    ["tensor_convert", "inplace", "anatomy"],
    ["tensor"],
    ["factories", "function"],
    ["autograd"],
    ["(eager)"],
]


def test_eager_modules_import_only_from_the_layers_below():
    # before issue 23 they were one circle (tensor <-> dispatch <-> node <-> engine ...)
    _check_sublayers("tinygrad_edu.eager", EAGER_LAYERS, "eager")


#: the symbolic package's modules in layers, bottom first (symbolic/__init__.py's docstring):
#: the engine (tensor nodes, topo_sort, gradients, executor) below, the static-graph compiler
#: (symbolic/static/: Program, scope, control flow, passes, codegen, ONNX) above it. No engine
#: module imports the compiler; the package re-exports both.
SYMBOLIC_ENGINE = [
    ["dtype_rules"],
    ["tensor_node"],
    ["graph", "api", "layer_functions"],
    ["gradients", "memory"],
    ["executor"],
    ["gradient_check", "cse599w"],
]
SYMBOLIC_STATIC = [
    ["static.passes.rewrite", "static.kernels"],  # program copies sub-blocks with rewrite
    ["static.program"],
    ["static.scope", "static.passes.simplify", "static.passes.cse", "static.passes.fuse",
     "static.passes.fold"],
    ["static.initializer", "static.control_flow", "static.passes.dce", "static.codegen"],
    ["static.passes", "static.training", "static.serialize", "static.onnx_ops",
     "static.fusion", "static.traffic", "static.handwritten"],
    ["static.onnx_export", "static.fluid"],
    ["(static)"],
]  # fmt: skip


def test_the_symbolic_engine_never_imports_its_compiler():
    layers = [*SYMBOLIC_ENGINE, *SYMBOLIC_STATIC, ["(symbolic)"]]
    level = {f"tinygrad_edu.symbolic.{m}": k for k, layer in enumerate(layers) for m in layer}
    level["tinygrad_edu.symbolic.static"] = level.pop("tinygrad_edu.symbolic.(static)")
    level["tinygrad_edu.symbolic"] = level.pop("tinygrad_edu.symbolic.(symbolic)")
    graph = {m: t for m, t in import_graph().items()
             if m == "tinygrad_edu.symbolic" or m.startswith("tinygrad_edu.symbolic.")}  # fmt: skip
    assert set(graph) == set(level), f"place {sorted(set(graph) ^ set(level))} in its layers"
    upward = sorted((a, b) for a, targets in graph.items() for b in targets
                    if b in level and level[b] >= level[a])  # fmt: skip
    assert not upward, f"symbolic imports that point up or sideways: {upward}"
    engine = {f"tinygrad_edu.symbolic.{m}" for layer in SYMBOLIC_ENGINE for m in layer}
    into_static = sorted((a, b) for a in engine for b in graph[a]
                         if b.startswith("tinygrad_edu.symbolic.static"))  # fmt: skip
    assert not into_static, f"the engine imports the compiler: {into_static}"


def test_the_viz_circle_is_gone():
    found = circles(import_graph())
    assert not [c for c in found if any(m.startswith("tinygrad_edu.viz") for m in c)]


# -- the library and the course ------------------------------------------------------------
# The course (tinygrad_course: lessons, grading, demo) is built on the library and installed
# with it; the library never imports it, not by an import statement and not by name.


def test_no_library_file_names_the_course():
    offenders = [str(p.relative_to(REPO)) for p in sorted(PACKAGE.rglob("*"))
                 if p.is_file() and p.suffix in (".py", ".txt", ".json", ".md")
                 and COURSE in p.read_text(encoding="utf-8", errors="replace")]  # fmt: skip
    assert not offenders, f"the library must not name the course: {offenders}"


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def test_importing_the_library_loads_no_course_module():
    code = ("import sys, tinygrad_edu, tinygrad_edu.nn, tinygrad_edu.optim, "
            "tinygrad_edu.compiler, tinygrad_edu.viz, tinygrad_edu.autograd\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'tinygrad_course'))\n"
            "print(tinygrad_edu.__file__)")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], env=_env(), cwd=REPO, capture_output=True,
                         text=True, timeout=300, check=True).stdout.splitlines()  # fmt: skip
    assert out[0] == "[]", out[0]
    assert out[1].startswith(str(PACKAGE))  # this checkout's library, not an installed one


def _stale_entry_points() -> list[str]:
    """pytest11 entry points that the installed metadata of this project declares and this
    checkout's pyproject.toml does not: an install made before the grading plugin stopped
    being one (``pip install -e .`` removes them). They are blocked so that the check below
    tests this code, not an old install."""
    from importlib.metadata import entry_points

    return [ep.name for ep in entry_points(group="pytest11")
            if ep.value.split(".")[0] in ("tinygrad_edu", COURSE)]  # fmt: skip


def test_the_project_declares_no_pytest_plugin():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert "pytest11" not in text.replace("No pytest11", "")


def test_pytest_in_another_project_is_untouched(tmp_path):
    """Installing the library (and the course with it) changes no other project's pytest: an
    empty project's session has no ``--gradescope`` and imports no module of either."""
    project = tmp_path / "elsewhere"
    project.mkdir()
    record = tmp_path / "modules.txt"
    (project / "conftest.py").write_text(textwrap.dedent(f"""
        import sys

        def pytest_unconfigure(config):
            with open({str(record)!r}, "w") as f:
                f.write("\\n".join(sorted(sys.modules)))
    """))
    (project / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    block = [arg for name in _stale_entry_points() for arg in ("-p", f"no:{name}")]
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *block]
    for args, expect in ((["--help"], "usage"), (["-q"], "1 passed")):
        done = subprocess.run([*base, *args], cwd=project, env=_env(), capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0 and expect in done.stdout, done.stdout + done.stderr
        if args == ["--help"]:
            assert "--gradescope" not in done.stdout
        loaded = record.read_text().split()
        ours = [m for m in loaded if m.split(".")[0] in ("tinygrad_edu", COURSE)]
        assert not ours, f"pytest {' '.join(args)} imported {ours[:10]}"
        assert "pytest" in loaded  # the record is a real one
