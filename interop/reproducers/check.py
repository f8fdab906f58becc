"""Do a run's reproducers work where an Aidge developer runs them? Random bundles of a run, each
run in a virtual environment that holds numpy, onnx and the Aidge packages only (no torch, no
this suite), as that developer would:

1. ``python repro.py`` exits 1 and names the phase the case's record names;
2. for a value or shape mismatch, ``python repro.py --save-actual D``, Aidge's own outputs copied
   over the expected ones, then ``python repro.py`` exits 0 (the comparison compares).

Usage::

    python -m interop.reproducers.check RUN_DIR [--sample N | --all] [--seed S] [--venv DIR] [--json FILE]
                                              [--timeout S] [--fork-server]

``--all`` checks every reproducing bundle rather than a sample, and prints the run's counts
(:func:`run_counts`: bundles written, reproducing, smallest graph 1 / 2-3 / 4 or more nodes, and
each bundle that does not reproduce with its reason). ``--json FILE`` writes the per-bundle results
and those counts (atomically).

``--venv DIR`` is created when missing (``python -m venv``, then ``pip install`` of numpy, onnx,
aidge-core, aidge-backend-cpu and aidge-onnx at the versions installed here) and checked to hold
no torch. Prints one line per bundle and a summary; exit 0 when every bundle behaved, 1 otherwise,
2 for bad input. ``nox -s repro-check`` runs it on ``results/latest``.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from .run import FreshServer, phase_of, verdict_of

__all__ = ["bundles_of", "make_venv", "check_bundle", "main", "PACKAGES", "run_counts"]

#: what the reproducers' environment holds (distribution names), pinned to the versions here
PACKAGES = ("numpy", "onnx", "aidge-core", "aidge-backend-cpu", "aidge-onnx")
_KINDS = ("import", "compile", "forward", "backward")


def bundles_of(run_dir: Path) -> list[dict[str, Any]]:
    """The run's reproducing bundles: ``{"folder", "nodeid", "phase", "error"}``, the reduced graph
    when one was kept, else the full one (when it was kept)."""
    records = {}
    path = run_dir / "records.jsonl"
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("reproducer"), dict):
                records[rec["reproducer"].get("path")] = rec
    out = []
    for meta_path in sorted((run_dir / "reproducers").glob("*/meta.json")):
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if not meta.get("reproduces"):
            continue
        folder = meta_path.parent
        reduced = folder / "reduced"
        chosen = reduced if (reduced / "repro.py").is_file() else folder
        if not (chosen / "repro.py").is_file():
            continue
        rec = records.get(folder.relative_to(run_dir).as_posix(), {})
        out.append({"folder": chosen, "nodeid": meta.get("case"), "phase": rec.get("phase"),
                    "category": rec.get("category"), "timed_out": bool(rec.get("timed_out")),
                    "error": rec.get("error") or meta.get("failure"), "calls": meta.get("calls", 1)})
    return out


def run_counts(run_dir: Path) -> dict[str, Any]:
    """The run's bundles counted from their ``meta.json``: ``written``, ``reproducing``, the smallest
    reproducing graph's size (``nodes_1``, ``nodes_2_3``, ``nodes_4_plus``: the reduced graph when one
    was kept, else the full one; ``nodes_unknown`` for a bundle without a graph, as Aidge's own
    configurations), and ``not_reproducing``: each such bundle's folder, its script's line and the
    reduction's reason."""
    out: dict[str, Any] = {"written": 0, "reproducing": 0, "nodes_1": 0, "nodes_2_3": 0, "nodes_4_plus": 0,
                           "nodes_unknown": 0, "not_reproducing": []}
    for meta_path in sorted((run_dir / "reproducers").glob("*/meta.json")):
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if not isinstance(meta, dict):
            continue
        out["written"] += 1
        if not meta.get("reproduces"):
            out["not_reproducing"].append({"bundle": meta_path.parent.name,
                                           "line": str((meta.get("repro") or {}).get("line") or "")[:300],
                                           "why": (meta.get("reduced") or {}).get("why") or meta.get("expected_error")})
            continue
        out["reproducing"] += 1
        reduced = meta.get("reduced") if isinstance(meta.get("reduced"), dict) else {}
        nodes = reduced.get("nodes") if reduced.get("kept") else meta.get("nodes")
        if not isinstance(nodes, int) or nodes < 1:
            out["nodes_unknown"] += 1
        else:
            out["nodes_1" if nodes == 1 else "nodes_2_3" if nodes <= 3 else "nodes_4_plus"] += 1
    return out


def make_venv(venv: Path) -> Path:
    """The environment's python, the environment created when missing."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pins = [f"{name}=={metadata.version(name)}" for name in PACKAGES]
        subprocess.run([str(python), "-m", "pip", "install", "-q", *pins], check=True)
    probe = subprocess.run([str(python), "-I", "-c", "import importlib.util as u; print(u.find_spec('torch') is None, "
                                               "u.find_spec('interop') is None)"],
                           capture_output=True, text=True, check=True)
    if probe.stdout.split() != ["True", "True"]:
        raise SystemExit(f"{venv}: torch or interop is importable there; a reproducer must run without them")
    return python


#: seconds a bundle's script may run here (``--timeout``)
TIMEOUT_S = 300


#: ``--fork-server``: one interpreter of the environment that imported numpy, onnx and Aidge, forked
#: per bundle (interop.reproducers.run.FreshServer), instead of a new interpreter per run (~2 s of imports each)
_SERVER = None


def _run(python: Path, folder: Path, *extra: str) -> tuple[int | None, str]:
    if _SERVER is not None:
        got = _SERVER.run(folder, TIMEOUT_S, tuple(extra))
        if got is not None:
            return got["exit"], got["line"]
    env = {"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1", "HOME": os.environ.get("HOME", "/tmp")}
    try:
        done = subprocess.run([str(python), "repro.py", *extra], cwd=folder, capture_output=True, text=True,
                              timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:  # a hang bundle (a case that timed out) hangs again: its exit is None
        return None, f"timed out after {TIMEOUT_S:g} s"
    verdict = verdict_of(done.returncode, done.stdout + "\n" + done.stderr)
    return verdict["exit"], verdict["line"]


def check_bundle(python: Path, bundle: dict[str, Any]) -> dict[str, Any]:
    """Both checks of one bundle, on a copy (the run's files are never changed)."""
    with tempfile.TemporaryDirectory(prefix="repro-check-") as tmp:
        work = Path(tmp) / "bundle"
        shutil.copytree(bundle["folder"], work)
        code, line = _run(python, work)
        out = {"bundle": str(bundle["folder"]), "exit": code, "line": line, "kind": phase_of(line),
               "record_phase": bundle.get("phase"), "record_timed_out": bundle.get("timed_out", False)}
        out["same_phase"] = bundle.get("phase") in (None, out["kind"]) or out["kind"] not in _KINDS
        # a defect that shows on a later call (the same input, another output: ConvTranspose without bias)
        # fails whatever the expected values are: nothing to check against itself
        later_call = line.startswith("DEFECT PRESENT: forward call") and not line.startswith(
            "DEFECT PRESENT: forward call 1,")
        out["later_call"] = later_call
        if code == 1 and not later_call and (line.startswith("DEFECT PRESENT: forward call")
                                             or line.startswith("DEFECT PRESENT: backward,")):
            actual = Path(tmp) / "actual"
            _run(python, work, "--save-actual", str(actual))
            for f in actual.glob("*.pb"):
                shutil.copy(f, work / "test_data_set_0" / f.name)
            out["self_exit"], out["self_line"] = _run(python, work)
        return out


def main(argv: list[str] | None = None) -> int:
    global TIMEOUT_S, _SERVER
    parser = argparse.ArgumentParser(prog="python -m interop.reproducers.check", description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--all", action="store_true", help="every reproducing bundle, not a sample")
    parser.add_argument("--venv", type=Path, default=None, help="the environment (default: a new one in a temporary folder)")
    parser.add_argument("--fork-server", action="store_true",
                        help="run each bundle in a fork of one interpreter of the environment that imported numpy, "
                             "onnx and Aidge (the reproducers' own fork server), not a new interpreter per run")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds a bundle's script may run")
    parser.add_argument("--json", type=Path, default=None, help="write the results and the run's counts here")
    args = parser.parse_args(argv)
    if not (args.run_dir / "reproducers").is_dir():
        sys.stderr.write(f"{args.run_dir}: no reproducers/ folder (a run of nox -s report writes one)\n")
        return 2
    TIMEOUT_S = args.timeout
    bundles = bundles_of(args.run_dir)
    picked = bundles if args.all else random.Random(args.seed).sample(bundles, min(args.sample, len(bundles)))
    tmp = None
    if args.venv is None:
        tmp = tempfile.mkdtemp(prefix="repro-venv-")
        args.venv = Path(tmp) / "venv"
    try:
        python = make_venv(args.venv)
        if args.fork_server:
            _SERVER = FreshServer(python)
        results = [check_bundle(python, b) for b in picked]
    finally:
        if _SERVER is not None:
            _SERVER.close()
            _SERVER = None
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    bad = 0
    for r in results:
        died = isinstance(r["exit"], int) and r["exit"] < 0  # a crash bundle: the defect is the death
        hung = r["exit"] is None and r.get("record_timed_out")  # a case that timed out hangs again
        ok = (r["exit"] == 1 or died or hung) and r["same_phase"] and r.get("self_exit", 0) == 0
        r["ok"] = bool(ok)
        bad += not ok
        self_check = f"; with Aidge's outputs as expected: exit {r['self_exit']}" if "self_exit" in r else ""
        sys.stdout.write(f"{'ok  ' if ok else 'FAIL'} exit {r['exit']} ({r['kind']}; record: {r['record_phase']})"
                         f"{self_check}  {Path(r['bundle']).relative_to(args.run_dir)}\n      {r['line'][:200]}\n")
    mism = [r for r in results if "self_exit" in r]
    later = sum(1 for r in results if r.get("later_call"))
    sys.stdout.write(f"{len(results)} of {len(bundles)} reproducing bundle(s) checked in {args.venv} "
                     f"({', '.join(PACKAGES)} only): {sum(r['exit'] == 1 for r in results)} exit 1 (or die by a "
                     f"signal: {sum(1 for r in results if isinstance(r['exit'], int) and r['exit'] < 0)}), "
                     f"{sum(r['same_phase'] for r in results)} in the record's phase; "
                     f"{sum(r['self_exit'] == 0 for r in mism)} of {len(mism)} mismatch bundle(s) exit 0 with Aidge's "
                     f"own outputs as the expected values ({later} more differ on a later call of the same input: "
                     f"not checkable against themselves)\n")
    counts = run_counts(args.run_dir) if args.all or args.json else None
    if counts is not None:
        sys.stdout.write(f"run: {counts['written']} bundle(s) written, {counts['reproducing']} reproduce; smallest "
                         f"graph {counts['nodes_1']} x 1 node, {counts['nodes_2_3']} x 2-3, {counts['nodes_4_plus']} x "
                         f"4 or more, {counts['nodes_unknown']} without an ONNX graph; "
                         f"{len(counts['not_reproducing'])} do not reproduce\n")
        for item in counts["not_reproducing"]:
            sys.stdout.write(f"  not reproducing: {item['bundle']}: {item['line'][:160]} ({item['why']})\n")
    if args.json is not None:
        body = json.dumps({"run": str(args.run_dir), "checked": results, "bad": bad, "counts": counts}, indent=1)
        tmp_path = args.json.with_name(args.json.name + ".tmp")
        tmp_path.write_text(body, encoding="utf-8")
        os.replace(tmp_path, args.json)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
