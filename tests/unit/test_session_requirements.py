"""Each nox session's environment holds what its code imports. ``nox -s site-check`` failed in a
fresh clone with ``ModuleNotFoundError: No module named 'pydantic'``: requirements/site-check.txt
held only playwright while tools/check_site.py imports interop.reporting, whose package
imports pydantic.

Static: the noxfile is read for each session's environment (the requirements files and packages
it installs; the CPU sessions' shared stack) and its entry points (``python -m MODULE``,
``python SCRIPT``, pytest); the entry points' imports are followed through the project's own
modules (module-level imports; the entry file's function-level ones too); each third-party
top-level module must be provided by a listed requirement or what it depends on, read from the
installed distributions' metadata (nothing is installed, no network). A requirement that is not
installed here (playwright) provides its own name only."""
from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
from functools import lru_cache
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
REQ = ROOT / "requirements"
NOXFILE = ROOT / "noxfile.py"
PROJECT = {"interop", "benchmarks", "tools", "tests", "conftest", "noxfile"}


# -- what a requirements file provides ------------------------------------------------------
def requirement_names(path: Path) -> list[str]:
    """The distributions a requirements file installs (``-r`` followed, ``-c`` and ``-e`` left out)."""
    names = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #")[0].split("#")[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if line.startswith("-r"):
            names += requirement_names(path.parent / line[2:].strip())
        elif line.startswith(("-c", "-e", "--")):
            continue
        else:
            names.append(Requirement(line).name)
    return names


@lru_cache(maxsize=None)
def _modules_of_distribution() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, dists in md.packages_distributions().items():
        for dist in dists:
            out.setdefault(canonicalize_name(dist), set()).add(module)
    return out


def _requires(name: str) -> list[str]:
    try:
        reqs = md.requires(name) or []
    except md.PackageNotFoundError:
        return []
    env = default_environment()
    out = []
    for spec in reqs:
        req = Requirement(spec)
        if req.marker is None or req.marker.evaluate(dict(env, extra="")):
            out.append(req.name)
    return out


def provided_modules(names: list[str]) -> set[str]:
    """The top-level modules that installing ``names`` (with their dependencies) provides."""
    seen: set[str] = set()
    todo = [canonicalize_name(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [canonicalize_name(n) for n in _requires(name)]
    modules: set[str] = set()
    for name in seen:
        modules |= _modules_of_distribution().get(name, {name.replace("-", "_")})
    return modules


# -- what an entry point imports ----------------------------------------------------------------
def _is_guarded(node: ast.AST, parents: dict) -> bool:
    """Inside ``if TYPE_CHECKING:`` or a ``try`` that catches ImportError: optional."""
    while node in parents:
        parent = parents[node]
        if isinstance(parent, ast.If) and "TYPE_CHECKING" in ast.unparse(parent.test):
            return True
        if isinstance(parent, ast.Try) and node in parent.body and any(
                h.type is None or re.search(r"ImportError|ModuleNotFoundError|Exception", ast.unparse(h.type))
                for h in parent.handlers):
            return True
        node = parent
    return False


def _module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _dotted_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@lru_cache(maxsize=None)
def imports_of(path: Path, *, functions: bool) -> frozenset[str]:
    """Dotted names ``path`` imports (module level; inside functions too when ``functions``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    package = _dotted_of(path) if path.name == "__init__.py" else _dotted_of(path).rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or _is_guarded(node, parents):
            continue
        if not functions:
            up, inside = node, False
            while up in parents:
                up = parents[up]
                if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    inside = True
                    break
            if inside:
                continue
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
            continue
        if node.level:
            parts = package.split(".") if package else []
            base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        out.add(base)
        out |= {f"{base}.{alias.name}" for alias in node.names}  # a submodule imported by name
    return frozenset(out)


def third_party_imports(*entries: Path) -> dict[str, str]:
    """Third-party top-level module -> the project file that imports it, over ``entries`` and the
    project modules they import (with their packages' ``__init__``; a script's neighbours, which
    its folder on sys.path makes importable, count as the project's)."""
    found: dict[str, str] = {}
    done: set[Path] = set()
    todo = [(entry, True) for entry in entries]
    while todo:
        path, functions = todo.pop()
        if path in done:
            continue
        done.add(path)
        for dotted in imports_of(path, functions=functions):
            top = dotted.split(".")[0]
            neighbour = path.parent / f"{top}.py"
            if neighbour.is_file():
                todo.append((neighbour, False))
            elif top in PROJECT:
                parts = dotted.split(".")
                for i in range(1, len(parts) + 1):  # the packages' __init__ run first
                    file = _module_file(".".join(parts[:i]))
                    if file is not None:
                        todo.append((file, False))
            elif top and top not in sys.stdlib_module_names and not top.startswith("_"):
                found.setdefault(top, str(path.relative_to(ROOT)))
    return found


# -- the sessions, read from the noxfile ------------------------------------------------------
def _const(node) -> str | None:
    """A call argument's text: a string, ``str(REQ / "x.txt")`` -> ``requirements/x.txt``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    text = ast.unparse(node)
    m = re.fullmatch(r"str\(REQ / '([\w.-]+)'\)", text)
    return f"requirements/{m.group(1)}" if m else None


def sessions() -> dict[str, dict]:
    """name -> {"requirements": files, "packages": names, "entries": files, "stack": bool}."""
    tree = ast.parse(NOXFILE.read_text(encoding="utf-8"))
    helpers = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    out = {}
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        deco = next((d for d in fn.decorator_list if isinstance(d, ast.Call)
                     and ast.unparse(d.func) in ("nox.session", "session")), None)
        if deco is None:
            continue
        name = next((k.value.value for k in deco.keywords if k.arg == "name"), fn.name)
        calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
        called = {ast.unparse(c.func) for c in calls}
        stack = bool(called & {"cpu_stack", "_asv_session"})
        info = {"requirements": [], "packages": [], "entries": set(), "stack": stack}
        if stack:  # the shared stack: STACK_FILES' requirements, virtualenv, the project (--no-deps)
            info["requirements"] += ["requirements/cpu.txt", "requirements/test.txt"]
            info["packages"].append("virtualenv")
        for call in calls:
            func = ast.unparse(call.func)
            args = [_const(a) for a in call.args]
            if func == "session.install":
                if "--no-deps" in args and "-e" in args:
                    continue
                for i, a in enumerate(args):
                    if a is None or a.startswith("-") and a != "-r":
                        continue
                    if a == "-r":
                        continue
                    if i and args[i - 1] == "-r":
                        info["requirements"].append(a)
                    elif i and args[i - 1] == "-c":
                        continue
                    else:
                        info["packages"].append(Requirement(a).name)
                for star in call.args:  # *(f"{p}=={aidge}" for p in AIDGE_CPU_PACKAGES)
                    if isinstance(star, ast.Starred) and "AIDGE_CPU_PACKAGES" in ast.unparse(star):
                        info["packages"] += ["aidge-core", "aidge-backend-cpu", "aidge-onnx", "aidge-learning"]
            elif func in ("stack.run", "session.run") and args and args[0] in ("python", "asv"):
                rest = [a for a in args[1:] if a is not None]
                if args[0] == "python" and rest[:1] == ["-m"] and len(rest) > 1:
                    module = rest[1]
                    if module == "pytest":
                        info["entries"].add("pytest")
                    elif _module_file(module):
                        info["entries"].add(str(_module_file(module).relative_to(ROOT)))
                elif args[0] == "python" and rest and rest[0].endswith(".py"):
                    info["entries"].add(rest[0])
        out[name] = info
    return out


def _entry_files(entry: str) -> list[Path]:
    if entry == "pytest":  # the suites: every test module, the conftest files, the plugin
        return sorted((ROOT / "tests").rglob("test_*.py")) + sorted((ROOT / "tests").rglob("conftest.py")) + [
            ROOT / "interop" / "pytest_plugin.py"]
    return [ROOT / entry]


def missing_imports(name: str, info: dict) -> dict[str, str]:
    provided = provided_modules(info["packages"] + [n for f in info["requirements"]
                                                    for n in requirement_names(ROOT / f)])
    needed = third_party_imports(*[path for entry in sorted(info["entries"]) for path in _entry_files(entry)])
    return {m: where for m, where in sorted(needed.items()) if m not in provided}


SESSIONS = sessions()


def test_the_noxfile_is_read():
    assert SESSIONS["site-check"]["requirements"] == ["requirements/site-check.txt"]
    assert SESSIONS["site-check"]["entries"] == {"tools/check_site.py"}
    assert SESSIONS["tests-cpu"]["stack"] and "pytest" in SESSIONS["tests-cpu"]["entries"]
    assert "tools/case_index.py" in SESSIONS["publish"]["entries"]


def test_the_check_follows_the_project_imports_to_pydantic():
    found = third_party_imports(ROOT / "tools" / "check_site.py")
    assert "pydantic" in found and "playwright" in found  # module level through interop.reporting; the function's
    assert "pydantic" not in provided_modules(["playwright"])  # the old requirements/site-check.txt


@pytest.mark.parametrize("name", sorted(n for n, s in SESSIONS.items() if s["entries"] and not s["stack"])
                         + ["cpu stack (tests-cpu, report, publish, bench-quick, ...)"])
def test_each_session_environment_provides_what_its_code_imports(name):
    if name.startswith("cpu stack"):
        info = {"requirements": ["requirements/cpu.txt", "requirements/test.txt"], "packages": ["virtualenv"],
                "entries": set().union(*(s["entries"] for s in SESSIONS.values() if s["stack"]))}
    else:
        info = SESSIONS[name]
    missing = missing_imports(name, info)
    assert missing == {}, (f"nox -s {name}: {sorted(missing)} imported ({missing}) but not provided by "
                           f"{info['requirements'] + info['packages']}")
