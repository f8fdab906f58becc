"""``nox -s bench``'s ``asv run``: every benchmark of HEAD, or those ``--bench REGEX`` selects, saved
for HEAD, printing only the cases it ran.

Two things a plain narrowed ``asv run`` does that a newcomer did not expect (issue 61):

- ``asv run --bench REGEX`` without a commit range benchmarks the tip of ``main`` (asv.conf.json's
  branches), not HEAD; ``asv run -E existing:PYTHON --bench REGEX`` (the working tree, installed
  in that environment: no ``.asv/env`` to build) **saves nothing** unless ``--set-commit-hash`` says
  which commit the figures belong to. :func:`run_arguments` adds ``HEAD^!`` to the first and
  ``--set-commit-hash HEAD`` to the second (and warns when the working tree differs from HEAD:
  its figures are recorded as HEAD's).
- asv prints the whole table of every benchmark it runs, a row for each parameter (case)
  ``--bench`` did not select: ``n/a``, or the figure an earlier run saved for the commit (4,030
  lines, 3,914 of them ``n/a``, for a few cases). :class:`RowFilter` drops those rows (asv's own
  selection rule: ``re.search(REGEX, "name('case')")``), keeps every row of a selected case,
  ``n/a`` included (a case that was skipped), and says at the end how many rows it left out. The results file is asv's own, every
  case in it (asv keeps an unselected case's earlier figure for that commit), and
  results/asv/benchmarks.json stays the whole list the site is drawn from.

``python tools/narrowed_run.py [ASV RUN ARGUMENTS]`` runs ``asv run`` (the ``asv`` on PATH)
with :func:`run_arguments` and the filter, and exits with asv's status. It imports the standard
library only (nothing here is a benchmark: it lives in tools/, outside the benchmarks/ folder whose
every module asv imports when it discovers the benchmarks).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Iterable, Iterator, Sequence

#: the commit range nox -s bench benchmarks when its arguments name none
HEAD_RANGE = "HEAD^!"

def parse_run_arguments(args: Sequence[str]) -> dict:
    """``asv run ARGS`` parsed by asv's own parser (asv's options as it reads them): ``range``,
    ``bench`` (the regexes), ``env_spec``, ``set_commit_hash``... A wrong argument stops here
    with asv's own usage message, as ``asv run`` would."""
    from asv.commands import make_argparser  # here: asv imports this module when it discovers benchmarks

    made = make_argparser()
    parser = made[0] if isinstance(made, tuple) else made
    parsed = vars(parser.parse_args(["run", *args]))
    parsed["bench"] = list(parsed.get("bench") or [])
    parsed["env_spec"] = list(parsed.get("env_spec") or [])
    return parsed


def is_existing_environment(parsed: dict) -> bool:
    """Whether asv benchmarks an existing environment (``-E existing[:PYTHON]``, ``-E :same``,
    ``--python=same``): the installed code, not a commit's build, so asv saves nothing without
    ``--set-commit-hash``."""
    for spec in parsed["env_spec"]:
        kind, _, python = spec.partition(":")
        if kind.strip() == "existing" or python.strip() == "same":
            return True
    return parsed.get("python") == "same"


def run_arguments(posargs: Sequence[str]) -> list[str]:
    """``asv run``'s arguments for ``nox -s bench -- POSARGS``: HEAD in asv's own environment when no
    range is given (``HEAD^!``; asv's default would be the tip of main), and ``--set-commit-hash HEAD``
    for an existing environment without one (asv would save nothing). A range, or a commit hash, given
    is kept as given."""
    args = list(posargs)
    parsed = parse_run_arguments(args)
    if is_existing_environment(parsed):
        if parsed["set_commit_hash"] is None:
            args += ["--set-commit-hash", "HEAD"]
    elif parsed["range"] is None:
        args.append(HEAD_RANGE)
    return args


# --- the rows of the cases --bench did not select ------------------------------------------------
#: asv's line that starts a benchmark's output: ``[ 8.33%] ··· models.Forward.time_aidge   ok``
_BENCHMARK_LINE = re.compile(r"^\[\s*[\d.]+%\]\s+\S+\s+([A-Za-z_][\w.]*)\s+\S")
#: the top rule of its table, on a line of its own: ``[ 8.33%] ··· =================== ==========``
_TABLE_TOP = re.compile(r"^\[\s*[\d.]+%\]\s+\S+\s+=+[= ]*$")
_DASH_RULE = re.compile(r"^\s*-+[- ]*$")
_EQUALS_RULE = re.compile(r"^\s*=+[= ]*$")


def selected(benchmark: str, shown: str, regexes: Sequence[str]) -> bool:
    """Whether asv's ``--bench`` selection holds the case ``shown`` (a parameter as asv prints it:
    a string without its quotes) of ``benchmark``: asv's own rule, ``re.search(regex,
    "benchmark(param)")`` with the parameter's repr, tried quoted and as printed."""
    if not regexes:
        return True
    names = (f"{benchmark}('{shown}')", f"{benchmark}({shown})")
    return any(re.search(regex, name) for regex in regexes for name in names)


class RowFilter:
    """asv run's output without the table rows of the cases ``--bench`` did not select: asv prints a
    row for every parameter of a benchmark it runs, ``n/a`` for a case it did not run, or the figure an
    earlier run saved for the commit. Every row of a selected case stays (``n/a`` included: a case that
    was skipped), and every other line. The case is a row's first column (each benchmark of this
    project has one parameter, the case)."""

    def __init__(self, regexes: Sequence[str]) -> None:
        self.regexes = [r for r in regexes if r]
        self.benchmark: str | None = None
        self.state: str | None = None  # None, "head" (the table's header), "rows" (its cases)
        self.dropped = 0

    def keep(self, line: str) -> bool:
        head = _BENCHMARK_LINE.match(line)
        if head:
            self.benchmark, self.state = head.group(1), None
            return True
        if _TABLE_TOP.match(line):
            self.state = "head"
        elif self.state == "head" and _DASH_RULE.match(line):
            self.state = "rows"
        elif self.state == "rows" and _EQUALS_RULE.match(line):
            self.state = None
        elif self.state == "rows" and line.strip() and self.benchmark:
            if not selected(self.benchmark, line.split()[0], self.regexes):
                self.dropped += 1
                return False
        return True

    def lines(self, lines: Iterable[str]) -> Iterator[str]:
        return (line for line in lines if self.keep(line))

    def summary(self) -> str | None:
        if not self.dropped:
            return None
        return (f"narrowed_run: {self.dropped} row(s) of cases --bench did not select left out (n/a, or the "
                "figure an earlier run saved for the commit, which asv's results keep)")


def _working_tree_differs() -> bool:
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return False
    return bool(out.strip())


def main(argv: Sequence[str] | None = None) -> int:
    posargs = list(sys.argv[1:] if argv is None else argv)
    args = run_arguments(posargs)
    parsed = parse_run_arguments(args)
    if is_existing_environment(parsed) and parsed["set_commit_hash"] == "HEAD" and _working_tree_differs():
        print("narrowed_run: the working tree differs from HEAD (tracked files): an existing environment "
              "benchmarks the installed working tree, and its figures are saved as HEAD's", flush=True)
    command = ["asv", "run", *args]
    print("narrowed_run: " + " ".join(command), flush=True)
    row_filter = RowFilter(parsed["bench"])
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8")
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                          encoding="utf-8", errors="replace") as process:
        assert process.stdout is not None
        for line in row_filter.lines(process.stdout):
            sys.stdout.write(line)
            sys.stdout.flush()
        code = process.wait()
    said = row_filter.summary()
    if said:
        print(said, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
