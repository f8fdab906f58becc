"""``python -m interop check module:factory --input-shape 1,3,32,32``: every blocker of a model
in Aidge at once (:func:`interop.check.check`), printed one per line, grouped by phase.

Exit status: 0 no blocker found, 1 blockers (listed), 2 a usage error or the model's own error, in
one line on stderr: the model cannot be loaded, a shape or a dtype does not parse, a shape is past
the inputs' memory estimate (:func:`interop.checking.inputs.check_input_size`), a timeout is not a finite
number > 0, the factory or the model's torch forward raises, dies or does not finish within
``--timeout`` (both run in forked children: :func:`interop.checking.inputs.load_model`,
:func:`interop.checking.inputs.probe_forward`). ``--input-dtype int64`` makes integer inputs (a model
whose first leaf is an ``nn.Embedding`` gets indices in its range without it). ``--json`` prints the report as one JSON object instead, the only thing on stdout (what
the model or Aidge prints goes to stderr).
The defect ids are the ledger's (``defects.md`` of a findings run); ``--ledger defects.json``
(default: ``results/latest/defects.json`` of this checkout when present) adds each entry's title.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

from .checking.inputs import (ModelError, check_input_size, check_timeout, load_model, make_inputs, parse_dtype,
                              parse_shape, probe_forward)

_LATEST = Path(__file__).resolve().parent.parent / "results" / "latest" / "defects.json"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m interop", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="every blocker of a model in Aidge: import, forward, backward")
    c.add_argument("model", help="module:factory, a callable returning the torch.nn.Module (module must be importable)")
    c.add_argument("--input-shape", action="append", required=True, metavar="N,C,H,W",
                   help="the shape of one input (repeat for several inputs); random normal values, seed 0")
    c.add_argument("--input-dtype", action="append", default=None, metavar="DTYPE",
                   help="the dtype of the inputs (float32, float64, int64, int32, bool...): once for all inputs, "
                        "or once per --input-shape in order. Integer inputs are indices in [0, num_embeddings) of "
                        "the model's first leaf when it is an nn.Embedding, else in [0, 10). Default: float32, "
                        "or int64 when the model's first leaf is an nn.Embedding")
    c.add_argument("--eval", action="store_true", help="check the model in eval mode (default: the factory's mode)")
    c.add_argument("--no-backward", action="store_true", help="forward only")
    c.add_argument("--no-modules", action="store_true", help="the whole model only (the first blocker, as verify)")
    c.add_argument("--ledger", default=None, help="a defects.json whose titles to quote (default: results/latest's)")
    c.add_argument("--timeout", type=float, default=120.0, help="seconds per check before it counts as a hang")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    return p


def _usage(text: str) -> int:
    lines = str(text).strip().splitlines()
    print(f"python -m interop check: {lines[0] if lines else text}", file=sys.stderr)
    return 2


@contextlib.contextmanager
def _stdout_kept(keep: bool):
    """With ``keep``: file descriptor 1 points at stderr inside (the model's prints, the children's,
    Aidge's own output), and the block gets a writer to the real stdout (the JSON report). Else
    ``print``."""
    if not keep:
        yield lambda text: print(text)
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)

    def write(text: str) -> None:
        sys.stdout.flush()
        data = (text + "\n").encode()
        while data:
            data = data[os.write(saved, data):]

    try:
        yield write
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    with _stdout_kept(args.json) as write:
        return _run(args, write)


def _run(args, write) -> int:
    from .check import check
    from .checking.defect_ids import ledger_titles
    from .reporting.models import PageFileError

    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")  # module:factory names a module of the current directory too
    try:
        timeout = check_timeout(args.timeout)
    except ValueError as exc:
        return _usage(f"--timeout: {exc}")
    try:
        shapes = [parse_shape(s) for s in args.input_shape]
        dtypes = [parse_dtype(d) for d in args.input_dtype or []]
        if dtypes and len(dtypes) not in (1, len(shapes)):
            raise ValueError(f"--input-dtype is given once for all inputs or once per --input-shape "
                             f"({len(shapes)}), not {len(dtypes)} times")
        check_input_size(shapes, dtypes)
        model = load_model(args.model, timeout)  # in a child, under the timeout
    except ModelError as exc:
        return _usage(f"{exc} (the model's own error, not Aidge's)")
    except (ValueError, TypeError, ImportError, AttributeError) as exc:
        return _usage(str(exc))
    except Exception as exc:  # noqa: BLE001 - anything else the factory's loading raised: one line
        return _usage(f"the model {args.model} could not be loaded: {type(exc).__name__}: {exc}")
    if args.eval:
        model.eval()
    try:  # the inputs torch is fed: a dtype torch cannot draw values of is a usage error, said in one line
        inputs = make_inputs(model, shapes, dtypes)
    except (ValueError, TypeError, RuntimeError) as exc:
        return _usage(f"the inputs cannot be made: {str(exc).splitlines()[0] if str(exc) else exc}")
    ledger = args.ledger or (_LATEST if _LATEST.is_file() else None)
    try:  # the ledger whose titles to quote, read first: a wrong entry is a usage error (file, entry, key)
        ledger_titles(ledger)
    except PageFileError as exc:
        return _usage(f"--ledger: {exc}")
    try:
        probe_forward(model, inputs, timeout)  # torch's own forward, in a child: its error is the model's
        report = check(model, *inputs, backward=not args.no_backward, modules=not args.no_modules, ledger=ledger,
                       timeout=timeout)
    except ModelError as exc:
        return _usage(f"{exc} (the model's own error, not Aidge's)")
    if args.json:
        write(json.dumps(report.as_dict(), indent=1, default=str))
    else:
        write("\n".join(report.lines()))
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
