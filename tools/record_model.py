"""How long validating a run's records through the typed record takes (issue 46, item 2), and
what the other candidate (msgspec) would take on the same lines; prints ratios, asserts nothing.

    python tools/record_model.py [RECORDS.jsonl] [--repeat N]

Each figure is the best and the median of ``--repeat`` passes over every line of the file:

- ``json.loads``: parsing the lines alone (what reading costs without any check);
- ``pydantic``: :func:`interop.records.model.checked` of each parsed line (what the store does);
- ``msgspec convert``, ``msgspec decode``: a ``msgspec.Struct`` of the same fields, from the parsed
  line and from the line's bytes; only when msgspec can be imported (it is not a dependency:
  ``pip install --target DIR msgspec`` and ``PYTHONPATH=DIR`` for the comparison).

Also the time to import each library in a fresh interpreter (best of 3), which every pytest
process that writes records pays once.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import typing
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _passes(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def _import_time(module: str) -> float | None:
    best = None
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", f"import time; t = time.perf_counter(); import {module}; "
                               "print(time.perf_counter() - t)"], capture_output=True, text=True)
        if done.returncode != 0:
            return None
        value = float(done.stdout.strip())
        best = value if best is None else min(best, value)
    return best


def _msgspec_struct():
    """A msgspec Struct of :class:`interop.records.model.Record`'s fields and types (or None)."""
    try:
        import msgspec
    except ImportError:
        return None, None
    from interop.records.model import FIELDS

    fields = [(key if key != "schema" else "schema_", kind, None) for key, kind in FIELDS.items()]
    struct = msgspec.defstruct("RecordStruct", [(n, typing.Optional[k] if n != "nodeid" else k, d)
                                                for n, k, d in fields],
                               rename={"schema_": "schema"}, omit_defaults=True)
    return msgspec, struct


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("records", nargs="?", default="results/records.jsonl")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    from interop.records.model import checked

    raw = Path(args.records).read_bytes().splitlines()
    lines = [line for line in raw if line.strip()]
    objs = [json.loads(line) for line in lines]
    print(f"{args.records}: {len(lines)} lines, {sum(map(len, lines)):,} bytes; {args.repeat} passes each "
          "(best / median, seconds)")
    rows = {"json.loads": _passes(lambda: [json.loads(line) for line in lines], args.repeat),
            "pydantic (checked)": _passes(lambda: [checked(o) for o in objs], args.repeat)}
    msgspec, struct = _msgspec_struct()
    if msgspec is not None:
        rows["msgspec convert"] = _passes(lambda: [msgspec.convert(o, struct, strict=True) for o in objs], args.repeat)
        decoder = msgspec.json.Decoder(struct)
        rows["msgspec decode (bytes)"] = _passes(lambda: [decoder.decode(line) for line in lines], args.repeat)
        kept = set(msgspec.structs.asdict(msgspec.convert(objs[0], struct, strict=True)))
        lost = sorted({k for o in objs for k in o} - {("schema_" if k == "schema" else k) for k in kept}
                      - set(f.replace("schema_", "schema") for f in struct.__struct_fields__))
        print(f"msgspec {msgspec.__version__}: keys of the file its Struct does not keep: {lost or 'none'}")
    else:
        print("msgspec: not importable (not a dependency); its rows are left out")
    base = rows["json.loads"][0]
    for name, (best, median) in rows.items():
        print(f"  {name:24} {best:8.4f} / {median:8.4f}   {best / base:5.2f}x json.loads")
    for module in ("pydantic", "msgspec", "interop.records.model"):
        seconds = _import_time(module)
        print(f"  import {module:22} " + (f"{seconds:.3f} s (best of 3)" if seconds is not None else "not importable"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
