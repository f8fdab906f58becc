"""The reproducer bundles of a merged run (:mod:`.run_merge`), rebuilt from their sources' data: the
graph, the values and ``meta.json`` copied, ``repro.py`` generated anew from the settings its source's
script holds (:func:`_rebuild_bundles`); no script text of a source is copied."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..reading import UnsafeInputError, confined, read_confined
from ..records.store import write_atomically


#: the merged run's folder of the reproducer bundles rebuilt from its sources' data (one folder a source)
MERGED_BUNDLES_DIR = "merged"
#: the largest file of a bundle a merge copies (a bundle is bounded by INTEROP_REPRO_MAX_MB, 20 MB by default)
MAX_BUNDLE_FILE_BYTES = 256 << 20
#: the largest repro.py read for its settings
MAX_REPRO_BYTES = 4 << 20


def _bundle_folders(records: list[dict]) -> list[str]:
    """The bundle folders (relative to their run) the ledger may take a defect's reproducer from:
    each reproducing record's reduced bundle, else its full one (:func:`interop.reporting.ledger.build_ledger`)."""
    out: list[str] = []
    for rec in records:
        repro = rec.get("reproducer")
        if isinstance(repro, dict) and repro.get("reproduces"):
            where = repro.get("reduced") or repro.get("path")
            if isinstance(where, str) and where and where not in out:
                out.append(where)
    return out


def _rebuild_bundles(source: Path, records: list[dict], root: Path, run_dir: Path, problems: list[str]) -> None:
    """The bundles of ``records`` (:func:`_bundle_folders`) rebuilt under ``root`` from their data: the
    graph (``model.onnx``), the values (``test_data_set_0/{input,output,grad}_*.pb``) and ``meta.json``
    copied as they are, and ``repro.py`` generated anew by :func:`interop.reproducers.script.repro_script`
    from the settings the source's repro.py holds, read as data
    (:func:`~interop.reproducers.script.script_settings`). No script text of a source is copied: a
    repro.py that is not the one its settings generate (replaced, edited) is said in ``problems``, and one
    that holds no settings to generate it from leaves its bundle without a script (its defect's report
    then says the bundle cannot be read). Every path lies in ``source`` and in ``run_dir``
    (:func:`interop.reading.confined`)."""
    from ..reproducers.script import repro_script, script_settings
    from .defect_issue_script import _BODY_MARK

    for rel in _bundle_folders(records):
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts:
            problems.append(f"{source}: reproducer bundle {rel!r}: not a folder of the run: not merged")
            continue
        bundle, target = source / rel, root / rel
        try:
            confined(bundle, source, kind="dir")
            files = [n for n in ("model.onnx", "meta.json") if os.path.lexists(bundle / n)]
            if Path(rel).name == "reduced" and os.path.lexists(bundle.parent / "meta.json"):
                files.append("../meta.json")  # a reduced bundle's facts are its parent's meta.json
            data = bundle / "test_data_set_0"
            if os.path.lexists(data):
                confined(data, source, kind="dir")
                files += [f"test_data_set_0/{p.name}" for p in sorted(data.glob("*.pb"))
                          if p.name.startswith(("input_", "output_", "grad_"))]
            copied = {name: read_confined(bundle / name, source, max_bytes=MAX_BUNDLE_FILE_BYTES) for name in files}
            text = read_confined(bundle / "repro.py", source, max_bytes=MAX_REPRO_BYTES).decode("utf-8", "replace")
        except (OSError, UnsafeInputError) as exc:
            problems.append(f"{source}: reproducer bundle {rel}: {getattr(exc, 'strerror', None) or exc}: not merged")
            continue
        try:  # its header's settings: the body (the same in every repro.py) binds names of its own
            at = text.find(_BODY_MARK)
            settings = script_settings(text[:at] if at >= 0 else text)
            script = repro_script(settings, factory="OPERATION" in settings) if {"RTOL", "ATOL"} <= set(settings) else None
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
            script = None
        if script is None:
            problems.append(f"{bundle / 'repro.py'}: not a reproducer this version generates, and no settings to "
                            "generate one from: not merged (its defect's report says the bundle cannot be read)")
        elif script != text:
            problems.append(f"{bundle / 'repro.py'}: not the script its settings generate (replaced or edited, or "
                            "written by another version): the merged run's is generated anew from its settings")
        for name, blob in copied.items():
            path = Path(os.path.normpath(target / name))
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_bytes(path, blob, run_dir)
        if script is not None:
            target.mkdir(parents=True, exist_ok=True)
            write_atomically(target / "repro.py", script, root=run_dir)


def _write_bytes(path: Path, blob: bytes, root: Path) -> None:
    """``blob`` into ``path`` (inside ``root``, :func:`interop.reading.confined`) through a temporary file."""
    confined(path.parent, root, kind="dir")
    if os.path.lexists(path):
        confined(path, root)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    fd = os.open(tmp, flags | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(blob)
    os.replace(tmp, path)
