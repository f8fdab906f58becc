"""The OpenMP default of the library, and what to say when Aidge is slow for the machine's load.

What was measured (docs/openmp-threads.md, 2026-12-03, this project's 2-core VM):

- In a process that imports torch before Aidge (every user of :func:`interop.wrap`), Aidge's
  CPU kernels do **not** run on the libgomp that aidge_backend_cpu bundles: their
  ``GOMP_parallel`` binds to torch's ``libgomp.so.1``, which torch loads into the global symbol
  scope (``LD_DEBUG=bindings``). Aidge and torch share one OpenMP pool: its size is
  ``torch.get_num_threads()`` (2 on that VM when ``OMP_NUM_THREADS`` is unset), and setting the
  thread count of aidge_backend_cpu's own copy changes nothing.
- Aidge 0.10.1's kernels open a parallel region for tiny work (the FC kernels: ``if (n > 15)``
  elements), where torch's do not (grain size 32,768). With libgomp's default wait policy
  (threads spin ~300,000 iterations before sleeping) on a machine with more runnable threads
  than cores, each region waits for the scheduler to give the spinning team its turn: the
  README's 3-layer MLP's Aidge backward took 42-62 ms against 0.03-0.06 ms with one thread or
  0.15 ms with ``OMP_WAIT_POLICY=PASSIVE`` (load 6-7 on 2 cores). On an idle machine the three
  are alike.

Only one thread per region was robust (0.04-0.10 ms beside two CPU hogs at load 6-9, where
PASSIVE alone still gave 0.3-14 ms), and one thread everywhere would take the caller's torch
parallelism. So the library's default, when the caller set none of :data:`CALLER_SETTINGS`:

- **dynamic teams for Aidge's calls only** (OpenMP's ``dyn-var``, :func:`aidge_dynamic_teams`
  around each scheduler forward and backward of the bridge): libgomp then sizes each of Aidge's
  parallel regions to the cores minus the 15-minute load average (at least one thread): all
  threads on an idle machine, one on a machine the load already fills. ``dyn-var`` is a
  per-thread setting, switched on for the call and back after it. **Never process-wide**: torch's
  oneDNN kernels size their work to the full team and wait for members a dynamic team did not
  start; with ``OMP_DYNAMIC=TRUE`` or ``omp_set_dynamic(1)`` for the whole process, a plain
  ``torch.nn.Conv2d(3, 4, 3)`` backward on a (2, 3, 10, 10) input never returned at load 4-8 on
  2 cores (earlier default, measured 2026-12-04, docs/openmp-threads.md);
- **passive waiting**, only when no OpenMP runtime is loaded yet (``import interop`` before
  torch): ``OMP_WAIT_POLICY=PASSIVE`` in ``os.environ`` (applied once at ``import interop``,
  :func:`apply_default`). libgomp reads it once, at load, and has no call to change it afterwards.

Passive waiting is the one process-wide setting the library changes, only then, and it applies
to torch's own parallel regions too (they share the runtime); ``INTEROP_OPENMP_POLICY=keep``
leaves everything alone. The 15-minute average lags: load that started minutes ago is not yet
seen, and :func:`slowdown_advice` then says in ModelTester's slowdown error what to set.

Standard library only: ``import interop`` stays cheap and loads neither torch nor Aidge.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import MutableMapping

from .env import VARIABLES

__all__ = ["POLICY_ENV", "CALLER_SETTINGS", "APPLIED", "apply_default", "aidge_dynamic_teams",
           "loaded_openmp_runtimes", "openmp_state", "slowdown_advice"]

#: ``keep``: the library changes nothing about OpenMP
POLICY_ENV = "INTEROP_OPENMP_POLICY"
#: the settings that say the caller chose (any of them set: the library changes nothing)
CALLER_SETTINGS = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_DYNAMIC")

#: what :func:`apply_default` did in this process (None before it ran)
APPLIED: str | None = None
#: whether Aidge's calls run with dynamic teams (:func:`aidge_dynamic_teams`; set by :func:`apply_default`)
_SCOPED = False
#: the loaded runtimes' (omp_get_dynamic, omp_set_dynamic), resolved at the first Aidge call
_RUNTIME_CALLS: list | None = None
#: path -> (omp_get_dynamic, omp_set_dynamic) of each runtime opened so far (:func:`_open_runtime`)
_OPENED: dict[str, tuple] = {}
_RUNTIME_LOCK = threading.RLock()


def loaded_openmp_runtimes(maps: str = "/proc/self/maps") -> list[str]:
    """The GNU OpenMP runtimes mapped in this process (paths), in no particular order; empty
    where ``/proc`` is not readable."""
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            return sorted({line.split()[-1] for line in f if "libgomp" in line})
    except OSError:
        return []


def _open_runtime(path: str) -> tuple | None:
    """``(omp_get_dynamic, omp_set_dynamic)`` of the OpenMP runtime at ``path`` if it is mapped in
    this process (``RTLD_NOLOAD``: never loading one), else None. The one place the library opens
    a runtime through ctypes; each path opened once (cached, under a lock), a failure not cached."""
    calls = _OPENED.get(path)
    if calls is None:
        with _RUNTIME_LOCK:
            calls = _OPENED.get(path)
            if calls is None:
                try:
                    lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
                    get, set_ = lib.omp_get_dynamic, lib.omp_set_dynamic
                    set_.restype = None  # void omp_set_dynamic(int): no int made of nothing per call
                    calls = _OPENED[path] = (get, set_)
                except (OSError, AttributeError):
                    return None
    return calls


def _runtime_calls() -> list:
    """``(omp_get_dynamic, omp_set_dynamic)`` of each OpenMP runtime mapped now (never loading
    one); resolved once, at the first Aidge call (Aidge's import has loaded a runtime by then)."""
    global _RUNTIME_CALLS
    if _RUNTIME_CALLS is None:
        with _RUNTIME_LOCK:
            if _RUNTIME_CALLS is None:
                _RUNTIME_CALLS = [c for c in map(_open_runtime, loaded_openmp_runtimes()) if c is not None]
    return _RUNTIME_CALLS


class _Nothing:
    """The scope when the library's default is not in force: enters and leaves, nothing else
    (stateless, one instance shared by every thread)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        return False


class _DynamicTeams:
    """Dynamic teams on this thread's runtimes for one call: each runtime whose dyn-var is off is
    switched on at enter and back off at exit; one already on is left alone (a nested call, a
    caller's own setting). A class, not a generator: as a ``contextlib.contextmanager`` the scope
    cost ~1 us a call more, 0.6 us more where the default is off (docs/openmp-threads.md, "What
    the scope costs per Aidge call")."""

    __slots__ = ("_switched",)

    def __enter__(self) -> None:
        switched = []
        for get, set_ in (_RUNTIME_CALLS if _RUNTIME_CALLS is not None else _runtime_calls()):
            if not get():
                set_(1)
                switched.append(set_)
        self._switched = switched

    def __exit__(self, *exc) -> bool:
        for set_ in self._switched:
            set_(0)
        return False


_NOTHING = _Nothing()


def aidge_dynamic_teams() -> _DynamicTeams | _Nothing:
    """Around one of Aidge's calls (the bridge's scheduler forward and backward), as ``with
    aidge_dynamic_teams():``: dynamic teams on this thread's runtimes for the call, each set back
    to what it was after it. Nothing when the library's default is not in force (the caller
    chose, ``INTEROP_OPENMP_POLICY=keep``). Only Aidge's own kernels run inside, whose regions
    are work-sharing loops that any team size computes; torch's run outside it (see the module's
    docstring on oneDNN). Cost per call: docs/openmp-threads.md."""
    return _DynamicTeams() if _SCOPED else _NOTHING


def apply_default(environ: MutableMapping[str, str] | None = None, runtimes: list[str] | None = None) -> str:
    """Apply the library's OpenMP default (see the module's docstring) and return what it did,
    in words (also kept in :data:`APPLIED`). ``environ`` / ``runtimes``: for tests (default:
    ``os.environ`` and :func:`loaded_openmp_runtimes`)."""
    global APPLIED, _SCOPED
    environ = os.environ if environ is None else environ
    if VARIABLES[POLICY_ENV].raw(environ).lower() == "keep":  # read at import: checked before a run (env.check)
        APPLIED, _SCOPED = f"nothing ({POLICY_ENV}=keep)", False
    elif chosen := [k for k in CALLER_SETTINGS if environ.get(k, "").strip()]:
        APPLIED = "nothing (the caller set " + ", ".join(f"{k}={environ[k]}" for k in chosen) + ")"
        _SCOPED = False
    elif loaded_openmp_runtimes() if runtimes is None else runtimes:
        APPLIED, _SCOPED = ("dynamic teams for Aidge's calls only (an OpenMP runtime was loaded before interop: "
                            "its wait policy is fixed)"), True
    else:
        environ["OMP_WAIT_POLICY"] = "PASSIVE"
        APPLIED, _SCOPED = ("set OMP_WAIT_POLICY=PASSIVE (nothing set by the caller, no OpenMP runtime loaded yet); "
                            "dynamic teams for Aidge's calls only"), True
    return APPLIED


def openmp_state() -> dict:
    """What decides Aidge's CPU parallelism in this process: the OpenMP runtimes mapped, the
    pool's thread count (torch's, which Aidge's kernels share once torch is loaded), the
    settings as the environment has them, the machine's cores and load, and what the library
    did at import."""
    state: dict = {"runtimes": loaded_openmp_runtimes(), "applied": APPLIED, "aidge_dynamic": _SCOPED,
                   "environment": {k: os.environ.get(k) for k in CALLER_SETTINGS},
                   "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()}
    try:
        state["load"] = os.getloadavg()[0]
    except OSError:
        state["load"] = None

    torch = sys.modules.get("torch")
    state["threads"] = torch.get_num_threads() if torch is not None else None
    state["dynamic"] = None
    if state["runtimes"]:
        shared = next((p for p in state["runtimes"] if "/torch/" in p), state["runtimes"][0])
        calls = _open_runtime(shared)
        if calls is not None:  # this thread's dyn-var, on torch's runtime (the one Aidge's kernels call)
            state["dynamic"] = bool(calls[0]())
    return state


def slowdown_advice() -> str:
    """The sentence ModelTester's slowdown error adds: the pool's threads, its wait policy, the
    load, and what to set when the threads' spinning (not Aidge's kernels) may be the cause."""
    s = openmp_state()
    policy = s["environment"]["OMP_WAIT_POLICY"] or "unset (libgomp spins before sleeping)"
    load = "unknown" if s["load"] is None else f"{s['load']:.1f}"
    teams = "on" if s.get("dynamic") else ("for Aidge's calls" if s.get("aidge_dynamic") else "off")
    head = (f"OpenMP: Aidge's kernels share torch's pool ({s['threads']} thread(s), dynamic teams "
            f"{teams}), wait policy {policy}, load {load} on {s['cores']} core(s); "
            f"interop at import: {s['applied']}.")
    if s["threads"] == 1 or (s["environment"]["OMP_WAIT_POLICY"] or "").upper() == "PASSIVE":
        return head
    return (head + " With more runnable threads than cores, each of Aidge's parallel regions waits for a "
            "scheduler slice (measured: 12-174 ms instead of 0.02-0.10 ms with one thread for a 3-layer MLP's "
            "backward): set "
            "OMP_WAIT_POLICY=PASSIVE or OMP_NUM_THREADS=1 before torch is imported (or import interop "
            "before torch), or raise max_slowdown_ratio. docs/openmp-threads.md")
