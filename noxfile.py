"""nox sessions (`nox -l` lists them; `nox -s NAME -- ARGS` passes ARGS on).

tests-cpu    the whole pytest suite on the CPU stack (torch 2.13.0 + Aidge 0.10.1 CPU); timings
             replace results/benchmarks.jsonl when the session ends (default session)
tests-cuda   the suites with backend="cuda" on a GPU machine; skips (exit 0) without one
opinfo       every OpInfo sample in every dtype (tests/test_opinfo.py, INTEROP_OPINFO_SAMPLES=all, INTEROP_OPINFO_DTYPES=all)
report       the main job: suites + categorised findings report in results/runs/<run>/ (results/latest)
cuda-recipe  resolve the CUDA environment (pip --dry-run) on any machine
bench        asv machine --yes, then asv run on HEAD: every benchmark, in asv's own environment
bench-quick  CI smoke: asv check + one quick sample of a small subset, in the session's environment
bench-matrix HEAD against several Aidge releases (one asv environment per release)
noise-floor  the same commit benchmarked twice on a subset: run-to-run ratios per benchmark kind
publish      asv publish -> results/html + cases.html (every case linked; libraries served locally when
             npm is there); serve it over HTTP
site-check   the published site in headless Chromium (network blocked): every case linked and drawn
aidge-configs-full  Aidge's own benchmark configurations (aidge-benchmark 0.10.1) at their full sizes
compare      asv compare main HEAD (both benchmarked first), at the factor the noise floor supports
"""
from __future__ import annotations

import os
from pathlib import Path

import nox

ROOT = Path(__file__).parent
REQ = ROOT / "requirements"
nox.options.sessions = ["tests-cpu"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True

PYTHON = "3.11"
# One OpenMP thread per process unless the caller says otherwise: torch and Aidge each
# bring an OpenMP runtime, and two spinning runtimes on a small machine slow Aidge's
# backward 1000x (measured: 15 ms instead of 10 us for a Linear). Tests parallelise with
# pytest-xdist instead.
TEST_ENV = {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
            # stable OpInfo ids: torch's meshgrid samples iterate a set of strings
            "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")}


def install_cpu_stack(session: nox.Session, *extra: str) -> None:
    """torch 2.13.0 CPU + Aidge 0.10.1 CPU + this package, never re-resolving torch."""
    constraints = ("-c", str(REQ / "constraints-cpu.txt"))
    session.install(*constraints, "-r", str(REQ / "cpu.txt"))
    session.install(*constraints, "-r", str(REQ / "test.txt"), *extra)
    session.install(*constraints, "--no-deps", "-e", str(ROOT))


@nox.session(name="tests-cpu", python=PYTHON)
def tests_cpu(session: nox.Session) -> None:
    """Run every pytest suite (tensor, operators, models, unit) on the CPU backend."""
    install_cpu_stack(session)
    args = session.posargs or ["-n", "auto"]
    session.run("python", "-m", "pytest", *args, env=TEST_ENV)


@nox.session(name="aidge-configs-full", python=PYTHON)
def aidge_configs_full(session: nox.Session) -> None:
    """tests/test_aidge_configs.py with every case at the size its configuration gives (the
    default run reduces the batch of cases above the element budget, interop/cases/aidge_configs.py).
    Arguments after -- replace ``-n auto`` (``-- -n 2 --aidge-configs ~/aidge/aidge_benchmark/...``)."""
    install_cpu_stack(session)
    args = session.posargs or ["-n", "auto"]
    session.run("python", "-m", "pytest", *args, "tests/test_aidge_configs.py",
                env=dict(TEST_ENV, INTEROP_AIDGE_FULL_SIZE="1"))


@nox.session(python=PYTHON)
def opinfo(session: nox.Session) -> None:
    """PyTorch's OpInfo samples, all of them, in every dtype (tests-cpu runs the first of each
    entry in float32, and in float64/float16/int64 for the catalog's entries)."""
    install_cpu_stack(session)
    args = session.posargs or ["-n", "auto", "tests/test_opinfo.py"]
    session.run("python", "-m", "pytest", *args,
                env=dict(TEST_ENV, INTEROP_OPINFO_SAMPLES="all", INTEROP_OPINFO_DTYPES="all"))


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """Main job: the equivalence suites + categorised findings, in results/runs/<run>/ (latest: results/latest)."""
    install_cpu_stack(session)
    # Everything happens inside interop.reporting.run (nothing here touches results/, so that
    # `nox -s report --install-only` writes no result): a directory per run, files renamed
    # into place when complete, results/latest moved to the run only when it completed.
    # Exit 3: the run is incomplete (the report says why).
    session.run("python", "-m", "interop.reporting.run", *session.posargs, env=TEST_ENV)


def _gpu_absent_reason() -> str | None:
    """interop/bridge/cuda.py, loaded by path: no install needed to decide to skip."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_bridge_cuda", ROOT / "interop" / "bridge" / "cuda.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.gpu_absent_reason()


@nox.session(name="cuda-recipe", python=PYTHON)
def cuda_recipe(session: nox.Session) -> None:
    """Resolve the tests-cuda environment without installing it (works without a GPU)."""
    session.install("--upgrade", "pip")  # PEP 658 metadata: resolves without downloading torch
    session.run("python", "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                "--report", "-", "-r", str(REQ / "cuda.txt"), silent=True)
    session.log("requirements/cuda.txt resolves (torch 2.9.1 + CUDA 12 libraries + aidge-backend-cuda 0.10.1)")


@nox.session(name="tests-cuda", python=PYTHON)
def tests_cuda(session: nox.Session) -> None:
    """Run the suites with backend="cuda" (skips, exit 0, when no NVIDIA GPU is present)."""
    reason = _gpu_absent_reason()
    if reason:
        session.skip(reason)
    session.install("-r", str(REQ / "cuda.txt"))
    session.install("-r", str(REQ / "test.txt"))
    session.install("--no-deps", "-e", str(ROOT))
    libdirs = session.run(
        "python", "-c",
        "import glob, os, nvidia; print(os.pathsep.join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], '*', 'lib')))))",
        silent=True,
    ).strip()
    env = dict(TEST_ENV, INTEROP_BACKEND="cuda",
               LD_LIBRARY_PATH=os.pathsep.join(filter(None, [libdirs, os.environ.get("LD_LIBRARY_PATH", "")])))
    session.run("python", "-m", "pytest", "--backend=cuda", *(session.posargs or []), env=env)


# --- benchmarks (asv) ---
# asv builds its own environments from asv.conf.json (in .asv/env: torch==2.13.0 + the Aidge
# CPU packages, the project wheel installed with --no-deps); these sessions only need asv.
# bench-quick instead benchmarks the working tree in the session's own CPU stack (no
# environment to build), so that CI stays short. README "Benchmarks" has the commands.
#: the smoke subset: two operators and three model cases (one skipped), both phases
#: (tests/unit/test_benchmarks.py checks that it selects them)
BENCH_QUICK = (r"^threads\.|^operators\.(Forward|Backward)\..*\('(ReLU_rank_2|Conv2D_attributes_kernel_square)'\)"
               r"|^models\.(Forward|Backward)\..*\('(LeNet_eval|LeNet_train|Transformer_train)'\)")


def _asv_session(session: nox.Session) -> None:
    session.install("asv", "virtualenv")
    session.run("asv", "machine", "--yes", silent=True)  # machine info asv asks for once


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """asv run on HEAD: every benchmark (operators, models; forward, backward) in asv's env."""
    _asv_session(session)
    session.run("asv", "run", *(session.posargs or ["HEAD^!"]), env=TEST_ENV)


@nox.session(name="bench-quick", python=PYTHON)
def bench_quick(session: nox.Session) -> None:
    """CI smoke: asv check, then one quick sample of a small benchmark subset (working tree)."""
    install_cpu_stack(session, "asv")
    session.run("asv", "machine", "--yes", silent=True)
    existing = f"existing:{Path(session.bin) / 'python'}"
    session.run("asv", "check", "-E", existing, env=TEST_ENV)
    session.run("asv", "run", "-E", existing, "--quick", "--show-stderr", "--bench",
                *(session.posargs or [BENCH_QUICK]), env=TEST_ENV)


@nox.session(name="bench-matrix", python=PYTHON)
def bench_matrix(session: nox.Session) -> None:
    """HEAD against several Aidge releases (benchmarks/aidge_matrix.py), side by side."""
    _asv_session(session)
    session.run("python", "benchmarks/aidge_matrix.py", "run", *session.posargs, env=TEST_ENV)


@nox.session(name="noise-floor", python=PYTHON)
def noise_floor(session: nox.Session) -> None:
    """Benchmark the working tree twice on a subset; print the run-to-run ratios per benchmark kind."""
    install_cpu_stack(session, "asv")
    session.run("asv", "machine", "--yes", silent=True)
    session.run("python", "benchmarks/noise_floor.py", *session.posargs, env=TEST_ENV)


@nox.session(python=PYTHON)
def publish(session: nox.Session) -> None:
    """asv publish into results/html + cases.html (every case linked) + the libraries from npm (when installed)."""
    import shutil

    _asv_session(session)
    session.run("asv", "publish", *session.posargs)
    session.run("python", "benchmarks/case_index.py")  # cases.html: every case one click away
    if shutil.which("npm") is None:
        session.warn("npm not found: results/html still loads jQuery, flot... from their CDNs (needs the "
                     "network); install npm (Node.js) for a site that renders offline")
    else:
        session.run("python", "benchmarks/publish_offline.py")
    session.log(SERVE_HINT)


@nox.session(name="site-check", python=PYTHON)
def site_check(session: nox.Session) -> None:
    """The published site (nox -s publish first) in headless Chromium, network blocked: every case linked and drawn."""
    import shutil

    chromium = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None)
    if chromium is None:
        session.skip("no Chromium: apt-get install chromium (playwright's own browser download is not used)")
    session.install("-r", str(REQ / "site-check.txt"))
    session.run("python", "benchmarks/check_site.py", "--chromium", chromium, *session.posargs)


#: how to look at the site: over HTTP (a page opened from disk, file://, stays blank: the
#: browser blocks the JSON requests the graphs are drawn from)
SERVE_HINT = ("serve the site over HTTP, then open http://localhost:8080 (opened from disk the page stays "
              "blank): python -m http.server -d results/html 8080")


def _regression_factor() -> float:
    """1 + the largest of asv.conf.json's ``regressions_thresholds`` (the changes asv's site
    marks as regressions, set from the measured noise floor, README "Noise floor"): the
    factor of ``asv compare``, which takes one for every benchmark."""
    import json

    lines = (ROOT / "asv.conf.json").read_text().splitlines()
    conf = json.loads("\n".join(line for line in lines if not line.lstrip().startswith("//")))
    return round(1 + max(conf["regressions_thresholds"].values()), 3)


COMPARE_FACTOR = _regression_factor()


@nox.session(python=PYTHON)
def compare(session: nox.Session) -> None:
    """asv compare main HEAD at factor 1 + the largest asv.conf.json regressions_threshold (benchmark both first)."""
    _asv_session(session)
    session.run("asv", "compare", "--factor", str(COMPARE_FACTOR), *(session.posargs or ["main", "HEAD"]))
