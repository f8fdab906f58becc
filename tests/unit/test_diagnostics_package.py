"""interop.diagnostics: one namespace for the modules' public names, imported lazily."""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import interop
import interop.diagnostics as diagnostics


def test_every_public_name_of_every_module_is_reexported():
    for module_name in diagnostics._MODULES:
        module = importlib.import_module(f"interop.diagnostics.{module_name}")
        assert set(module.__all__) == set(diagnostics._MODULES[module_name]), module_name
        for name in module.__all__:
            assert getattr(diagnostics, name) is getattr(module, name), name
    assert sorted(diagnostics.__all__) == diagnostics.__all__
    assert len(diagnostics.__all__) == sum(len(names) for names in diagnostics._MODULES.values())


def test_top_level_exports_resolve_to_the_diagnostics_objects():
    for name, module_name in interop._EXPORTS.items():
        if module_name.startswith("diagnostics."):
            assert getattr(interop, name) is getattr(diagnostics, name), name
    assert interop.diagnostics is diagnostics


def test_importing_the_package_loads_no_heavy_dependency():
    code = ("import sys, interop.diagnostics, interop.diagnostics.golden; "
            "print(sorted(m for m in ('torch', 'hypothesis', 'aidge_core') if m in sys.modules))")
    root = Path(interop.__file__).resolve().parents[1]  # this checkout's interop, not an installed one
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip() == "[]"
