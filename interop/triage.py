"""``python -m interop.triage``: keep the expected-failure table from a run's records.

  python -m interop.triage update RUN_DIR [--table DIR] [--release X]
      propose the table's changes from the run in RUN_DIR (its records.jsonl + session.json):
      RUN_DIR/triage/proposal.diff (read it) and proposal.json; the table is not touched
  python -m interop.triage update RUN_DIR --apply [--table DIR]
      write the reviewed proposal (RUN_DIR/triage/proposal.json) into the table
  python -m interop.triage apply PROPOSAL.json [--table DIR]
      the same, for a proposal anywhere

Applying writes into the table folder (--table, default: the one the suites read,
$INTEROP_EXPECTED_FAILURES or the shipped one) and nowhere else: a proposal made against
another table, a file outside the folder or reached through a link, a file that changed since,
rows the table's validator refuses are each refused in one line naming the proposal and the key,
before anything is written; then every file is written, or none.
  python -m interop.triage diff OLD NEW [--table DIR]
      Markdown: the rows fixed and the rows new from Aidge release OLD to NEW
  python -m interop.triage registry [--table DIR] [--write]
      the defect registry's entries for the ids the table's rows name that it does not hold
      (interop/registry/defects.json): printed as JSON, or added to the file with --write

What a proposal holds and how it is made: :mod:`interop.reporting.triage_propose`.
Exit status: 0 done, 1 the proposal has changes (update without --apply), 2 bad input.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import registry
from .cases import failure_table as ft
from .cases.failure_table import table_dir
from .records.store import write_atomically
from .reporting.models import page_entries
from .reporting.triage_changelog import release_diff

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    from .reporting.triage_apply import PROPOSAL_FILE, apply_proposal, write_proposal
    from .reporting.triage_propose import propose

    parser = argparse.ArgumentParser(prog="python -m interop.triage", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    update = sub.add_parser("update", help="propose the table's changes from a run's records")
    update.add_argument("run_dir", type=Path)
    update.add_argument("--table", type=Path, default=None, help="the table folder (default: the shipped one)")
    update.add_argument("--release", default=None, help="the Aidge release the run used (default: session.json)")
    update.add_argument("--apply", action="store_true", help="write RUN_DIR/triage/proposal.json into the table")
    apply = sub.add_parser("apply", help="write a reviewed proposal into the table")
    apply.add_argument("proposal", type=Path)
    apply.add_argument("--table", type=Path, default=None, help="the table folder (default: the one the suites read)")
    diff = sub.add_parser("diff", help="rows fixed and new from one Aidge release to another (Markdown)")
    diff.add_argument("old")
    diff.add_argument("new")
    diff.add_argument("--table", type=Path, default=None)
    diff.add_argument("--backend", default="cpu", help="the rows of this backend (default cpu; 'all': every one)")
    diff.add_argument("--all-runs", action="store_true", help="also the rows of runs beyond the default one")
    reg = sub.add_parser("registry", help="registry entries for the defects the table names and the registry lacks")
    reg.add_argument("--table", type=Path, default=None)
    reg.add_argument("--write", action="store_true", help="add them to interop/registry/defects.json")
    reg.add_argument("--run", type=Path, default=None, metavar="RUN_DIR",
                     help="take each entry from this findings run's ledger (the records' own signature: the "
                          "reproducer's Aidge operator and import kind) where it holds the id; else from the rows")
    args = parser.parse_args(argv)

    try:
        if args.command == "registry":
            return _registry(args.table, args.write, args.run)
        if args.command == "diff":
            print(release_diff(args.old, args.new, args.table, None if args.backend == "all" else args.backend,
                               args.all_runs))
            return 0
        if args.command == "apply" or args.apply:
            path = args.proposal if args.command == "apply" else args.run_dir / "triage" / PROPOSAL_FILE
            if not path.exists():
                print(f"{path}: no proposal here (run `python -m interop.triage update RUN_DIR` first)",
                      file=sys.stderr)
                return 2

            written = apply_proposal(path, args.table or table_dir())
            print(f"applied {path}: {len(written)} file(s) written" + "".join(f"\n  {w}" for w in written))
            return 0
        proposal = propose(args.run_dir, args.table, args.release)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    data, diff_path = write_proposal(proposal)
    counts = proposal.counts()
    if proposal.incomplete:
        print(f"RUN INCOMPLETE ({proposal.incomplete}): what it did not reach is not in this proposal")
    print(f"Aidge {proposal.release}, table {proposal.table_dir}: "
          + ", ".join(f"{n} {what}" for what, n in counts.items()))
    for change in proposal.changes:
        print(f"  {change['action']:<14} {change['operator']}: {len(change['cases'])} case(s); {change['why']}")
    if proposal.files:
        print(f"review {diff_path}, then: python -m interop.triage update {args.run_dir} --apply")
    else:
        print("the table already says what this run found: nothing to change")
    return 1 if proposal.files else 0


def _registry(table: Path | None, write: bool, run: Path | None = None) -> int:
    from .reporting.ledger import registry_entries_from_table

    proposed = registry_entries_from_table(ft.load_table(table), ledger=_run_ledger(run) if run else None)
    if not write:
        print(json.dumps({"defects": proposed}, indent=1))
        return 1 if proposed else 0
    data = json.loads(registry.REGISTRY_PATH.read_text(encoding="utf-8"))
    data["defects"] = list(data.get("defects", [])) + proposed
    write_atomically(registry.REGISTRY_PATH, registry.dumps(data["defects"]))
    registry.load()  # what was written loads (ids unique, patterns compile)
    print(f"{registry.REGISTRY_PATH}: {len(proposed)} entr{'y' if len(proposed) == 1 else 'ies'} added")
    return 0


def _run_ledger(run: Path) -> dict[str, dict]:
    """id -> entry of a findings run's ledger (``defects.json``, written by the report)."""
    path = Path(run) / "defects.json"
    if not path.is_file():
        raise ValueError(f"{path}: no ledger (run python -m interop.reporting.ledger {run} first)")
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data.get("defects") if isinstance(data, dict) else data, list):
        raise ValueError(f"{path}: key 'defects' must be a list")
    # each entry typed (reporting.models.DefectEntry): a wrong one names the file, its id and the key
    return {e["id"]: e for e in page_entries(data, path)}


if __name__ == "__main__":
    sys.exit(main())
