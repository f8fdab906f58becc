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
    assert apply_default(env, runtimes=[]).startswith("set OMP_WAIT_POLICY=PASSIVE (")
    assert env == {"OMP_WAIT_POLICY": "PASSIVE"}  # never OMP_DYNAMIC: process-wide, it hangs torch's oneDNN
    for chosen in ({"OMP_NUM_THREADS": "2"}, {"OMP_WAIT_POLICY": "active"}, {"GOMP_SPINCOUNT": "1000"},
                   {"OMP_DYNAMIC": "false"}):
        env = dict(chosen)
        assert apply_default(env, runtimes=[]).startswith("nothing (the caller set")
        assert env == chosen
    env = {}  # a runtime loaded already (a path that cannot be opened here: nothing to set on it)
    assert "loaded before interop" in apply_default(env, runtimes=["/x/torch/lib/libgomp.so.1"]) and env == {}
    apply_default()  # this process's own default back (the calls above set the module's state)
    env = {"INTEROP_OPENMP_POLICY": "keep"}
    assert apply_default(env, runtimes=[]).startswith("nothing (INTEROP_OPENMP_POLICY=keep)")
    assert env == {"INTEROP_OPENMP_POLICY": "keep"}


def test_import_interop_first_sets_the_wait_policy_torch_then_reads(tmp_path):
    # dyn-var of this thread: outside Aidge's calls (torch's), inside one, and after it
    probe = ("from interop import threads_policy as t; s = t.openmp_state(); "
             "inside = []\nwith t.aidge_dynamic_teams():\n    inside = [bool(g()) for g, _ in t._runtime_calls()]\n"
             "print(os.environ.get('OMP_WAIT_POLICY'), s['dynamic'], inside, t.openmp_state()['dynamic'], '|', t.APPLIED)")
    code = "import os, interop, torch\n" + probe
    done = subprocess.run([sys.executable, "-c", code], env=_clean(tmp_path), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("PASSIVE False [True] False | set OMP_WAIT_POLICY=PASSIVE"), done.stdout
    # imported after torch, the runtime has read its settings: dynamic teams for Aidge's calls only
    code = "import os, torch, interop\n" + probe
    done = subprocess.run([sys.executable, "-c", code], env=_clean(tmp_path), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("None False [True] False | dynamic teams for Aidge's calls only"), done.stdout
    # a caller's choice is kept
    done = subprocess.run([sys.executable, "-c", code], env=_clean(tmp_path, OMP_NUM_THREADS="2"),
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.startswith("None False [False] False | nothing (the caller set OMP_NUM_THREADS=2)"), done.stdout


def test_torch_s_conv_backward_after_import_interop_returns(tmp_path):
    """The earlier default (dynamic teams for the whole process: ``OMP_DYNAMIC=TRUE`` or
    ``omp_set_dynamic(1)`` at import) made torch's own oneDNN Conv2d backward wait for ever for
    team members that were never started, at load above the cores (4 of 4 runs past 45-180 s at
    load 5-8, 2026-12-04; ~0.1-3 s otherwise). Not a timing: the bound only tells a hang from a
    call that returned, both import orders, and a wrapped model's first backward (torch's
    reference gradient runs there) too."""
    for first in ("torch, interop", "interop, torch"):
        code = (f"import {first}\nm = torch.nn.Conv2d(3, 4, 3)\nx = torch.randn(2, 3, 10, 10, requires_grad=True)\n"
                "m(x).sum().backward()\na = interop.wrap(m, (2, 3, 10, 10))\n"
                "a(torch.randn(2, 3, 10, 10, requires_grad=True)).sum().backward()\nprint('returned')")
        done = subprocess.run([sys.executable, "-c", code], env=_clean(tmp_path), capture_output=True, text=True,
                              timeout=240)  # ~10-35 s at load 4-8; the old default: never
        assert done.returncode == 0 and done.stdout.strip() == "returned", (first, done.stderr[-2000:])


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
