"""The package layout: the import layering of ``interop`` (a package imports only from the
layers below it, never a private name of another package), no import cycle (module-level and
function-level imports alike), every subpackage shipped by pyproject.toml, no code comment
pointing outside the repository, and ``benchmarks/`` holding asv's benchmarks only (the scripts
are in ``tools/``)."""
from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "interop"
#: the layers, lowest first: a module imports only from its own layer or a lower one. A layer is
#: a subpackage or a top-level module; the top (the package itself, its facades, the pytest plugin
#: and the triage command) may import anything.
LAYERS = (
    ("interop._lazy", "interop.errors", "interop.import_gaps", "interop.env", "interop.reading", "interop.backends", "interop.case_notes",
     "interop.categories", "interop.exporters", "interop.stages", "interop.threads_policy", "interop.registry"),
    ("interop.oracle",),
    ("interop.bridge",),
    ("interop.zoo",),
    ("interop.equivalence",),
    ("interop.diagnostics", "interop.reproducers", "interop.node_profile"),
    ("interop.cases",),
    ("interop.records",),
    ("interop.console", "interop.reporting"),
    ("interop", "interop.tensor_converter", "interop.pytest_plugin", "interop.triage", "interop.check",
     "interop.checking", "interop.__main__"),
)
#: imports against the layering, each with its reason (kept to a minimum)
UPWARD_ALLOWED = {
    ("interop.equivalence.tester", "interop.diagnostics"):
        "ModelTester's failure message names the first diverging layer: diagnostics' localisation, imported "
        "inside the method, only when a comparison has failed",
    ("interop.cases.opinfo", "interop.records.shard"):
        "INTEROP_OPINFO_SHARD's membership is the one shard rule (records.shard.in_shard, with its CRC-32) and its "
        "combination with INTEROP_SHARD is refused there; imported inside the functions, shard.py imports no case",
    ("interop.diagnostics.batch_sweep", "interop.cases.moduleinfo"):
        "the batch sweep's --moduleinfo mode sweeps the ModuleInfo default selection (docs/fidelity.md): the "
        "cases and their samples, imported inside the functions, only in that mode",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _from_target(name: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` statement of module ``name`` reads from (relative resolved)."""
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every interop module ``name`` imports, wherever the import statement sits."""
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            target = _from_target(name, is_package, node)
            candidates = [target] + [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        else:
            continue
        for c in candidates:
            # importing interop.a.b runs interop.a/__init__ too, but a cycle through a
            # package's __init__ re-exports is still a cycle: keep the deepest known module
            while c and c not in known:
                c = c.rpartition(".")[0]
            if c and c != name:
                out.add(c)
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def test_no_import_cycle_inside_interop():
    modules = _modules()
    known = set(modules)
    graph = {name: _imports(name, path, known) for name, path in modules.items()}
    # a package importing its own submodules (re-exports) is not a cycle with them; a
    # submodule importing its package's __init__ is (it re-enters the package)
    for name in graph:
        graph[name] = {m for m in graph[name] if not (m.startswith(name + ".") and modules[name].name == "__init__.py")}
    cycles = _cycles(graph)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def _layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the layer a module belongs to (its subpackage's, else its own)."""
    best = None
    for index, layer in enumerate(LAYERS):
        for name in layer:
            if (module == name or module.startswith(name + ".")) and name != "interop":
                if best is None or len(name) > len(best[1]):
                    best = (index, name)
    if best is None:
        assert module == "interop", f"{module}: in no layer of LAYERS (add it)"
        return len(LAYERS) - 1
    return best[0]


def _import_edges():
    """(importer, imported module, names imported) for every import inside ``interop``."""
    modules = _modules()
    known = set(modules)
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                target = _from_target(name, is_package, node)
                for alias in node.names:  # `from .. import bridge` imports the subpackage, not interop
                    sub = f"{target}.{alias.name}"
                    if sub in known:
                        yield name, sub, ()
                    elif target in known or target.startswith("interop"):
                        yield name, target, (alias.name,)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("interop"):
                        yield name, alias.name, ()


def _package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and (PACKAGE / parts[1]).is_dir() else module


def test_no_import_from_a_higher_layer():
    upward = sorted({(a, b) for a, b, _ in _import_edges()
                     if _layer_of(b) > _layer_of(a) and not any(a == x and (b == y or b.startswith(y + "."))
                                                                 for x, y in UPWARD_ALLOWED)})
    assert not upward, "imports from a higher layer (LAYERS in this file):\n" + "\n".join(
        f"  {a} -> {b}" for a, b in upward)


def test_the_layering_check_sees_an_upward_import(tmp_path):
    assert _layer_of("interop.cases.expected_failures") > _layer_of("interop.categories")
    assert _layer_of("interop.equivalence.verdict") < _layer_of("interop.cases.case")
    assert _layer_of("interop.reporting.triage_propose") > _layer_of("interop.records.store")


def test_no_private_name_crosses_a_package():
    crossing = sorted({f"{a} imports {n} from {b}" for a, b, names in _import_edges() for n in names
                       if n.startswith("_") and not n.startswith("__") and _package_of(a) != _package_of(b)})
    assert not crossing, "private names imported across packages (make them public):\n" + "\n".join(crossing)


def test_pyproject_ships_every_subpackage():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    packages = {_module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert packages - listed == set(), f"subpackages a non-editable install would leave out: {packages - listed}"


def test_no_reference_to_files_outside_the_repository():
    pattern = re.compile(r"(?<![\w/])(?:\.\./)?shared/(?:AIDGE_NOTES|DESIGN)\.md")
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in list(PACKAGE.rglob("*.py")) + list((ROOT / "tests").rglob("*.py"))
            + list((ROOT / "benchmarks").rglob("*.py")) + list((ROOT / "tools").rglob("*.py"))
            + [ROOT / "README.md", ROOT / "noxfile.py"]
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not hits, f"references to notes outside the repository (use docs/aidge-notes.md): {hits}"


#: where a tolerance may be written as a number: the oracle (its table, its named screens) and the
#: case catalog (a case's Tolerance with its reason)
TOLERANCE_HOMES = ("interop/oracle/", "interop/cases/catalog.py")
_TOLERANCE_NAME = re.compile(r"^(r|a)tol$|_(r|a)tol$|^(relative|absolute)_precision$")


def _tolerance_literals(path: Path) -> list[str]:
    """``rtol=1e-4``, ``atol: float = 1e-5``, ``Tolerance(1e-3, ...)``: a non-zero number given as a
    tolerance (0 is exactness, not a tolerance)."""
    def number(node) -> bool:
        if isinstance(node, ast.UnaryOp):
            return number(node.operand)
        return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool) and node.value != 0

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.keyword) and node.arg and _TOLERANCE_NAME.search(node.arg) and number(node.value):
            found.append(f"line {node.value.lineno}: {node.arg}=")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and _TOLERANCE_NAME.search(t.id) and node.value is not None \
                        and number(node.value):
                    found.append(f"line {node.lineno}: {t.id} =")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Tolerance" \
                and any(number(a) for a in node.args):
            found.append(f"line {node.lineno}: Tolerance(...)")
        elif isinstance(node, ast.arguments):
            pairs = list(zip(node.args[len(node.args) - len(node.defaults):], node.defaults))
            pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults) if d is not None]
            found += [f"line {d.lineno}: default {a.arg}" for a, d in pairs if _TOLERANCE_NAME.search(a.arg) and number(d)]
    return found


def test_no_tolerance_literal_outside_the_oracle_and_the_catalog():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(TOLERANCE_HOMES):
            continue
        found = _tolerance_literals(path)
        if found:
            offenders[rel] = found
    assert not offenders, f"tolerances written as numbers outside {TOLERANCE_HOMES}: {offenders}"


def test_the_tolerance_literal_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x, rtol=1e-4):\n    return g(x, atol=1e-5, rtol=0.0)\nTolerance(1e-3, 1e-4)\n")
    assert len(_tolerance_literals(bad)) == 3  # the default, atol=, Tolerance(...); rtol=0.0 is exactness


def test_every_test_file_has_a_basename_of_its_own():
    """pytest imports test modules by basename (no ``__init__.py`` under tests/): two files of one
    name abort the collection of the second ("import file mismatch"). On 2026-12-07
    tests/unit/test_onnx_backend.py beside tests/test_onnx_backend.py made every full run error."""
    names: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert not {n: p for n, p in names.items() if len(p) > 1}


def test_no_test_file_is_named_after_an_issue():
    """A test file's name says which module or behaviour it tests (docs/testing.md lists where each
    module's tests live); the issue it came from is in its docstring and in ``git log --follow``."""
    named = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py")
                   if re.search(r"issue_?\d", p.name))
    assert not named, named


#: a name asv discovers as a benchmark: a module's function, or a method of a module's class
ASV_BENCHMARK = re.compile(r"^(time|timeraw|mem|peakmem|track)_")
#: the calls that build a benchmark class in benchmarks/ (benchmarks/harness.py, benchmarks/ort_column.py)
BENCHMARK_FACTORIES = {"benchmark_class", "export_build_class", "with_ort"}


def _defines_benchmarks(tree: ast.Module) -> bool:
    """A function or a class method named as asv's benchmarks are, or a class built by a factory."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and ASV_BENCHMARK.match(node.name):
            return True
        if isinstance(node, ast.ClassDef) and any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                                                  and ASV_BENCHMARK.match(item.name) for item in node.body):
            return True
        if isinstance(node, ast.Assign) and any(
                isinstance(call, ast.Call) and getattr(call.func, "attr", getattr(call.func, "id", None))
                in BENCHMARK_FACTORIES for call in ast.walk(node.value)):
            return True
    return False


def _package_imports(tree: ast.Module, package: str) -> set[str]:
    """The package's modules a module imports (``from . import x``, ``from .x import``, ``from
    benchmarks import x``, ``from benchmarks.x import``, ``import benchmarks.x``), wherever the import sits."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if (node.level == 1 and not node.module) or (not node.level and node.module == package):
                out |= {alias.name for alias in node.names}
            elif node.level == 1 or (node.module or "").startswith(package + "."):
                out.add((node.module or "").removeprefix(package + ".").split(".")[0])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith(package + ".")}
    return out


def not_asv_modules(folder: Path) -> list[str]:
    """What in an asv ``benchmark_dir`` is neither a module asv discovers benchmarks in, nor a module
    such a module imports (the harness, the onnxruntime column), nor the package's ``__init__.py``:
    a script (or a subpackage) that belongs in ``tools/``. asv imports every module of the folder
    when it discovers the benchmarks."""
    trees = {p.stem: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.py"))
             if p.name != "__init__.py"}
    discovered = {name for name, tree in trees.items() if _defines_benchmarks(tree)}
    imported = set().union(set(), *(_package_imports(trees[name], folder.name) for name in discovered))
    subfolders = [f"{p.name}/" for p in sorted(folder.iterdir()) if p.is_dir() and p.name != "__pycache__"]
    return sorted(f"{name}.py" for name in trees if name not in discovered | imported) + subfolders


def test_benchmarks_holds_only_what_asv_discovers():
    """``benchmarks/`` (asv.conf.json's ``benchmark_dir``) holds asv's benchmarks, the modules they
    import and ``__init__.py``; the scripts around them are in ``tools/`` (tools/README.md). Before
    (issue 62 item 4), 17 scripts sat beside the benchmarks, each imported by asv's discovery."""
    assert re.search(r'^\s*"benchmark_dir":\s*"benchmarks",', (ROOT / "asv.conf.json").read_text(encoding="utf-8"), re.M)
    assert not_asv_modules(ROOT / "benchmarks") == []
    assert {"harness.py", "operators.py", "models.py", "architectures.py"} <= {
        p.name for p in (ROOT / "benchmarks").glob("*.py")}


def test_the_benchmarks_folder_check_sees_a_script(tmp_path):
    folder = tmp_path / "benchmarks"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "helper.py").write_text("def pair():\n    return 1\n")
    (folder / "ops.py").write_text("from . import helper\n\nForward = helper.benchmark_class('operator')\n")
    (folder / "counts.py").write_text("def track_count():\n    return 1\n")
    (folder / "script.py").write_text("import argparse\n\n\ndef main():\n    argparse.ArgumentParser().parse_args()\n")
    (folder / "sub").mkdir()
    assert not_asv_modules(folder) == ["script.py", "sub/"]
