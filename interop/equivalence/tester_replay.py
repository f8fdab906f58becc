"""The command that replays a failing case (:func:`replay_command`, in :class:`~interop.equivalence.tester.ModelTester`'s
failures and the records' ``replay`` field) and what it needs beyond the seed (:data:`REPLAY_CONTEXT`,
filled by the pytest plugin)."""
from __future__ import annotations

import os
import shlex
from typing import Any

from ..env import given, replay_variables
from . import policy


SEED_ENV = policy.SEED_ENV


#: what a replay needs beyond the seed, filled by the pytest plugin: the rootdir pytest ran in
#: and the command-line options that selected the case (``--backend=cuda``)
REPLAY_CONTEXT: dict[str, Any] = {"rootdir": None, "options": []}


def replay_command(seed: int | None, nodeid: str | None = None) -> str:
    """The shell command that reruns the current pytest test (or ``nodeid``) with the same
    seed (None: the test's own), from a fresh shell: the rootdir, the environment that
    selected the case (the variables declared ``replay`` in :data:`interop.env.VARIABLES`, and
    OpenMP's thread count) and the options included."""
    if nodeid is None:
        current = os.environ.get("PYTEST_CURRENT_TEST", "")
        nodeid = current.rsplit(" (", 1)[0] if current else ""
    target = shlex.quote(nodeid) if nodeid else "<your test>"
    env = [f"{name}={shlex.quote(value)}" for name in replay_variables() if (value := given(name))]
    if os.environ.get("OMP_NUM_THREADS"):
        env.append(f"OMP_NUM_THREADS={shlex.quote(os.environ['OMP_NUM_THREADS'])}")
    options = [shlex.quote(o) for o in REPLAY_CONTEXT.get("options") or []]
    seed_env = [] if seed is None else [f"{SEED_ENV}={seed}"]
    command = " ".join([*env, *seed_env, "python -m pytest", *options, target])
    rootdir = REPLAY_CONTEXT.get("rootdir")
    return f"cd {shlex.quote(str(rootdir))} && {command}" if rootdir else command
