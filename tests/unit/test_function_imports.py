"""Imports inside functions of ``interop/`` (issue 62): each one says why it waits. An import
statement inside a function (at any depth) is allowed only when its module is

- (a) a heavy third-party module whose cold import cost was measured (``HEAVY``: module -> cost
  and reason);
- (b) an interop module whose top-level import would load a module of (a) into a module that must
  stay light, or go against the layers of tests/unit/test_layout.py (``LOCAL``: (importer,
  imported) -> reason);
- (c) an import that must happen at a given moment: in the parent before it forks, in a forked
  child, after an environment variable is set (``LATE``, the same way).

The tables are in tests/unit/function_import_reasons.py; docs/costs.md#what-an-import-costs has
the measurements. Anything else fails here, named by file:line; an entry no import needs any more
fails too (the tables only shrink)."""
from __future__ import annotations

import ast
from pathlib import Path

from function_import_reasons import HEAVY, LATE, LOCAL

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "interop"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _function_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement inside a function or lambda (not at module level, nor in a
    module-level ``if``/``try``, nor directly in a class body)."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child, in_function or isinstance(child, _FUNCTIONS))

    visit(tree, False)
    return found


def _imported(name: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    """The modules a statement of module ``name`` imports: third-party ones as written, interop
    ones resolved (relative imports) to the deepest module of the package."""
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    else:
        if node.level:
            base = name.split(".") if is_package else name.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        modules = [f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names]
    out = []
    for module in modules:
        if module == "interop" or module.startswith("interop."):
            while module not in known and "." in module:
                module = module.rpartition(".")[0]
        out.append(module)
    return out


def function_imports(sources: dict[str, tuple[str, str]], known: set[str]):
    """``(file, line, importer, imported, statement)`` for every function-level import of
    ``sources`` (file -> (module name, source text))."""
    for file, (name, text) in sorted(sources.items()):
        is_package = file.endswith("__init__.py")
        for node in _function_imports(ast.parse(text, file)):
            for imported in dict.fromkeys(_imported(name, is_package, node, known)):
                yield file, node.lineno, name, imported, ast.unparse(node)


def uncovered(found, heavy=HEAVY, local=LOCAL, late=LATE) -> list[str]:
    """``file:line: statement`` for each import of ``found`` no table covers."""
    out = []
    for file, line, importer, imported, statement in found:
        if imported.split(".")[0] in heavy or (importer, imported) in local or (importer, imported) in late:
            continue
        out.append(f"{file}:{line}: {statement}  (imports {imported})")
    return out


def _package_sources() -> tuple[dict[str, tuple[str, str]], set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    sources = {p.relative_to(ROOT).as_posix(): (_module_name(p), p.read_text(encoding="utf-8")) for p in paths}
    return sources, {name for name, _ in sources.values()}


def test_every_function_level_import_has_its_reason():
    sources, known = _package_sources()
    missing = uncovered(function_imports(sources, known))
    assert not missing, (
        "imports inside functions with no reason (hoist them to the module's top, or add the measured cost "
        "and the reason to tests/unit/function_import_reasons.py):\n  " + "\n  ".join(missing))


def test_no_table_entry_outlives_its_import():
    sources, known = _package_sources()
    found = list(function_imports(sources, known))
    tops = {imported.split(".")[0] for *_, imported, _ in found}
    pairs = {(importer, imported) for _, _, importer, imported, _ in found}
    stale = sorted(f"HEAVY[{m!r}]" for m in set(HEAVY) - tops)
    stale += sorted(f"LOCAL[{p!r}]" for p in set(LOCAL) - pairs)
    stale += sorted(f"LATE[{p!r}]" for p in set(LATE) - pairs)
    assert not stale, "entries no function-level import needs any more (delete them):\n  " + "\n  ".join(stale)


def test_every_reason_is_said():
    for table in (HEAVY, LOCAL, LATE):
        assert all(isinstance(reason, str) and reason.strip() for reason in table.values())
    assert not set(LOCAL) & set(LATE)
    assert all(k.split(".")[0] == k and not k.startswith("interop") for k in HEAVY)


def test_the_check_names_an_import_with_no_reason():
    text = ("import json\n"
            "from .errors import InteropError\n"
            "def f():\n"
            "    import torch\n"
            "    from .reading import read_confined\n"
            "    return lambda: __import__('x')\n"
            "class C:\n"
            "    import os\n"
            "    def g(self):\n"
            "        if True:\n"
            "            import json as j, numpy\n"
            "        from .cases import catalog\n")
    sources = {"interop/sample.py": ("interop.sample", text)}
    known = {"interop", "interop.sample", "interop.errors", "interop.reading", "interop.cases", "interop.cases.catalog"}
    found = list(function_imports(sources, known))
    assert [(line, imported) for _, line, _, imported, _ in found] == [
        (4, "torch"), (5, "interop.reading"), (11, "json"), (11, "numpy"), (12, "interop.cases.catalog")]
    assert uncovered(found, heavy={"torch": "r"}, local={}, late={}) == [
        "interop/sample.py:5: from .reading import read_confined  (imports interop.reading)",
        "interop/sample.py:11: import json as j, numpy  (imports json)",
        "interop/sample.py:11: import json as j, numpy  (imports numpy)",
        "interop/sample.py:12: from .cases import catalog  (imports interop.cases.catalog)"]
    assert uncovered(found, heavy={"torch": "r", "numpy": "r"}, local={("interop.sample", "interop.reading"): "r"},
                     late={("interop.sample", "interop.cases.catalog"): "r", ("interop.sample", "json"): "r"}) == []
