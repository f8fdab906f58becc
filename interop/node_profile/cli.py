"""The per-node profile's command line, ``python -m interop.node_profile`` (:func:`main`):
the zoo's models and the named architectures profiled (forward, and backward with ``--backward``),
the slow nodes timed alone and written as timing reproducers, the tables printed, and
``node_profile.json`` and ``node_profile.md`` written into ``--out`` or a findings run's
``node-profile/`` (docs/node-profile.md)."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..zoo.architectures import ARCHITECTURES, architecture
from .alone import ALONE_ROUNDS, time_node_alone, write_timing_reproducer
from .backward import profile_backward
from .forward import profile_onnx
from .records import DEFAULT_MAX_S, DEFAULT_ROUNDS, DEFAULT_TOP, DEFAULT_WARMUP
from .report import _us, backward_lines, markdown, slow_lines, table_lines
from .slow import SLOW_RATIO, slow_id, slow_nodes
from .torch import export_torch, torch_forward

#: where a findings run keeps its profile (``--run-dir``), and the slow nodes' timing reproducers,
#: beside the correctness reproducers (``reproducers/<test>/``)
PROFILE_DIR = "node-profile"
SLOW_REPRODUCERS = "reproducers/slow"


def _write_atomically(path: Path, text: str) -> None:
    """``text`` into ``path`` through a temporary file in its folder and a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise



def _zoo_targets(names: list[str] | None):
    from ..zoo.models import MODEL_CASES

    for case in MODEL_CASES:
        if names is None or case["name"] in names:
            yield case["name"], (lambda case=case: (case["model"](), [tuple(case["input_size"])], {}))


def _architecture_targets(names: list[str]):
    for arch_name in names:
        def make(arch_name=arch_name):
            arch = architecture(arch_name)
            args, kwargs = arch.inputs()
            return arch.build(), list(args), kwargs
        yield arch_name, make


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m interop.node_profile",
                                     description="Per-node profile of the zoo's models (and architectures): Aidge's "
                                                 "scheduling records against onnxruntime's profiler, one thread each.")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for node_profile.json and node_profile.md (default: a new temporary "
                             "folder, printed)")
    parser.add_argument("--models", default=None, help="comma-separated zoo model names (default: all; 'none': none)")
    parser.add_argument("--architectures", default="", help="comma-separated architecture names (interop.zoo."
                                                            "architectures), 'all' for every one, none by default")
    parser.add_argument("--run-dir", type=Path, default=None,
                        help="a findings run (results/latest): the profile goes to RUN/node-profile, the slow "
                             "nodes' timing reproducers to RUN/reproducers/slow/<defect id>/, and the run's "
                             "ledger and report are rebuilt with the slow entries (replaces --out)")
    parser.add_argument("--backward", action="store_true",
                        help="also profile each model's backward where Aidge runs it (Aidge's backward records, "
                             "against torch's backward in total; onnxruntime has no backward)")
    parser.add_argument("--alone-rounds", type=int, default=ALONE_ROUNDS,
                        help="rounds of each slow node timed alone (Aidge, onnxruntime, torch's equivalent op)")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    parser.add_argument("--warmup", type=int, default=DEFAULT_WARMUP)
    parser.add_argument("--max-s", type=float, default=DEFAULT_MAX_S, help="seconds of rounds per model at most")
    parser.add_argument("--top", type=int, default=DEFAULT_TOP, help="hot nodes per model")
    parser.add_argument("--slow-ratio", type=float, default=SLOW_RATIO,
                        help="a node is slow above this Aidge/onnxruntime ratio")
    parser.add_argument("--reproducers", type=int, default=20,
                        help="timing reproducers written (out/slow/NN_<op>/), the costliest slow nodes first")
    args = parser.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = "1"  # before torch or Aidge load an OpenMP runtime (the profile sets it too)
    run_dir = None
    if args.run_dir is not None:
        run_dir = args.run_dir.resolve()
        if not (run_dir / "records.jsonl").is_file():
            parser.error(f"{args.run_dir}: not a findings run (no records.jsonl)")
        out = run_dir / PROFILE_DIR
    else:
        out = args.out if args.out is not None else Path(tempfile.mkdtemp(prefix="node-profile-"))
    out.mkdir(parents=True, exist_ok=True)
    models = None if args.models is None else [] if args.models == "none" else args.models.split(",")
    if args.architectures == "all":
        arch_names = [a.name for a in ARCHITECTURES]
    else:
        arch_names = [a for a in args.architectures.split(",") if a]
    targets = list(_zoo_targets(models)) + list(_architecture_targets(arch_names))

    def uptime_now() -> str:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip() if shutil.which("uptime") else ""

    uptime_start = uptime_now()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    profiles = []
    graphs: dict[str, tuple] = {}
    for name, make in targets:
        try:
            model, inputs, kwargs = make()
            proto, feeds, sizes, exporter = export_torch(model, inputs, kwargs)
            graphs[name] = (proto, feeds)
            p = profile_onnx(proto, feeds, name=name, rounds=args.rounds, warmup=args.warmup, max_s=args.max_s,
                             top=args.top, torch_call=torch_forward(model, inputs, kwargs))
            p.update(exporter=exporter, input_sizes=sizes)
        except Exception as exc:  # noqa: BLE001 - a model that cannot be profiled is said, the others go on
            p = {"name": name, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"}
            print(f"== {name}: not profiled: {p['error']}", flush=True)
        else:
            print("\n".join(table_lines(p, args.top)), flush=True)
        profiles.append(p)
    backward = []
    for name, make in (targets if args.backward else []):
        try:
            model, inputs, kwargs = make()
            b = profile_backward(model, inputs, kwargs, name=name, rounds=args.rounds, warmup=args.warmup,
                                 max_s=args.max_s, top=args.top)
        except Exception as exc:  # noqa: BLE001 - a model whose backward Aidge cannot run is said, the others go on
            b = {"name": name, "phase": "backward", "error": f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"}
            print(f"== {name} (backward): not profiled: {b['error']}", flush=True)
        else:
            print("\n".join(backward_lines(b)), flush=True)
        backward.append(b)
    slow = slow_nodes(profiles, args.slow_ratio)

    slow_root = (run_dir / SLOW_REPRODUCERS) if run_dir is not None else (out / "slow")
    shutil.rmtree(slow_root, ignore_errors=True)  # this run's reproducers only (the folder is the CLI's)
    for k, entry in enumerate(slow):
        entry["id"] = slow_id(entry)
        if k >= args.reproducers:
            continue
        first = entry["occurrences"][0]
        folder = slow_root / (entry["id"] if run_dir is not None else f"{k + 1:02d}_{entry['op_type']}")
        proto, feeds = graphs[first["model"]]
        try:
            entry["alone"] = time_node_alone(proto, first["node"], feeds, rounds=args.alone_rounds)
        except Exception as exc:  # noqa: BLE001 - an entry without its node-alone figures says why
            entry["alone_error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        try:
            write_timing_reproducer(proto, first["node"], feeds, folder,
                                    meta={k2: v for k2, v in entry.items() if k2 != "occurrences"}
                                    | {"model": first["model"]})
            entry["reproducer"] = str(folder.relative_to(run_dir)) if run_dir is not None else str(folder)
        except Exception as exc:  # noqa: BLE001 - an entry without a reproducer says why
            entry["reproducer_error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    if slow:
        print(f"\nslow nodes (Aidge > {args.slow_ratio:g}x onnxruntime): {len(slow)}; by the Aidge time they cost:")
        for line in slow_lines(slow, 10):
            print(line)
    uptime = uptime_now()  # at the end (it was read at the start: the figure docs quoted as the end's)
    meta = {"started": started, "ended": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "command": "python -m interop.node_profile " + " ".join(sys.argv[1:] if argv is None else argv),
            "uptime_at_start": uptime_start, "uptime_at_end": uptime, "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "rounds": args.rounds, "warmup": args.warmup, "max_s": args.max_s}
    write_atomically = _write_atomically
    write_atomically(out / "node_profile.json", json.dumps({"meta": meta, "profiles": profiles, "slow": slow,
                                                            "backward": backward}, indent=1) + "\n")
    header = (f"# Per-node profile, Aidge against onnxruntime\n\n{meta['started']} to {meta['ended']}, "
              f"`{meta['command']}`; {meta['machine']}; `uptime` at the start: `{uptime_start}`, at the end: `{uptime}`.\n")
    slow_md = ["", f"## Slow nodes (Aidge more than {args.slow_ratio:g}x onnxruntime): {len(slow)}", "",
               "| operator | attributes | input shapes | Aidge/ort | Aidge/torch op (alone) | cost us "
               "| where (node share of the model) | reproducer |", "|---|---|---|---:|---:|---:|---|---|"]
    for entry in slow:
        where = "; ".join(f"{o['model']} {o['share']:.1%}" for o in entry["occurrences"])
        attrs = ", ".join(f"{k}={v}" for k, v in entry["attributes"].items())
        shapes = " ".join(str(x).replace(" ", "") for x in entry["input_shapes"] or [])
        repro = Path(entry["reproducer"]).name if entry.get("reproducer") else "-"
        alone = entry.get("alone") or {}
        torch_ratio = f"{alone['ratio_torch']:.1f}" if alone.get("ratio_torch") else "-"
        slow_md.append(f"| {entry['op_type']} | {attrs} | {shapes} | {entry['ratio']:.1f} | {torch_ratio} "
                       f"| {_us(entry['cost_s'])} | {where} | {repro} |")
    backward_md = ["", "## Backward (Aidge's backward records; against torch's backward in total)", ""] if backward else []
    for b in backward:
        if "error" in b:
            backward_md += [f"- **{b['name']}**: not profiled: {b['error']}"]
            continue
        backward_md += ["```", *backward_lines(b), "```"]
    write_atomically(out / "node_profile.md", markdown(profiles, header, args.top) + "\n".join(slow_md + backward_md)
                     + "\n")
    print(f"\nwritten: {out / 'node_profile.json'}, {out / 'node_profile.md'}")
    if run_dir is not None:  # the reporting layer sits above this one: its own command rebuilds the run
        print(f"now: python -m interop.reporting.ledger {run_dir}  (the run's ledger, report and porting table "
              "with these figures; nox -s profile runs it)")
    return 0
