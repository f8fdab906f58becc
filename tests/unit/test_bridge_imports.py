"""The import structure of ``interop/bridge/``: no cycle between its modules, and the CUDA
probe module that the noxfile loads by path imports only the standard library."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "interop" / "bridge"


def _bridge_imports(path: Path) -> set[str]:
    """The bridge modules ``path`` imports, at any depth (function-level imports included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:  # from .x import ... / from . import x
            if node.module:
                names.add(node.module.split(".")[0])
            else:
                names.update(alias.name for alias in node.names)
    return names


def import_graph() -> dict[str, set[str]]:
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    return {p.stem: _bridge_imports(p) & modules for p in PACKAGE.glob("*.py")}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (``[a, b, a]``) or None. The package's ``__init__`` is left out: a
    submodule that imports a sibling runs ``__init__`` first anyway."""
    graph = {m: deps - {"__init__"} for m, deps in graph.items() if m != "__init__"}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> list[str] | None:
        state[module] = 1
        for dep in sorted(graph.get(module, ())):
            if state.get(dep) == 1:
                return path[path.index(dep):] + [dep]
            if dep not in state and (cycle := visit(dep, path + [dep])):
                return cycle
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module, [module])):
            return cycle
    return None


def test_the_bridge_modules_import_each_other_without_a_cycle():
    graph = import_graph()
    assert {"runtime", "tensors", "cuda", "graph", "runner", "module", "wrapping"} <= set(graph)
    assert find_cycle(graph) is None, find_cycle(graph)
    # the CUDA probe is imported, never the other way round
    assert "tensors" not in graph["runtime"] and "runtime" not in graph["cuda"]
    assert "cuda" in graph["runtime"] and "cuda" in graph["tensors"]


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_cuda_module_loads_by_path_with_the_standard_library_only():
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('probe', {str(PACKAGE / 'cuda.py')!r})\n"
            "module = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(module)\n"
            "reason = module.gpu_absent_reason()\n"
            "assert reason is None or reason.strip()\n"
            "loaded = sorted(m for m in ('torch', 'numpy', 'aidge_core', 'interop') if m in sys.modules)\n"
            "assert not loaded, loaded\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
