"""``python -m interop check module:factory --input-shape 1,3,32,32``: every blocker of a model
in Aidge at once (:func:`interop.check.check`), printed one per line, grouped by phase.

Exit status: 0 no blocker found, 1 blockers (listed), 2 a usage error (the model cannot be
loaded, a shape does not parse). ``--json`` prints the report as one JSON object instead.
The defect ids are the ledger's (``defects.md`` of a findings run); ``--ledger defects.json``
(default: ``results/latest/defects.json`` of this checkout when present) adds each entry's title.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

_LATEST = Path(__file__).resolve().parent.parent / "results" / "latest" / "defects.json"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m interop", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="every blocker of a model in Aidge: import, forward, backward")
    c.add_argument("model", help="module:factory, a callable returning the torch.nn.Module (module must be importable)")
    c.add_argument("--input-shape", action="append", required=True, metavar="N,C,H,W",
                   help="the shape of one input (repeat for several inputs); random normal values, seed 0")
    c.add_argument("--eval", action="store_true", help="check the model in eval mode (default: the factory's mode)")
    c.add_argument("--no-backward", action="store_true", help="forward only")
    c.add_argument("--no-modules", action="store_true", help="the whole model only (the first blocker, as verify)")
    c.add_argument("--ledger", default=None, help="a defects.json whose titles to quote (default: results/latest's)")
    c.add_argument("--timeout", type=float, default=120.0, help="seconds per check before it counts as a hang")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from .check import check, load_factory, parse_shape

    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")  # module:factory names a module of the current directory too
    try:
        shapes = [parse_shape(s) for s in args.input_shape]
        model = load_factory(args.model)
    except (ValueError, TypeError, ImportError, AttributeError) as exc:
        print(f"python -m interop check: {exc}", file=sys.stderr)
        return 2
    if args.eval:
        model.eval()
    ledger = args.ledger or (_LATEST if _LATEST.is_file() else None)
    report = check(model, *shapes, backward=not args.no_backward, modules=not args.no_modules, ledger=ledger,
                   timeout=args.timeout)
    if args.json:
        print(json.dumps(report.as_dict(), indent=1, default=str))
    else:
        print("\n".join(report.lines()))
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
