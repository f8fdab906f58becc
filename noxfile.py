"""nox sessions (`nox -l` lists them; `nox -s NAME -- ARGS` passes ARGS on).

tests-cpu    the whole pytest suite on the CPU stack (torch 2.13.0 + Aidge 0.10.1 CPU); timings and
             records replace results/benchmarks.jsonl, records.jsonl, session.json when the session
             ends (default session), then checks the records against pytest's summary
tests-cuda   the suites with backend="cuda" on a GPU machine; skips (exit 0) without one
tests-export-cpp  the operator and model suites with backend="export_cpp" (Aidge's generated C++,
             compiled once per case into a persistent cache; docs/backend-export-cpp.md)
opinfo       every OpInfo sample in every dtype (tests/test_opinfo.py, INTEROP_OPINFO_SAMPLES=all,
             INTEROP_OPINFO_DTYPES=all) as a findings run: report + triage/proposal.diff (the table's changes)
             in results/runs/<run>/; INTEROP_OPINFO_SHARD=K/N runs the K-th of N shards
onnx-backend  ONNX's own backend tests alone (onnx 1.23.2's node tests + its shipped pytorch-converted,
             pytorch-operator, simple and light model tests; tests/test_onnx_backend.py, also in tests-cpu
             and report) with Aidge as an ONNX backend, as a findings run (docs/onnx-conformance.md)
moduleinfo   every ModuleInfo sample (tests/test_moduleinfo.py, INTEROP_MODULEINFO_SAMPLES=all) as a findings run
architectures  the MONAI and transformers architectures through each exporter (--exporter=torchscript,
             then dynamo), then the porting-readiness table of both routes in results/porting/
report       the main job: suites + categorised findings report in results/runs/<run>/ (results/latest),
             with a reproducer bundle per failing case in <run>/reproducers/ (docs/reproducers.md)
repro-check  random reproducers of results/latest (or the run given after --) run in a virtual
             environment of numpy, onnx and Aidge only (.nox/repro-venv): exit 1 each, exit 0 with
             Aidge's own outputs as the expected values
default-export  every zoo model and architecture exported the way a user does (torch.onnx.export's
             defaults) beside the suite's export, both through Aidge (docs/default-export.md)
cuda-recipe  resolve the CUDA environment (pip --dry-run) on any machine
bench        asv machine --yes, then asv run on HEAD: every benchmark, in asv's own environment; -- --bench REGEX
             only those (saved for HEAD, only the cases run printed); -- -E existing --bench REGEX in the stack
bench-quick  CI smoke: asv check + one quick sample of a small subset, in the session's environment (only
             those cases parametrised, results/bench-quick), then the subset's cases Aidge cannot run
bench-matrix HEAD against several Aidge releases (one asv environment per release)
release-matrix  the operator and model suites against each Aidge release as findings runs: each
             appends its lines to results/history.jsonl, and the report shows what changed from one
             release to the next (-s "release-matrix(aidge='0.10.0.post3')" for one)
bench-export-cpp  HEAD on backend export_cpp in an asv environment of its own (the site's export_cpp
             lines beside cpu's)
noise-floor  the same commit benchmarked twice on a subset: run-to-run ratios per benchmark kind
publish      asv publish -> results/html + cases.html (every case linked; libraries served locally when
             npm is there); serve it over HTTP
site-check   the published site in headless Chromium (network blocked): the grid draws, every case linked and
             drawn, the support matrix's search and filter work, every linked defect has its row
aidge-configs-full  Aidge's own benchmark configurations (aidge-benchmark 0.10.1) at their full sizes
compare      what changed between main and HEAD (both benchmarked first): asv compare --only-changed, each
             benchmark kind at the factor the noise floor supports, then the cases Aidge cannot run, by defect
profile      per-node profile of the zoo models, Aidge against onnxruntime (docs/node-profile.md)
ci-local     .gitlab-ci.yml run here by gitlab-ci-local, reduced: a small selection in 2 shards, merge, pages
             (docs/ci.md)
"""
from __future__ import annotations

import json
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


#: The one CPU-stack environment every CPU session runs in (torch 2.13.0 + Aidge 0.10.1 CPU + the
#: test tools + asv + this package, editable): one copy of torch for tests-cpu, report, opinfo,
#: bench-quick, publish... instead of one per session (measured 2026-12-03, docs/environments.md).
#: Created on first use, updated when a requirements file changes (its stamp is their hash).
#: ``INTEROP_NOX_ENV=.venv nox -s ...`` runs in an environment you installed yourself instead
#: (the README's set-up: no second copy at all); its versions are checked, nothing is installed.
STACK = ROOT / ".nox" / "cpu-stack"
STACK_FILES = (REQ / "constraints-cpu.txt", REQ / "cpu.txt", REQ / "test.txt", ROOT / "pyproject.toml")
STACK_PINS = {"torch": "2.13.0", "aidge_core": "0.10.1", "aidge_backend_cpu": "0.10.1"}


class Stack:
    """The environment a CPU session runs in: ``run`` calls one of its programs."""

    def __init__(self, session: nox.Session, env_dir: Path) -> None:
        self.session, self.dir = session, env_dir
        self.python = str(env_dir / "bin" / "python")

    def run(self, program: str, *args: str, **kwargs) -> str | bool | None:
        """``program`` (``python``, ``asv``) from the stack's bin/, with the stack first on PATH."""
        env = dict(kwargs.pop("env", None) or {})
        env.update(PATH=os.pathsep.join([str(self.dir / "bin"), os.environ.get("PATH", "")]),
                   VIRTUAL_ENV=str(self.dir))
        return self.session.run(str(self.dir / "bin" / program), *args, env=env, external=True, **kwargs)


def _stack_stamp() -> str:
    import hashlib

    digest = hashlib.sha256(str(ROOT).encode())
    for path in STACK_FILES:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _interpreter(session: nox.Session) -> str:
    import shutil
    import sys

    found = shutil.which(f"python{PYTHON}") or (sys.executable if sys.version_info[:2] == (3, 11) else None)
    if found is None:
        session.error(f"no python{PYTHON} on PATH: the CPU stack needs Python {PYTHON}")
    return found


def cpu_stack(session: nox.Session) -> Stack:
    """The shared CPU stack (:data:`STACK`), created or updated when needed, or the environment
    ``INTEROP_NOX_ENV`` names, checked."""
    chosen = os.environ.get("INTEROP_NOX_ENV")
    if chosen:
        env_dir = Path(chosen).expanduser().resolve()
        stack = Stack(session, env_dir)
        if not Path(stack.python).exists():
            session.error(f"INTEROP_NOX_ENV={chosen}: no {stack.python} (a virtual environment's directory, "
                          "e.g. .venv after the README's set-up)")
        check = ("import importlib.metadata as m, json; print(json.dumps({p: (m.version(p) if any(True for _ in "
                 "m.distributions(name=p)) else None) for p in %r}))" % sorted(STACK_PINS))
        import json

        found = json.loads(session.run(stack.python, "-c", check, silent=True, external=True) or "{}")
        wrong = {p: v for p, v in found.items() if v is None or not v.startswith(STACK_PINS[p])}
        if wrong:
            session.error(f"INTEROP_NOX_ENV={chosen} is not the CPU stack: {wrong} (wanted {STACK_PINS}); "
                          "pip install -r requirements/dev.txt in it")
        session.log(f"running in {env_dir} (INTEROP_NOX_ENV; nothing installed)")
        return stack
    _ensure_stack(session)
    return Stack(session, STACK)


def _ensure_stack(session: nox.Session) -> None:
    import fcntl

    STACK.parent.mkdir(exist_ok=True)
    stamp_file = STACK / ".interop-stack-stamp"
    # two sessions started at once wait for one another instead of both installing
    with open(STACK.parent / "cpu-stack.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = _stack_stamp()
        python = STACK / "bin" / "python"
        if python.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
            session.log(f"reusing {STACK.relative_to(ROOT)} (requirements unchanged)")
            return
        if not python.exists():
            session.run_install(_interpreter(session), "-m", "venv", str(STACK), external=True)
        pip = (str(python), "-m", "pip", "install", "-c", str(REQ / "constraints-cpu.txt"))
        session.run_install(*pip, "-r", str(REQ / "cpu.txt"), external=True, silent=True)
        session.run_install(*pip, "-r", str(REQ / "test.txt"), "virtualenv", external=True, silent=True)
        session.run_install(*pip, "--no-deps", "-e", str(ROOT), external=True, silent=True)
        stamp_file.write_text(stamp)


@nox.session(name="tests-cpu", venv_backend="none")
def tests_cpu(session: nox.Session) -> None:
    """Run every pytest suite (tensor, operators, models, unit) on the CPU backend."""
    stack = cpu_stack(session)
    args = session.posargs or ["-n", "auto"]
    stack.run("python", "-m", "pytest", *args, env=TEST_ENV)
    # the session's records (results/records.jsonl) hold every test pytest's summary counted
    stack.run("python", "-m", "interop.records", "check", str(ROOT / "results"))


@nox.session(name="tests-export-cpp", venv_backend="none")
def tests_export_cpp(session: nox.Session) -> None:
    """The operator and model suites on backend="export_cpp": each case's model generated by
    aidge-export-cpp, compiled (one g++ process per case, cached under
    ~/.cache/aidge-torch-interop/export_cpp or $INTEROP_EXPORT_CACHE) and called in-process."""
    stack = cpu_stack(session)
    args = session.posargs or ["-n", "auto", "tests/test_operators.py", "tests/test_models.py",
                               "tests/unit/test_export_cpp.py"]
    env = dict(TEST_ENV, INTEROP_BACKEND="export_cpp")
    stack.run("python", "-m", "pytest", "--backend=export_cpp", *args, env=env)


@nox.session(name="aidge-configs-full", venv_backend="none")
def aidge_configs_full(session: nox.Session) -> None:
    """tests/test_aidge_configs.py with every case at the size its configuration gives (the
    default run reduces the batch of cases above the element budget, interop/cases/aidge_configs.py).
    Arguments after -- replace ``-n auto`` (``-- -n 2 --aidge-configs ~/aidge/aidge_benchmark/...``)."""
    stack = cpu_stack(session)
    args = session.posargs or ["-n", "auto"]
    stack.run("python", "-m", "pytest", *args, "tests/test_aidge_configs.py",
                env=dict(TEST_ENV, INTEROP_AIDGE_FULL_SIZE="1"))


@nox.session(venv_backend="none")
def opinfo(session: nox.Session) -> None:
    """PyTorch's OpInfo samples, all of them, in every dtype (tests-cpu runs the first of each
    entry in float32, and in float64/float16/int64 for the catalog's entries), as a findings run:
    results/runs/<run>/ gets the report and, where the table does not say what the run found,
    triage/proposal.diff (python -m interop.triage)."""
    stack = cpu_stack(session)
    # --tb=no: no traceback text for the (~23,000) failures no row expects. pytest's own cost
    # ~6 ms a failure in the workers (tools/case_cost.py), and the controller printed them
    # at ~5 a second after the tests had ended (measured 2026-12-03: more than an hour for the
    # FAILURES section alone). The report reads the records, made from the exceptions; -ra still
    # lists every failure with its message; a record's replay command reruns one case in full.
    args = session.posargs or ["-n", "auto", "--tb=no", "tests/test_opinfo.py"]
    # exit 1 (failures no table row holds) is this selection's triage, not the session's failure
    stack.run("python", "-m", "interop.reporting.run", *args, success_codes=[0, 1],
                env=dict(TEST_ENV, INTEROP_OPINFO_SAMPLES="all", INTEROP_OPINFO_DTYPES="all"))


@nox.session(name="onnx-backend", venv_backend="none")
def onnx_backend(session: nox.Session) -> None:
    """ONNX's own backend tests alone (tests-cpu and the default report run them among the other suites),
    with Aidge as an ONNX backend, as a findings run in results/runs/<run>/ (report, support matrix,
    triage/proposal.diff), like nox -s opinfo. INTEROP_ONNX_GROUPS=node,... narrows it."""
    stack = cpu_stack(session)
    args = session.posargs or ["-n", "auto", "--tb=no", "tests/test_onnx_backend.py"]  # see opinfo
    # every failure of this source is a strict row (it runs in tests-cpu too): exit 1 is a real one, as
    # for nox -s report, not triage material as for the full OpInfo or ModuleInfo selections
    stack.run("python", "-m", "interop.reporting.run", *args, env=TEST_ENV)


@nox.session(venv_backend="none")
def moduleinfo(session: nox.Session) -> None:
    """PyTorch's ModuleInfo samples, all of them (tests-cpu runs the first of each module and mode),
    as a findings run in results/runs/<run>/, like nox -s opinfo."""
    stack = cpu_stack(session)
    args = session.posargs or ["-n", "auto", "--tb=no", "tests/test_moduleinfo.py"]  # see opinfo
    stack.run("python", "-m", "interop.reporting.run", *args, success_codes=[0, 1],  # exit 1: see opinfo
              env=dict(TEST_ENV, INTEROP_MODULEINFO_SAMPLES="all"))


@nox.session(venv_backend="none")
def architectures(session: nox.Session) -> None:
    """The architectures (MONAI, transformers) through each of torch's exporters, then the
    porting-readiness table of both routes: results/porting/porting.md / .html / .json (the
    records of each route under results/porting/runs/<time>-<route>/; nox -s publish puts the
    table on the site). Arguments after -- replace ``-n auto``."""
    import datetime

    stack = cpu_stack(session)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    runs = []
    for route in ("torchscript", "dynamo"):
        run_dir = ROOT / "results" / "porting" / "runs" / f"{stamp}-{route}"
        runs.append(str(run_dir))
        # the exit status of each route's run is its findings (the table marks the other route's
        # cases): the table is made from the records whatever it is
        stack.run("python", "-m", "pytest", *(session.posargs or ["-n", "auto"]), "tests/test_architectures.py",
                    f"--exporter={route}", "--records", str(run_dir), "-p", "no:cacheprovider", env=TEST_ENV,
                    success_codes=[0, 1])
    stack.run("python", "-m", "interop.reporting.porting", *runs, "--write", str(ROOT / "results" / "porting"))


@nox.session(venv_backend="none")
def report(session: nox.Session) -> None:
    """Main job: the equivalence suites + categorised findings, in results/runs/<run>/ (latest: results/latest)."""
    stack = cpu_stack(session)
    # Everything happens inside interop.reporting.run (nothing here touches results/, so that
    # `nox -s report --install-only` writes no result): a directory per run, files renamed
    # into place when complete, results/latest moved to the run only when it completed.
    # Exit 1: a test failed or errored without an expected failure, or a strict one passed (the run
    # is complete all the same); 3: the run is incomplete (the report says why); nox itself exits 1.
    stack.run("python", "-m", "interop.reporting.run", *session.posargs, env=TEST_ENV)


@nox.session(name="repro-check", venv_backend="none")
def repro_check(session: nox.Session) -> None:
    """Reproducers as an Aidge developer runs them: ``-- RUN_DIR --sample N --seed S`` (default: results/latest,
    20 bundles); the environment, numpy + onnx + Aidge at this stack's versions, is .nox/repro-venv."""
    stack = cpu_stack(session)
    args = session.posargs or [str(ROOT / "results" / "latest")]
    stack.run("python", "-m", "interop.reproducers.check", *args, "--venv", str(ROOT / ".nox" / "repro-venv"))


@nox.session(name="default-export", venv_backend="none")
def default_export(session: nox.Session) -> None:
    """What users export (torch.onnx.export with torch's defaults) beside the suite's export, every zoo model and
    architecture, both routes, through Aidge: one JSON line per model and route (docs/default-export.md)."""
    stack = cpu_stack(session)
    stack.run("python", "-m", "interop.reproducers.default_export", "--dynamo", *session.posargs, env=TEST_ENV)


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
# environment to build), so that CI stays short. docs/benchmarks.md has the commands.
#: the smoke subset: two operators and three model cases, both phases (Transformer_train's backward
#: is a strict expected failure: no parameter, listed by benchmarks/not_timed.py with its defect)
#: (tests/unit/test_benchmarks.py checks that it selects them)
BENCH_QUICK = (r"^threads\.|^not_timed\.|^operators\.(Forward|Backward)\..*\('(ReLU_rank_2|Conv2D_attributes_kernel_square)'\)"
               r"|^models\.(Forward|Backward)\..*\('(LeNet_eval|LeNet_train|Transformer_train)'\)")
#: the only cases bench-quick parametrises (INTEROP_BENCH_CASES, benchmarks/harness.py): asv prints every
#: parameter of a benchmark it runs, n/a for those --bench did not select (4,016 of 4,199 lines before)
BENCH_QUICK_CASES = ("ReLU_rank_2", "Conv2D_attributes_kernel_square", "LeNet_eval", "LeNet_train", "Transformer_train")


def _derived_asv_config(name: str, results_dir: str) -> Path:
    """asv.conf.json with ``results_dir`` replaced, written next to it as ``asv-<name>-<pid>.conf.json``
    (git-ignored; asv resolves its paths from the config's folder): a run whose benchmark list or results
    must not replace results/asv's (asv rewrites its results folder's benchmarks.json on every run)."""
    lines = (ROOT / "asv.conf.json").read_text().splitlines()
    conf = json.loads("\n".join(line for line in lines if not line.lstrip().startswith("//")))
    conf["results_dir"] = results_dir
    path = ROOT / f"asv-{name}-{os.getpid()}.conf.json"
    path.write_text(json.dumps(conf, indent=2) + "\n")
    return path


def _asv_session(session: nox.Session) -> Stack:
    stack = cpu_stack(session)  # asv and virtualenv are in the stack
    stack.run("asv", "machine", "--yes", silent=True)  # machine info asv asks for once
    return stack


@nox.session(venv_backend="none")
def bench(session: nox.Session) -> None:
    """asv run on HEAD (tools/narrowed_run.py): every benchmark in asv's own environment (.asv/env);
    ``-- --bench REGEX`` only what REGEX selects, saved for HEAD, printing only the cases it ran (asv prints
    an n/a row for every case it did not select); ``-- -E existing --bench REGEX`` in the session's own
    environment instead (the working tree, no .asv/env to build; saved as HEAD's: --set-commit-hash HEAD
    added); a range given (``-- NEW``, ``-- main^!``) is kept."""
    stack = _asv_session(session)
    stack.run("python", "tools/narrowed_run.py", *session.posargs, env=TEST_ENV)


@nox.session(name="bench-quick", venv_backend="none")
def bench_quick(session: nox.Session) -> None:
    """CI smoke: asv check, then one quick sample of a small benchmark subset (working tree), then the
    subset's case-phases Aidge cannot run, with their defect ids. Only BENCH_QUICK_CASES are parameters
    (INTEROP_BENCH_CASES), in results/bench-quick (results/asv's benchmark list stays whole); with
    ``-- REGEX`` every case is a parameter again and asv prints n/a for those REGEX leaves out."""
    stack = cpu_stack(session)
    stack.run("asv", "machine", "--yes", silent=True)
    existing = f"existing:{stack.python}"
    regex = session.posargs[0] if session.posargs else BENCH_QUICK
    env = dict(TEST_ENV) if session.posargs else dict(TEST_ENV, INTEROP_BENCH_CASES=",".join(BENCH_QUICK_CASES))
    config = _derived_asv_config("bench-quick", "results/bench-quick")
    try:
        stack.run("asv", "--config", config.name, "check", "-E", existing, env=env)
        stack.run("asv", "--config", config.name, "run", "-E", existing, "--quick", "--show-stderr", "--bench",
                  regex, *session.posargs[1:], env=env)
    finally:
        config.unlink(missing_ok=True)
    stack.run("python", "benchmarks/not_timed.py", "--bench", regex, env=TEST_ENV)


#: the Aidge releases of the findings matrix: the one list, interop/aidge_releases.json (also read by
#: tools/aidge_matrix.py for asv and by the triage's release ranges), read as data
AIDGE_RELEASES = tuple(json.loads((ROOT / "interop" / "aidge_releases.json").read_text(encoding="utf-8"))["releases"])
AIDGE_CPU_PACKAGES = ("aidge-core", "aidge-backend-cpu", "aidge-onnx", "aidge-learning")


@nox.session(name="release-matrix", python=PYTHON)
@nox.parametrize("aidge", AIDGE_RELEASES)
def release_matrix(session: nox.Session, aidge: str) -> None:
    """The operator and model suites against one Aidge release (torch 2.13.0 and everything else
    as tests-cpu), as a findings run: results/runs/<run>/ and a line per release in
    results/history.jsonl; the report's trend section compares each release with the one before."""
    constraints = Path(session.create_tmp()) / "constraints-release.txt"
    constraints.write_text("torch==2.13.0\n" + "".join(f"{p}=={aidge}\n" for p in AIDGE_CPU_PACKAGES))
    # aidge-learning 0.10.0.post3 imports fastapi and uvicorn (its dashboard) at import time without
    # declaring them (measured 2026-12-02: ModuleNotFoundError in every case of that release)
    session.install("-c", str(constraints), "torch==2.13.0", *(f"{p}=={aidge}" for p in AIDGE_CPU_PACKAGES),
                    "onnx", "numpy", "typing_extensions", "fastapi", "uvicorn")
    session.install("-c", str(constraints), "-r", str(REQ / "test.txt"))
    # the 0.10.1 tools read Aidge's configurations and generate C++; they are not under test here
    session.install("--no-deps", "aidge-benchmark==0.10.1", "aidge-export-cpp==0.10.1")
    session.install("--no-deps", "-e", str(ROOT))
    args = session.posargs or ["-n", "auto", "tests/test_operators.py", "tests/test_models.py"]
    # exit 1 (outcomes the table, written for the release the project follows, does not hold) is this
    # release's findings (the report's trend), not the session's failure
    session.run("python", "-m", "interop.reporting.run", *args, env=TEST_ENV, success_codes=[0, 1])


@nox.session(name="bench-matrix", venv_backend="none")
def bench_matrix(session: nox.Session) -> None:
    """HEAD against several Aidge releases (tools/aidge_matrix.py), side by side."""
    stack = _asv_session(session)
    stack.run("python", "tools/aidge_matrix.py", "run", *session.posargs, env=TEST_ENV)


@nox.session(name="bench-export-cpp", venv_backend="none")
def bench_export_cpp(session: nox.Session) -> None:
    """HEAD on backend export_cpp in an asv environment of its own (tools/backend_env.py)."""
    stack = _asv_session(session)
    stack.run("python", "tools/backend_env.py", "run", "export_cpp", *session.posargs, env=TEST_ENV)


@nox.session(name="noise-floor", venv_backend="none")
def noise_floor(session: nox.Session) -> None:
    """Benchmark the working tree twice on a subset; print the run-to-run ratios per benchmark kind."""
    stack = cpu_stack(session)
    stack.run("asv", "machine", "--yes", silent=True)
    stack.run("python", "tools/noise_floor.py", *session.posargs, env=TEST_ENV)


@nox.session(venv_backend="none")
def publish(session: nox.Session) -> None:
    """asv publish into results/html + the project's pages (cases, side by side, support matrix, porting,
    defects; the grid drawing from one commit) + the libraries from npm (when installed): not asv
    publish alone, which deletes those pages and points the site back at CDNs."""
    import shutil

    stack = _asv_session(session)
    asv_results = ROOT / "results" / "asv"
    if not (asv_results / "benchmarks.json").is_file():
        # a fresh clone: asv publish stops at "results/asv/benchmarks.json missing!". asv writes the
        # benchmark list when it discovers the benchmarks: the .gitlab-ci.yml pages job's command
        session.log("results/asv/benchmarks.json missing (no asv run here yet): asv's benchmark discovery "
                    "writes it (asv run --bench just-discover, nothing timed)")
        stack.run("asv", "run", "-E", f"existing:{stack.python}", "--bench", "just-discover", env=TEST_ENV)
    if not any(p.name not in ("machine.json", "benchmarks.json") for p in asv_results.glob("*/*.json")):
        session.warn("no benchmarked commit in results/asv: the site's grid needs a benchmarked commit and has no "
                     "figure to draw until one is (nox -s bench: HEAD, over an hour; nox -s bench -- --bench REGEX "
                     "for a few cases; -- -E existing --bench REGEX without building .asv/env; a plain asv run -E "
                     "existing saves nothing without --set-commit-hash), then nox -s publish again")
    # a commit benchmarked on a local branch is graphed on its own line, not left out ("Couldn't
    # find <hash> in branches (main)"): a config with those branches added, when there are any
    said = str(stack.run("python", "tools/publish_offline.py", "--branch-config", silent=True) or "")
    config = next((line.strip() for line in said.splitlines() if line.strip().endswith(".conf.json")), "")
    for line in said.splitlines():
        if line.strip() and line.strip() != config:
            session.log(line)
    try:
        stack.run("asv", *(["--config", config] if config else []), "publish", *session.posargs)
    finally:
        if config:
            Path(config).unlink(missing_ok=True)
    # cases.html, pair.html, support.html, porting.html, defects.html, the grid's dots and notes
    stack.run("python", "tools/case_index.py")
    if shutil.which("npm") is None:
        session.warn("npm not found: results/html still loads jQuery, flot... from their CDNs (needs the "
                     "network); install npm (Node.js) for a site that renders offline")
    else:
        stack.run("python", "tools/publish_offline.py")
    session.log(SERVE_HINT)


@nox.session(name="site-check", python=PYTHON)
def site_check(session: nox.Session) -> None:
    """The published site (nox -s publish first) in headless Chromium, network blocked: the grid draws (fails on
    an empty grid), every case linked and drawn, the support matrix's search and filter, the defects page."""
    import shutil

    chromium = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser")) if p), None)
    if chromium is None:
        session.skip("no Chromium: apt-get install chromium (playwright's own browser download is not used)")
    session.install("-r", str(REQ / "site-check.txt"))
    session.run("python", "tools/check_site.py", "--chromium", chromium, *session.posargs)


#: how to look at the site: over HTTP (a page opened from disk, file://, stays blank: the
#: browser blocks the JSON requests the graphs are drawn from)
SERVE_HINT = ("serve the site over HTTP, then open http://localhost:8080 (opened from disk the page stays "
              "blank): python -m http.server -d results/html 8080")


#: the factor of each benchmark kind in ``nox -s compare``, from the noise floor measured on this
#: project's 2-core shared VM (docs/noise-floor.md, 2026-12-01; docs/benchmarks.md says why): the
#: smallest half-step above the largest change any same-commit pair of runs showed in that kind
#: (track_aidge_torch_ratio 1.43 over the 66 pairs of the rounds' sampling; time_bridge 2.14,
#: time_aidge 2.77, time_torch 3.26 over every call of the table), with asv's statistical test on
#: (the table's "flagged at" columns are that test). A ratio's 1.5x is what asv.conf.json's
#: regressions_thresholds marks on the site; a time's 2x there flagged 3-15% of same-commit rows per
#: call (the 2.09x MobileNetV1_eval of a one-blank-line commit), so compare waits for more.
COMPARE_FACTORS = {"track_aidge_torch_ratio": 1.5, "time_bridge": 2.5, "time_aidge": 3.0, "time_torch": 3.5}


def _regression_factor(kind: str = "track_aidge_torch_ratio") -> float:
    """The factor over which ``nox -s compare`` shows a change of a ``kind`` row (:data:`COMPARE_FACTORS`):
    never under 1 + asv.conf.json's ``regressions_threshold`` of the kind (what the site marks), so that
    compare shows no change the site would call noise."""
    import re

    lines = (ROOT / "asv.conf.json").read_text().splitlines()
    conf = json.loads("\n".join(line for line in lines if not line.lstrip().startswith("//")))
    site = [t for regex, t in conf["regressions_thresholds"].items() if re.match(regex, f"x.Forward.{kind}('c')")]
    return round(max(COMPARE_FACTORS[kind], 1 + max(site, default=0.0)), 3)


@nox.session(venv_backend="none")
def compare(session: nox.Session) -> None:
    """What changed between main and HEAD (both benchmarked first; -- REV1 REV2 [--config C] for others):
    asv compare --only-changed, each benchmark kind at its own factor, then the case-phases Aidge cannot run,
    once, grouped by their defect ids (benchmarks/not_timed.py).

    The factors (COMPARE_FACTORS) are the smallest half-step above the largest change any two runs of the
    same commit showed in that kind in docs/noise-floor.md (2-core shared VM, load 0.5-1.1): the ratio 1.5x
    (max 1.43: its rounds of ~2 ms per side cancel the VM's own speed drift), time_bridge 2.5x (max 2.14),
    time_aidge 3x (max 2.77), time_torch 3.5x (max 3.26), because one factor of 2 flagged 3-15% of
    same-commit time rows per call. The method is asv's own for the times: its statistical test stays on
    (the noise floor's "flagged at" columns are that test), so a time row is shown only when the samples
    differ too. A ratio row has no samples in asv's results (asv flags it on the factor alone), so it is
    shown only where the flag repeats in the same case's time_aidge / time_torch rows (their ratio moves
    the same way over 1.5x); the others are listed apart as unconfirmed. A time row is shown only when the
    two commits' interquartile ranges (asv's median ± half of it) part: asv's test passed 4-5x time_bridge
    rows whose samples spread wider than their medians at load 12-20. A one-blank-line commit at load 7-8
    had shown 3 ratio rows up to 2.68x; at load 12-20 it now shows nothing (docs/noise-floor.md)."""
    stack = _asv_session(session)
    factors = [f"--factor={kind}={_regression_factor(kind)}" for kind in COMPARE_FACTORS]
    stack.run("python", "tools/compare_changed.py", *(session.posargs or ["main", "HEAD"]), *factors)
    stack.run("python", "benchmarks/not_timed.py", "--examples", "2", env=TEST_ENV)


@nox.session(venv_backend="none")
def profile(session: nox.Session) -> None:
    """Per-node profile (issue 47), opt-in (about 6 min on 2 busy cores: not part of report or CI): every
    zoo model and every architecture, Aidge's scheduling records against onnxruntime's profiler on the
    same ONNX graph, one thread each, in interleaved rounds (those Aidge cannot run are listed with its
    error), and the backward where Aidge runs it (its backward records; torch's backward in total). Into the latest findings run (results/latest/node-profile; the slow nodes become its ledger's
    entries of kind slow, with timing reproducers in results/latest/reproducers/slow/, and its report's
    speed section lists them), or results/node-profile when there is no run; other arguments:
    ``nox -s profile -- --out DIR --models LeNet``. docs/node-profile.md."""
    stack = cpu_stack(session)
    where = (["--run-dir", "results/latest"] if (ROOT / "results" / "latest" / "records.jsonl").is_file()
             else ["--out", "results/node-profile"])
    args = session.posargs or [*where, "--architectures", "all", "--max-s", "10", "--backward"]
    stack.run("python", "-m", "interop.node_profile", *args, env=TEST_ENV)
    if "--run-dir" in args:  # the run's ledger (slow entries), report and porting table with the profile
        stack.run("python", "-m", "interop.reporting.ledger", args[args.index("--run-dir") + 1], env=TEST_ENV)


#: ``nox -s ci-local``'s reduced pipeline: the selection its shards split (every source of the real
#: pipeline is ``tests``), in how many shards (the real one: .gitlab-ci.yml's matrix)
CI_LOCAL_TESTS = "tests/test_operators.py -kGather"
CI_LOCAL_ARCHITECTURES = "-n auto -kBasicUNet_eval"
CI_LOCAL_SHARDS = 2


def ci_local_pipeline(text: str, shards: int = CI_LOCAL_SHARDS) -> str:
    """.gitlab-ci.yml reduced for gitlab-ci-local: no image (its shell executor, not docker) and the
    ``shards`` job's matrix cut to ``shards`` shards; every other job as it is (their rules leave out the
    gpu and quiet runners' jobs and the schedules'). YAML anchors come out expanded."""
    import yaml

    doc = yaml.safe_load(text)
    doc.get("default", {}).pop("image", None)
    doc["shards"]["parallel"]["matrix"] = [{"SHARD": [f"{k}/{shards}" for k in range(1, shards + 1)]}]
    return "# generated by nox -s ci-local from .gitlab-ci.yml\n" + yaml.safe_dump(doc, sort_keys=False, width=200)


#: what ``nox -s ci-local`` needs that pip does not bring, with its install line (docs/ci.md): gitlab-ci-local copies
#: every job's folder, artifacts and caches with rsync (its --shell-isolation and its artifacts alike); Node's
#: headers for its re2 build come from the system (/usr/include/node), not the web
CI_LOCAL_TOOLS = {
    "git": "apt-get install -y git",
    "rsync": "apt-get install -y rsync",
    "gitlab-ci-local": ('npm_config_nodedir=/usr npm install -g gitlab-ci-local@4.56.0 && '
                        'chmod +x "$(npm root -g)/gitlab-ci-local/src/index.js"'),
}


def ci_local_missing(which=None) -> list[str]:
    """Each tool of :data:`CI_LOCAL_TOOLS` not found on PATH, with its install line (a gitlab-ci-local whose
    script is there but not executable is said so: ``Permission denied`` until chmod +x)."""
    import shutil

    which = which or shutil.which
    missing = []
    for tool, line in CI_LOCAL_TOOLS.items():
        if which(tool) is not None:
            continue
        present = next((Path(d) / tool for d in os.environ.get("PATH", "").split(os.pathsep)
                        if d and (Path(d) / tool).exists()), None)
        why = f"{present} is not executable (Permission denied)" if present else "not found"
        missing.append(f"{tool}: {why}; install: {line}")
    return missing


def ci_local_scratch(prefix: str = "interop-ci-local-") -> Path:
    """The scratch folder of ``nox -s ci-local``'s clone, in $TMPDIR when it is set (created if it is not
    there: tempfile alone would fall back to /tmp without a word), else the system's temporary folder."""
    import tempfile

    chosen = os.environ.get("TMPDIR", "").strip()
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=chosen or None))


@nox.session(name="ci-local", venv_backend="none")
def ci_local(session: nox.Session) -> None:
    """.gitlab-ci.yml run here by gitlab-ci-local (prerequisites: CI_LOCAL_TOOLS, their install lines in docs/ci.md:
    rsync and gitlab-ci-local 4.56.0), before it is pushed: in a fresh clone of HEAD (committed files only; a
    temporary folder in $TMPDIR, removed after), reduced (CI_LOCAL_TESTS in CI_LOCAL_SHARDS shards, one architecture
    on both routes, then merge and pages; gitlab-ci-local checks the whole file against
    GitLab's schema first, and the rules leave out the cuda and bench jobs without INTEROP_GPU_RUNNER /
    INTEROP_QUIET_RUNNER, the schedules' jobs on a push). Every job runs in INTEROP_NOX_ENV (default: .venv, the
    README's set-up): nothing is installed. ``-- ARGS`` go to gitlab-ci-local (e.g. ``-- shards merge``)."""
    import shutil
    import subprocess
    import time

    missing = ci_local_missing()
    if missing:
        session.error("nox -s ci-local needs: " + " | ".join(missing))
    env_dir = Path(os.environ.get("INTEROP_NOX_ENV") or ROOT / ".venv").expanduser().resolve()
    if not (env_dir / "bin" / "python").exists():
        session.error(f"{env_dir}: no bin/python (set INTEROP_NOX_ENV to the CPU stack's environment)")
    clone = ci_local_scratch()
    session.log(f"the clone: {clone / 'repo'} (removed after)")
    try:
        session.run("git", "clone", "--quiet", str(ROOT), str(clone / "repo"), external=True)
        repo = clone / "repo"
        # gitlab-ci-local reads the project's path from a GitLab-like remote, else a fallback: not this folder
        session.run("git", "-C", str(repo), "remote", "remove", "origin", external=True)
        (repo / ".gitlab-ci.yml").write_text(ci_local_pipeline((repo / ".gitlab-ci.yml").read_text()))
        path = os.pathsep.join([str(env_dir / "bin"), os.environ.get("PATH", "")])
        command = ["gitlab-ci-local", "--shell-isolation", "--timestamps",
                   "--variable", f"INTEROP_NOX_ENV={env_dir}", "--variable", f"INTEROP_CI_TESTS={CI_LOCAL_TESTS}",
                   "--variable", f"INTEROP_CI_ARCHITECTURES={CI_LOCAL_ARCHITECTURES}",
                   *session.posargs]
        started = time.monotonic()
        session.log(" ".join(command))
        code = subprocess.call(command, cwd=repo, env=dict(os.environ, PATH=path, VIRTUAL_ENV=str(env_dir)))
        session.log(f"gitlab-ci-local exited {code} after {time.monotonic() - started:.0f} s (wall)")
        if code:
            session.error(f"the reduced pipeline failed (exit {code}); its jobs' logs: above")
    finally:
        shutil.rmtree(clone, ignore_errors=True)
