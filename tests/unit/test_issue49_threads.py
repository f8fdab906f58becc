"""Issue 49: Aidge's CPU kernels share torch's OpenMP runtime, and the library's OpenMP default
(interop/threads_policy.py, docs/openmp-threads.md). No timed assertion: the figures are in the
doc, measured beside the load they name."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from interop import threads_policy
from interop.threads_policy import apply_default, slowdown_advice

ROOT = Path(__file__).resolve().parents[2]


def _clean(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), **extra}


def test_the_default_applies_only_when_the_caller_chose_nothing_and_no_runtime_is_loaded():
    env: dict[str, str] = {}
    assert apply_default(env, runtimes=[]).startswith("set OMP_WAIT_POLICY=PASSIVE, OMP_DYNAMIC=TRUE")
    assert env == {"OMP_WAIT_POLICY": "PASSIVE", "OMP_DYNAMIC": "TRUE"}
    for chosen in ({"OMP_NUM_THREADS": "2"}, {"OMP_WAIT_POLICY": "active"}, {"GOMP_SPINCOUNT": "1000"},
                   {"OMP_DYNAMIC": "false"}):
        env = dict(chosen)
        assert apply_default(env, runtimes=[]).startswith("nothing (the caller set")
        assert env == chosen
    env = {}  # a runtime loaded already (a path that cannot be opened here: nothing to set on it)
    assert "loaded before interop" in apply_default(env, runtimes=["/x/torch/lib/libgomp.so.1"]) and env == {}
    env = {"INTEROP_OPENMP_POLICY": "keep"}
    assert apply_default(env, runtimes=[]).startswith("nothing (INTEROP_OPENMP_POLICY=keep)")
    assert env == {"INTEROP_OPENMP_POLICY": "keep"}


def test_import_interop_first_sets_the_wait_policy_torch_then_reads(tmp_path):
    code = ("import os, interop, torch; from interop import threads_policy as t; "
            "print(os.environ.get('OMP_WAIT_POLICY'), t.openmp_state()['dynamic'], '|', t.APPLIED)")
    done = subprocess.run([sys.executable, "-c", code], env=_clean(tmp_path), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("PASSIVE True | set OMP_WAIT_POLICY=PASSIVE")
    # imported after torch, the runtime has read its settings: dynamic teams only, by the runtime's call
    code = ("import os, torch, interop; from interop import threads_policy as t; "
            "print(os.environ.get('OMP_WAIT_POLICY'), t.openmp_state()['dynamic'], '|', t.APPLIED)")
    done = subprocess.run([sys.executable, "-c", code], env=_clean(tmp_path), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("None True | omp_set_dynamic(1) on ")
    assert "libgomp.so.1" in done.stdout
    # a caller's choice is kept
    done = subprocess.run([sys.executable, "-c", code], env=_clean(tmp_path, OMP_NUM_THREADS="2"),
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.startswith("None False | nothing (the caller set OMP_NUM_THREADS=2)"), done.stdout


def test_aidge_s_kernels_call_torch_s_openmp_runtime_not_their_own(tmp_path):
    """The finding behind the policy: with torch loaded first, the dynamic linker binds
    aidge_backend_cpu's GOMP_parallel to torch's libgomp (global scope), not to the copy the
    Aidge wheel bundles; so torch's thread count is Aidge's."""
    out = tmp_path / "ld"
    code = ("import torch, interop; m = torch.nn.Linear(16, 8); a = interop.wrap(m, (1, 16)); "
            "a(torch.randn(1, 16)).sum().backward()")
    done = subprocess.run([sys.executable, "-c", code], env=_clean(tmp_path, LD_DEBUG="bindings",
                                                                   LD_DEBUG_OUTPUT=str(out), OMP_NUM_THREADS="1"),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    bindings = [line for f in tmp_path.glob("ld.*") for line in f.read_text(errors="replace").splitlines()
                if "`GOMP_parallel'" in line and "lib_aidge_backend_cpu" in line]
    assert bindings, "Aidge's kernels bound no GOMP_parallel"
    assert all("/torch/lib/libgomp" in line for line in bindings), bindings


def test_the_slowdown_error_says_what_to_set(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.setattr(threads_policy, "openmp_state", lambda: {
        "runtimes": ["/x/torch/lib/libgomp.so.1"], "applied": "nothing (...)", "cores": 2, "load": 7.5, "threads": 2,
        "dynamic": False,
        "environment": {"OMP_NUM_THREADS": None, "OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None, "OMP_DYNAMIC": None}})
    advice = slowdown_advice()
    assert "2 thread(s)" in advice and "load 7.5 on 2 core(s)" in advice
    assert "OMP_NUM_THREADS=1" in advice and "OMP_WAIT_POLICY=PASSIVE" in advice and "openmp-threads.md" in advice
