"""Running a bundle's ``repro.py`` fresh, as an Aidge developer runs it: ``python -I`` with torch
and interop made unimportable (:func:`run_repro`, :func:`run_fresh`), or through this process's
fork server (:class:`FreshServer`, :func:`start_fresh_server`, :func:`stop_fresh_server`), and
reading the verdict of such a run (:func:`verdict_of`, :func:`phase_of`).
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

REPRO_TIMEOUT_S = 120

#: what runs a repro.py "fresh": isolated mode, torch and interop unimportable
_FRESH = ("import runpy, sys\n"
          "for name in ('torch', 'interop'):\n"
          "    sys.modules[name] = None\n"
          "sys.argv = sys.argv[1:]\n"
          "runpy.run_path(sys.argv[0], run_name='__main__')\n")


def _fresh_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")}
    env["OMP_NUM_THREADS"] = "1"
    return env


def verdict_of(code: int | None, output: str) -> dict[str, Any]:
    """``{"exit": code, "line": ...}``: a repro.py run's verdict line (its last DEFECT PRESENT, FIXED or
    cannot-run line, else the output's last line)."""
    lines = [line for line in output.splitlines() if line.startswith(("DEFECT PRESENT", "FIXED", "cannot run"))]
    line = lines[-1] if lines else (output.strip().splitlines() or [""])[-1]
    return {"exit": code, "line": line[:2000]}


def run_repro(folder: Path, timeout: float = REPRO_TIMEOUT_S) -> dict[str, Any]:
    """``folder/repro.py`` in a fresh interpreter: ``{"exit": status, "line": its verdict line}``
    (a negative status: killed by that signal). Through this process's :class:`FreshServer` when one
    was started (a fork of an interpreter that imported numpy, onnx and Aidge only: ~0.1 s instead of
    ~2 s of imports), else ``python -I`` with torch and interop made unimportable."""
    server = _SERVER
    if server is not None:
        result = server.run(folder, timeout)
        if result is not None:
            return result
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _FRESH, str(folder / "repro.py")], cwd=folder,
                              env=_fresh_env(), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"exit": None, "line": f"timed out after {timeout:g} s"}
    return verdict_of(done.returncode, done.stdout + "\n" + done.stderr)



def run_fresh(script: Path, timeout: float = REPRO_TIMEOUT_S) -> dict[str, Any]:
    """``script`` run as a reproducer's user runs it, in its folder, in a fresh interpreter
    (``python -I``, torch and interop unimportable): ``{"exit": status, or None when it timed out,
    "output": its stdout and stderr}``."""
    script = Path(os.path.abspath(script))
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _FRESH, str(script)], cwd=script.parent, env=_fresh_env(),
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"exit": None, "output": f"(timed out after {timeout:g} s)"}
    return {"exit": done.returncode, "output": done.stdout + done.stderr}

#: the fork server's program: imports numpy, onnx and Aidge (torch and interop unimportable), then
#: for each request line (a bundle folder) forks a child that runs its repro.py as __main__
_SERVER_CODE = r"""
import json, os, select, signal, sys, runpy, traceback
for name in ("torch", "interop"):
    sys.modules[name] = None
import numpy, onnx, aidge_core, aidge_backend_cpu, aidge_onnx
out = os.fdopen(os.dup(1), "w")
for line in sys.stdin:
    req = json.loads(line)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        os.dup2(w, 2)
        code = 0
        try:
            os.chdir(req["folder"])
            sys.argv = [os.path.join(req["folder"], "repro.py")] + list(req.get("args") or [])
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 3
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    os.close(w)
    chunks, killed = [], False
    while True:
        ready, _, _ = select.select([r], [], [], req["timeout"])
        if not ready:
            os.kill(pid, signal.SIGKILL)
            killed = True
            break
        data = os.read(r, 65536)
        if not data:
            break
        chunks.append(data)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    code = None if killed else (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status))
    text = b"".join(chunks).decode(errors="replace")[-20000:]
    out.write(json.dumps({"exit": code, "output": text}) + "\n")
    out.flush()
"""


class FreshServer:
    """One clean interpreter per process that writes bundles (see :func:`run_repro`). Started by the
    parent of the case children (they inherit its pipes); one request at a time."""

    def __init__(self, python: str | Path | None = None):
        self.owner = os.getpid()
        self.proc = subprocess.Popen([str(python or sys.executable), "-I", "-c", _SERVER_CODE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_fresh_env(),
                                     text=True, bufsize=1, start_new_session=True)

    def alive(self) -> bool:
        """Whether the server runs. Only its parent may ask the OS (``Popen.poll`` in a forked child
        waits for a process that is not its child, and reads that as an exit); a child tells by
        whether the server's pid still exists."""
        if os.getpid() == self.owner:
            return self.proc.poll() is None
        try:
            os.kill(self.proc.pid, 0)
        except OSError:
            return False
        return True

    def run(self, folder: Path, timeout: float, args: tuple[str, ...] = ()) -> dict[str, Any] | None:
        """The verdict (``args``: repro.py's own, as ``--save-actual DIR``), or None when the server is
        gone (the caller falls back to a subprocess)."""
        if not self.alive():
            return None
        try:
            self.proc.stdin.write(json.dumps({"folder": str(folder), "timeout": timeout, "args": list(args)}) + "\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout + 30)
            if not ready:  # the server itself hangs: it goes, the caller falls back
                self.close()
                return None
            answer = json.loads(self.proc.stdout.readline())
        except (OSError, ValueError):
            return None
        if answer.get("exit") is None:  # killed at its time-out, as run_repro's subprocess says it
            return {"exit": None, "line": f"timed out after {timeout:g} s"}
        return verdict_of(answer.get("exit"), answer.get("output") or "")

    def close(self) -> None:
        if os.getpid() != self.owner:  # a child's copy: the server is its parent's
            return
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


_SERVER: FreshServer | None = None


def start_fresh_server() -> None:
    """Start this process's :class:`FreshServer` (once; its children inherit it)."""
    global _SERVER
    if _SERVER is None or not _SERVER.alive():
        try:
            _SERVER = FreshServer()
        except OSError:
            _SERVER = None


def stop_fresh_server() -> None:
    global _SERVER
    if _SERVER is not None:
        _SERVER.close()
        _SERVER = None


def phase_of(line: str | None) -> str:
    """The phase a reproducer's verdict line names (``import``, ``compile``, ``forward``, ``backward``)."""
    text = (line or "").removeprefix("DEFECT PRESENT: ")
    return text.split(":")[0].split(" ")[0].split(",")[0]


def _reproduces(result: dict[str, Any]) -> bool:
    code = result.get("exit")
    return code == 1 or (isinstance(code, int) and code < 0)
