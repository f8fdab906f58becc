#!/usr/bin/env bash
# The nightly schedule (.gitlab-ci.yml's nightly job; docs/ci.md): the newest Aidge release on the package
# index, installed beside torch 2.13.0 and this suite, runs the operator and model suites as a findings run;
# then the expected-failure table's proposal from that run (python -m interop.triage update): its rows that
# now pass are defects fixed, its failures no row holds are defects new, since the last release the project
# follows (interop/aidge_releases.json). Exit 0 when that release is already followed and nothing changed,
# 1 when the proposal has changes (the job is allow_failure in spirit: it reports), other: a fault.
#   ci/nightly.sh [PYTEST ARGS]      (default: -n auto tests/test_operators.py tests/test_models.py)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3.11}
venv=${INTEROP_NIGHTLY_VENV:-.nox/nightly}
last=$("$python" -c 'import json; print(json.load(open("interop/aidge_releases.json"))["releases"][-1])')
# the newest aidge-core on the index (pip's own query; the other Aidge packages at the same version)
newest=$("$python" -m pip index versions aidge-core 2>/dev/null | sed -n 's/^aidge-core (\(.*\))$/\1/p')
if [ -z "$newest" ]; then
  echo "nightly: pip index versions aidge-core said no version (no index reachable?)" >&2
  exit 2
fi
echo "nightly: newest Aidge on the index: $newest; last followed release: $last"
"$python" -m venv "$venv"
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
printf 'torch==2.13.0\naidge-core==%s\naidge-backend-cpu==%s\naidge-onnx==%s\naidge-learning==%s\n' \
  "$newest" "$newest" "$newest" "$newest" > "$constraints"
"$venv/bin/python" -m pip install --quiet -c "$constraints" torch==2.13.0 "aidge-core==$newest" \
  "aidge-backend-cpu==$newest" "aidge-onnx==$newest" "aidge-learning==$newest" onnx numpy typing_extensions
"$venv/bin/python" -m pip install --quiet -c "$constraints" -r requirements/test.txt
"$venv/bin/python" -m pip install --quiet --no-deps aidge-benchmark==0.10.1 aidge-export-cpp==0.10.1 -e .
if [ $# -eq 0 ]; then set -- -n auto tests/test_operators.py tests/test_models.py; fi
status=0
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} PYTHONHASHSEED=${PYTHONHASHSEED:-0} \
  "$venv/bin/python" -m interop.reporting.run "$@" || status=$?
run=$(ls -d results/runs/*/ | grep -v -- -merged- | tail -n 1)
# exit 1: the run is complete, with outcomes the table does not hold: the triage below says which
if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
  echo "nightly: the findings run against Aidge $newest is incomplete (exit $status): $run" >&2
  exit "$status"
fi
mkdir -p results/ci
# the table's changes the run calls for: rows fixed (their defect gone), rows new (a defect the table lacks)
triage=0
"$venv/bin/python" -m interop.triage update "$run" --release "$newest" || triage=$?
if [ -f "$run/triage/proposal.diff" ]; then cp "$run/triage/proposal.diff" "results/ci/nightly-$newest.diff"; fi
echo "nightly: Aidge $newest against the table of $last: $( [ "$triage" -eq 1 ] && echo "changes, results/ci/nightly-$newest.diff" || echo "nothing changed")"
exit "$triage"
