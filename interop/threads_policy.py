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
parallelism. So the library's default, applied once at ``import interop`` (:func:`apply_default`),
when the caller set none of :data:`CALLER_SETTINGS`:

- **dynamic teams** (OpenMP's ``dyn-var``): libgomp then sizes each parallel region to the cores
  minus the 15-minute load average (at least one thread): all threads on an idle machine, one
  on a machine the load already fills. Before the runtime is loaded: ``OMP_DYNAMIC=TRUE`` in
  ``os.environ``; after (torch imported first): ``omp_set_dynamic(1)`` on the loaded runtime(s),
  for regions the importing thread starts;
- **passive waiting**, only when no OpenMP runtime is loaded yet (``import interop`` before
  torch): ``OMP_WAIT_POLICY=PASSIVE`` in ``os.environ``. libgomp reads it once, at load, and has
  no call to change it afterwards.

These are the process-wide settings the library changes, only then, and they apply to torch's
own parallel regions too (they share the runtime); ``INTEROP_OPENMP_POLICY=keep`` leaves
everything alone. The 15-minute average lags: load that started minutes ago is not yet seen, and
:func:`slowdown_advice` then says in ModelTester's slowdown error what to set.

Standard library only: ``import interop`` stays cheap and loads neither torch nor Aidge.
"""
from __future__ import annotations

import os
from typing import MutableMapping

__all__ = ["POLICY_ENV", "CALLER_SETTINGS", "APPLIED", "apply_default", "loaded_openmp_runtimes",
           "openmp_state", "slowdown_advice"]

#: ``keep``: the library changes nothing about OpenMP
POLICY_ENV = "INTEROP_OPENMP_POLICY"
#: the settings that say the caller chose (any of them set: the library changes nothing)
CALLER_SETTINGS = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_DYNAMIC")

#: what :func:`apply_default` did in this process (None before it ran)
APPLIED: str | None = None


def loaded_openmp_runtimes(maps: str = "/proc/self/maps") -> list[str]:
    """The GNU OpenMP runtimes mapped in this process (paths), in no particular order; empty
    where ``/proc`` is not readable."""
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            return sorted({line.split()[-1] for line in f if "libgomp" in line})
    except OSError:
        return []


def _set_dynamic(paths: list[str]) -> list[str]:
    """``omp_set_dynamic(1)`` on each loaded runtime (never loading one); the basenames done."""
    import ctypes

    done = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            lib.omp_set_dynamic(1)
            done.append(os.path.basename(path))
        except (OSError, AttributeError):
            continue
    return done


def apply_default(environ: MutableMapping[str, str] | None = None, runtimes: list[str] | None = None) -> str:
    """Apply the library's OpenMP default (see the module's docstring) and return what it did,
    in words (also kept in :data:`APPLIED`). ``environ`` / ``runtimes``: for tests (default:
    ``os.environ`` and :func:`loaded_openmp_runtimes`)."""
    global APPLIED
    environ = os.environ if environ is None else environ
    if environ.get(POLICY_ENV, "").strip().lower() == "keep":
        APPLIED = f"nothing ({POLICY_ENV}=keep)"
    elif chosen := [k for k in CALLER_SETTINGS if environ.get(k, "").strip()]:
        APPLIED = "nothing (the caller set " + ", ".join(f"{k}={environ[k]}" for k in chosen) + ")"
    elif (loaded := loaded_openmp_runtimes() if runtimes is None else runtimes):
        done = _set_dynamic(loaded)
        APPLIED = (f"omp_set_dynamic(1) on {', '.join(done) or 'no runtime'} (an OpenMP runtime was loaded before "
                   "interop: its wait policy is fixed)")
    else:
        environ["OMP_WAIT_POLICY"] = "PASSIVE"
        environ["OMP_DYNAMIC"] = "TRUE"
        APPLIED = ("set OMP_WAIT_POLICY=PASSIVE, OMP_DYNAMIC=TRUE (nothing set by the caller, no OpenMP runtime "
                   "loaded yet)")
    return APPLIED


def openmp_state() -> dict:
    """What decides Aidge's CPU parallelism in this process: the OpenMP runtimes mapped, the
    pool's thread count (torch's, which Aidge's kernels share once torch is loaded), the
    settings as the environment has them, the machine's cores and load, and what the library
    did at import."""
    state: dict = {"runtimes": loaded_openmp_runtimes(), "applied": APPLIED,
                   "environment": {k: os.environ.get(k) for k in CALLER_SETTINGS},
                   "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()}
    try:
        state["load"] = os.getloadavg()[0]
    except OSError:
        state["load"] = None
    import sys

    torch = sys.modules.get("torch")
    state["threads"] = torch.get_num_threads() if torch is not None else None
    state["dynamic"] = None
    if state["runtimes"]:
        import ctypes

        shared = next((p for p in state["runtimes"] if "/torch/" in p), state["runtimes"][0])
        try:  # this thread's dyn-var, on torch's runtime (the one Aidge's kernels call)
            state["dynamic"] = bool(ctypes.CDLL(shared, mode=os.RTLD_NOLOAD | os.RTLD_LAZY).omp_get_dynamic())
        except (OSError, AttributeError):
            pass
    return state


def slowdown_advice() -> str:
    """The sentence ModelTester's slowdown error adds: the pool's threads, its wait policy, the
    load, and what to set when the threads' spinning (not Aidge's kernels) may be the cause."""
    s = openmp_state()
    policy = s["environment"]["OMP_WAIT_POLICY"] or "unset (libgomp spins before sleeping)"
    load = "unknown" if s["load"] is None else f"{s['load']:.1f}"
    head = (f"OpenMP: Aidge's kernels share torch's pool ({s['threads']} thread(s), dynamic teams "
            f"{'on' if s.get('dynamic') else 'off'}), wait policy {policy}, load {load} on {s['cores']} core(s); "
            f"interop at import: {s['applied']}.")
    if s["threads"] == 1 or (s["environment"]["OMP_WAIT_POLICY"] or "").upper() == "PASSIVE":
        return head
    return (head + " With more runnable threads than cores, each of Aidge's parallel regions waits for a "
            "scheduler slice (measured: 12-174 ms instead of 0.02-0.10 ms with one thread for a 3-layer MLP's "
            "backward): set "
            "OMP_WAIT_POLICY=PASSIVE or OMP_NUM_THREADS=1 before torch is imported (or import interop "
            "before torch), or raise max_slowdown_ratio. docs/openmp-threads.md")
