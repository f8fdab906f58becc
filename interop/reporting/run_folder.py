"""A findings run's folder (:mod:`.run`): the commit it is made at, ``results/runs/<UTC time>-<commit>-<pid>``
created exclusively (:func:`new_run_dir`), ``results/latest`` pointed at it (:func:`point_latest`), and a
disk that refuses the run's files: the errors that mean so (:data:`WRITE_ERRNOS`), the one line that says
it (:func:`_cannot_write`) and this process's ``.partial`` files removed (:func:`_remove_partials`)."""
from __future__ import annotations

import contextlib
import datetime
import errno
import os
import subprocess
from pathlib import Path


#: the errors of a disk that cannot take the run's files: full, over quota, read-only, not ours,
#: a file too large (RLIMIT_FSIZE), an I/O error
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO})


def _commit(cwd: Path) -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], cwd=cwd, capture_output=True, text=True,
                              timeout=30)
        return done.stdout.strip() or "nogit"
    except (OSError, subprocess.SubprocessError):
        return "nogit"


def new_run_dir(results: Path, commit: str) -> Path:
    """``results/runs/<UTC time>-<commit>-<pid>``, created exclusively."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    run_dir = results / "runs" / f"{stamp}-{commit}-{os.getpid()}"
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    run_dir.mkdir()  # FileExistsError rather than sharing a directory
    return run_dir


def point_latest(results: Path, run_dir: Path) -> str | None:
    """Make ``results/latest`` point at ``run_dir`` (relative link, replaced atomically). Only a
    link is replaced: anything else in its place (a directory, a file: someone's) is left as it
    is, and the returned line says so (None when the link points at ``run_dir``)."""
    link = results / "latest"
    if os.path.lexists(link) and not os.path.islink(link):
        return (f"interop.reporting.run: {link} is not a symbolic link (a "
                f"{'directory' if os.path.isdir(link) else 'file'}): left as it is, not pointed at {run_dir.name}")
    tmp = results / f".latest.{os.getpid()}.partial"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_dir.relative_to(results))
    try:
        os.replace(tmp, link)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return None


def _cannot_write(exc: OSError, run_dir: Path | None) -> str:
    """The error of a disk that refused a file of the run: the path, the system's words, what is left."""
    where = exc.filename or (str(run_dir) if run_dir is not None else "results/")
    if run_dir is None:
        left = "; no run was started"
    elif os.path.lexists(run_dir / "run.json"):
        left = f"; the run {run_dir} has its report, results/latest or the history was not updated"
    else:
        left = f"; the run {run_dir} has no report (its records, if any, are there)"
    return (f"interop.reporting.run: cannot write {where}: {exc.strerror or exc} (the results folder is full, "
            f"read-only or not writable){left}\n")


def _remove_partials(folders: list[Path]) -> None:
    """This process's temporaries (``.<name>.<pid>.partial``, ``.pytest.txt.partial``) in ``folders``:
    a run that stops on a full or read-only disk leaves none behind. Another process's are its own."""
    mine = (f".{os.getpid()}.partial", ".pytest.txt.partial")
    for folder in folders:
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder):
                if entry.name.startswith(".") and entry.name.endswith(mine) and not entry.is_dir(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
