"""A narrowed benchmark run (issue 61): ``nox -s bench -- --bench REGEX`` saves its result for HEAD and
prints only the cases it ran (tools/narrowed_run.py).

Before, ``nox -s bench -- --bench REGEX`` replaced the session's ``HEAD^!`` (asv then benchmarked the tip
of main), ``asv run -E existing --bench REGEX`` saved nothing (asv needs ``--set-commit-hash`` to know
whose figures they are), and asv printed a row for every case of every benchmark it ran, ``n/a`` for
those ``--bench`` did not select: 4,030 lines, 3,914 of them ``n/a``. The table below is asv 0.6.6's
real output of ``--bench "models.Forward.*'LeNet_eval'"`` (2026-12-07): 105 lines, 54 ``n/a``; through
the filter 54 lines, none ``n/a``, and the results file written for HEAD (measured by hand, not here:
a real asv run costs ~40 s)."""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tools import narrowed_run  # noqa: E402

REGEX = "models.Forward.*'LeNet_eval'"

ASV_OUTPUT = """\
· Discovering benchmarks
· Running 6 total benchmarks (1 commits * 1 environments * 6 benchmarks)
[ 0.00%] · For aidge-torch-interop commit 30297e53 <main>:
[ 0.00%] ·· Building for existing-py_work_main_.venv_bin_python
[ 0.00%] ·· Benchmarking existing-py_work_main_.venv_bin_python
[ 8.33%] ··· models.Forward.time_aidge                                       ok
[ 8.33%] ··· =================== ==========
                     case                  
             ------------------- ----------
               Perceptron_eval      n/a    
               Perceptron_train     n/a    
                  LeNet_eval      1.28±0ms 
                 LeNet_train        n/a    
              Transformer_train     n/a    
             =================== ==========

[50.00%] ··· models.Forward.track_aidge_torch_ratio                          ok
[50.00%] ··· =================== =====
                     case             
             ------------------- -----
               Perceptron_eval    n/a 
                  LeNet_eval      2.0 
              Transformer_train   n/a 
             =================== =====
"""


def _filtered(text: str, regexes) -> tuple[list[str], narrowed_run.RowFilter]:
    row_filter = narrowed_run.RowFilter(regexes)
    return list(row_filter.lines(text.splitlines(keepends=True))), row_filter


# --- the arguments --------------------------------------------------------------------------------------
def test_no_argument_is_head_in_asvs_own_environment():
    assert narrowed_run.run_arguments([]) == ["HEAD^!"]


def test_a_narrowed_run_is_head_not_the_tip_of_main():
    assert narrowed_run.run_arguments(["--bench", REGEX, "--quick"]) == ["--bench", REGEX, "--quick", "HEAD^!"]
    assert narrowed_run.run_arguments(["-b", REGEX])[-1] == "HEAD^!"


def test_a_range_given_is_kept():
    for given in (["NEW", "--steps", "10"], ["main^!"], ["--bench", REGEX, "HEAD~3..HEAD"]):
        assert narrowed_run.run_arguments(given) == given


@pytest.mark.parametrize("spec", [["-E", "existing"], ["-E", "existing:/x/bin/python"], ["--environment=existing"],
                                  ["--python=same"], ["-E", ":same"]])
def test_an_existing_environment_saves_as_head(spec):
    """asv saves nothing for an existing environment without --set-commit-hash: HEAD is added, no range
    (asv refuses a range there)."""
    args = narrowed_run.run_arguments([*spec, "--bench", REGEX])
    assert args == [*spec, "--bench", REGEX, "--set-commit-hash", "HEAD"]


def test_a_commit_hash_given_is_kept():
    given = ["-E", "existing", "--set-commit-hash", "abc123", "--bench", REGEX]
    assert narrowed_run.run_arguments(given) == given


def test_a_wrong_argument_stops_with_asvs_usage():
    with pytest.raises(SystemExit):
        narrowed_run.run_arguments(["--no-such-option"])


# --- what is printed ---------------------------------------------------------------------------------------
def test_only_the_cases_run_are_printed():
    kept, row_filter = _filtered(ASV_OUTPUT, [REGEX])
    text = "".join(kept)
    assert "n/a" not in text
    assert text.count("LeNet_eval") == 2 and "1.28±0ms" in text and "2.0 " in text
    assert "Perceptron" not in text and "Transformer_train" not in text
    assert row_filter.dropped == 6
    assert "6 row(s) of cases --bench did not select left out" in row_filter.summary()
    # every other line is asv's own, unchanged: the headers, the tables' rules, the progress
    assert len(kept) == len(ASV_OUTPUT.splitlines()) - 6


def test_a_selected_case_that_is_n_a_stays():
    """A case --bench selected and the benchmark skipped (asv prints n/a too) is shown: it ran."""
    kept, row_filter = _filtered(ASV_OUTPUT, ["models.Forward.*'(LeNet_eval|Perceptron_eval)'"])
    assert sum("Perceptron_eval" in line and "n/a" in line for line in kept) == 2
    assert row_filter.dropped == 4


#: asv's real output of a second narrowed run on the same commit (2026-12-07, nox -s bench -- -E existing
#: --bench "models.Forward.time_torch.*'Perceptron_eval'"): LeNet_eval, not run this time, shows the figure
#: the first run saved
SECOND_RUN = """\
[50.00%] ··· models.Forward.time_torch                                       ok
[50.00%] ··· =================== =========
                     case                 
             ------------------- ---------
               Perceptron_eval    167±0μs 
               Perceptron_train     n/a   
                  LeNet_eval      960±0μs 
             =================== =========
             For parameters: 'Perceptron_eval'
"""


def test_a_case_not_run_this_time_is_left_out_whatever_it_shows():
    kept, row_filter = _filtered(SECOND_RUN, ["models.Forward.time_torch.*'Perceptron_eval'"])
    text = "".join(kept)
    assert "167±0μs" in text and "960±0μs" not in text and "n/a" not in text
    assert row_filter.dropped == 2
    assert "For parameters: 'Perceptron_eval'" in text  # after the table: asv's own words, kept
    assert "case" in text and sum("=========" in line for line in kept) == 2  # the header and both rules stay


def test_without_bench_nothing_is_left_out():
    kept, row_filter = _filtered(ASV_OUTPUT, [])
    assert kept == ASV_OUTPUT.splitlines(keepends=True) and row_filter.summary() is None


def test_asvs_selection_rule():
    """asv matches a regex against ``name('case')`` with re.search (asv/benchmarks.py)."""
    assert narrowed_run.selected("models.Forward.time_aidge", "LeNet_eval", [r"time_aidge.*'LeNet_eval'\)$"])
    assert narrowed_run.selected("models.Forward.time_aidge", "LeNet_eval", [r"^models\.Forward"])
    assert not narrowed_run.selected("models.Forward.time_aidge", "LeNet_train", ["'LeNet_eval'"])
    assert not narrowed_run.selected("models.Forward.time_aidge", "LeNet_eval", ["^time_aidge"])
    assert not narrowed_run.selected("models.Forward.time_aidge", "LeNet_eval", ["'LeNet_eval'$"])  # asv: ...)


# --- the script around a stand-in asv ----------------------------------------------------------------------
def test_main_runs_asv_with_the_arguments_and_filters_its_output(tmp_path, capsys):
    """tools/narrowed_run.py runs the ``asv`` on PATH (a stand-in here that prints the real output
    above and exits 2, asv's status for a failed benchmark) and exits with its status."""
    (tmp_path / "output.txt").write_text(ASV_OUTPUT, encoding="utf-8")
    asv = tmp_path / "asv"
    asv.write_text(f'#!/bin/sh\necho "$@" > "{tmp_path}/args.txt"\ncat "{tmp_path}/output.txt"\nexit 2\n')
    asv.chmod(asv.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "narrowed_run.py"), "--bench", REGEX],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    assert (tmp_path / "args.txt").read_text().split() == ["run", "--bench", REGEX, "HEAD^!"]
    assert "n/a" not in done.stdout.replace("(n/a, or", "")
    assert "LeNet_eval" in done.stdout and "6 row(s) of cases --bench did not select left out" in done.stdout


def test_nothing_in_the_module_is_an_asv_benchmark():
    """asv imports every module of benchmarks/ when it discovers benchmarks: none of this one's names may
    look like a benchmark to it (time_, mem_, peakmem_, track_, timeraw_; Time..., Track... classes)."""
    import re

    pattern = re.compile(r"^(time|mem|peakmem|track|timeraw)_|^(Time|Mem|PeakMem|Track|Timeraw)[A-Z_]")
    assert not [name for name in vars(narrowed_run) if pattern.match(name)]


# --- nox -s bench ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _noxfile():
    pytest.importorskip("nox")
    spec = importlib.util.spec_from_file_location("_noxfile_bench_under_test", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The session .* has already been registered", FutureWarning)
        spec.loader.exec_module(module)
    return module


class _Session:
    def __init__(self, posargs):
        self.posargs, self.calls = list(posargs), []

    def run(self, *args, **kwargs):
        self.calls.append(args)
        if "-c" in args:  # cpu_stack's version check of INTEROP_NOX_ENV
            return json.dumps({"torch": "2.13.0", "aidge_core": "0.10.1", "aidge_backend_cpu": "0.10.1"})
        return ""

    def log(self, *args):
        pass

    def error(self, message, *args):
        raise AssertionError(message)


@pytest.mark.parametrize("posargs", [[], ["--bench", REGEX], ["NEW", "--steps", "10"]])
def test_nox_bench_runs_the_narrowed_run_with_its_arguments(tmp_path, monkeypatch, posargs):
    noxfile = _noxfile()
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("")
    monkeypatch.setenv("INTEROP_NOX_ENV", str(env))
    session = _Session(posargs)
    getattr(noxfile.bench, "func", noxfile.bench)(session)
    assert session.calls[-1] == (str(env / "bin" / "python"), "tools/narrowed_run.py", *posargs)
