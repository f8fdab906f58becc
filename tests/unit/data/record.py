"""Regenerate the recorded pytest outputs of ``sample_suite.py`` used by ``test_analyze.py``.

    OMP_NUM_THREADS=1 python tests/unit/data/record.py

Writes, next to this file: ``pytest_verbose.txt`` (``-v -rA``), ``pytest_quiet.txt``
(``-q -ra``), ``pytest_xdist.txt`` (``-n 2 -v``) of ``sample_suite.py``;
``pytest_xdist_crash.txt`` (``-n 2 -v``, stderr included as with ``2>&1``) of
``crash_suite.py``; and ``benchmarks.jsonl`` (the ModelTester timings of the verbose run). The unit tests assert counts and categories of these files;
update them if the sample suite changes.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SAMPLE = HERE.relative_to(ROOT) / "sample_suite.py"
CRASH = HERE.relative_to(ROOT) / "crash_suite.py"

#: output file -> (suite, pytest arguments, stderr merged into the recording)
RUNS = {
    "pytest_verbose.txt": (SAMPLE, ["-v", "-rA"], False),
    "pytest_quiet.txt": (SAMPLE, ["-q", "-ra"], False),
    "pytest_xdist.txt": (SAMPLE, ["-n", "2", "-v"], False),
    "pytest_xdist_crash.txt": (CRASH, ["-n", "2", "-v"], True),
}


def main() -> int:
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"), COLUMNS="100")
    env.pop("INTEROP_SEED", None)
    for out, (suite, args, merge) in RUNS.items():
        with tempfile.TemporaryDirectory() as results:
            env["INTEROP_RESULTS_DIR"] = results
            cmd = [sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider", *args]
            proc = subprocess.run(cmd, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT if merge else subprocess.PIPE)
            (HERE / out).write_text(proc.stdout)
            print(f"{out}: pytest exit {proc.returncode}", file=sys.stderr)
            if out == "pytest_verbose.txt":
                shutil.copyfile(Path(results) / "benchmarks.jsonl", HERE / "benchmarks.jsonl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
