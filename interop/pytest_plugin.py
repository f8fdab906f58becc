"""pytest plugin of the interop suite (registered through the ``pytest11`` entry point).

Options:
  --backend {cpu,cuda,export_cpp}   the Aidge backend the equivalence suites run on
                         (default: $INTEROP_BACKEND or cpu)
  --torch-device DEVICE  the torch device of the toolkit fixtures: auto, cpu, cuda, cuda:N, mps
                         (default: $INTEROP_TORCH_DEVICE or auto); ``cpu`` never touches a GPU
  --torch-update-golden  (re)write the golden files instead of comparing with them
  --aidge-configs DIR    the directory of Aidge benchmark configurations (aidge_benchmark's
                         operations_config format) tests/test_aidge_configs.py runs
                         (default: $INTEROP_AIDGE_CONFIGS, else the installed aidge-benchmark's)

Marker:   @pytest.mark.torch_golden("name")   names the golden file of the test
Fixtures: golden (interop.diagnostics.golden.GoldenFile), make_tensor (seeded random tensors on the
          --torch-device), torch_device
"""
from __future__ import annotations

import errno
import importlib.util
import os
import sys
import zlib
from pathlib import Path

import pytest

from .backends import BACKENDS  # what --backend accepts (names only: the plugin loads before anything Aidge)
from .exporters import EXPORTER_CHOICES, EXPORTER_ENV
from .env import TORCH_DEVICE_RE, check as check_environment, given, option_default
from .errors import KERNEL_IMAGE_RE
from .bridge.cuda import cuda_available
from .records.plugin_session import records_directory, session_shard
# numpy (0.13-0.16 s, docs/costs.md): pytest_configure needs the replay context in every session anyway
from .equivalence.tester_replay import REPLAY_CONTEXT
from .diagnostics.golden import GoldenFile, golden_path


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("interop", "PyTorch <-> Aidge equivalence suite")
    group.addoption(
        "--backend",
        choices=BACKENDS,
        default=option_default("INTEROP_BACKEND"),
        help="Aidge backend the equivalence suites run on (default: $INTEROP_BACKEND or cpu)",
    )
    group.addoption(
        "--exporter",
        choices=EXPORTER_CHOICES,
        default=option_default(EXPORTER_ENV),
        help="torch's route to ONNX for every wrap() of the session: torchscript, dynamo, or auto (TorchScript, "
             "then dynamo where it cannot export); default: $INTEROP_EXPORTER or auto. The records say which "
             "route each case took",
    )
    # -- inference-correctness toolkit (interop.diagnostics: contract / golden) ---------
    group.addoption(
        "--torch-device",
        default=option_default("INTEROP_TORCH_DEVICE"),
        help="torch device of the toolkit fixtures (torch_device, make_tensor) and of device_parity: "
             "auto, cpu, cuda, cuda:N or mps; cpu never touches a GPU "
             "(default: $INTEROP_TORCH_DEVICE or auto)",
    )
    group.addoption(
        "--aidge-configs",
        metavar="DIR",
        default=option_default("INTEROP_AIDGE_CONFIGS"),
        help="directory (or one file) of Aidge benchmark configurations (aidge_benchmark operations_config "
             "format) for tests/test_aidge_configs.py (default: $INTEROP_AIDGE_CONFIGS, else the installed "
             "aidge-benchmark package's)",
    )
    group.addoption(
        "--records",
        metavar="DIR",
        default=None,
        help="write one JSON record per test into DIR/records.jsonl (+ session.json) when the session ends "
             "(default: $INTEROP_RECORDS_DIR, else $INTEROP_RESULTS_DIR; 'none': no records); "
             "$INTEROP_SHARD=K/N runs the K-th of N disjoint shards of every source",
    )
    group.addoption(
        "--shard",
        metavar="K/N",
        default=None,
        help="run the K-th of N disjoint, stable shards of every source (by a hash of the test id); "
             "default: $INTEROP_SHARD in a top-level session",
    )
    group.addoption(
        "--torch-update-golden",
        action="store_true",
        default=False,
        help="(re)write the golden files of @pytest.mark.torch_golden tests instead of comparing with them",
    )


_GOLDEN_WRITTEN = pytest.StashKey[list]()
_SEED_SECTION = pytest.StashKey[str]()
_REPLAY_SAVED = pytest.StashKey[dict]()


_TORCH_DEVICE = TORCH_DEVICE_RE


#: the suites' test folder of a checkout (tests/unit holds the tools' own tests, which need no table)
_SUITES = Path(__file__).resolve().parents[1] / "tests"


def _collects_suites(config) -> bool:
    """Whether the session collects a suite module of this checkout (``tests/``, not ``tests/unit``)."""
    for arg in getattr(config, "args", None) or []:
        path = Path(str(arg).split("::")[0])
        path = Path(os.path.abspath(config.invocation_params.dir / path))
        if (path == _SUITES or _SUITES in path.parents) and not (path == _SUITES / "unit" or
                                                                 _SUITES / "unit" in path.parents):
            return True
    return False


#: what a folder that cannot be made or written says (the results folder read-only, a file, a full disk)
_CANNOT_WRITE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT,
                                  errno.ENOTDIR, errno.EEXIST, errno.EISDIR})


def pytest_internalerror(excrepr, excinfo) -> bool | None:
    """A results folder that cannot be made or written (read-only, a file, a full disk) is one line
    naming it, never pytest's INTERNALERROR traceback: the suite's conftest makes the session's
    staging folder in ``results/`` in its ``pytest_configure`` (a historic hook, which nothing can
    wrap), and an error there reaches pytest as an internal error (exit 3).
    ``$INTEROP_RESULTS_DIR`` points the results elsewhere."""
    exc = getattr(excinfo, "value", None)
    if not isinstance(exc, OSError) or exc.errno not in _CANNOT_WRITE_ERRNOS or not exc.filename:
        return None
    where = given("INTEROP_RESULTS_DIR")  # the raw text, as given: the message quotes it, even when bad
    sys.stderr.write(f"ERROR: interop: cannot write the results folder: {exc.filename}: {exc.strerror} (make it "
                     f"writable, or point INTEROP_RESULTS_DIR elsewhere{f'; it is {where!r}' if where else ''})\n")
    sys.stderr.flush()
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Every ``INTEROP_*`` variable (:data:`interop.env.VARIABLES`) read before anything is configured,
    collected, run or written: a bad value is one ``ERROR:`` line naming the variable and the value, and
    pytest's usage-error status (4) (``INTEROP_CASE_TIMEOUT=abc`` used to break collection with a
    traceback per module; ``INTEROP_SEED=abc`` failed every case; ``INTEROP_CASE_MEMORY=3`` failed every
    case child; the conftest's staging folder was made first). An option given on the command line
    decides in place of its variable."""
    if config.option.help or config.option.version:
        return None
    problems = check_environment(config.invocation_params.args)
    if problems:
        raise pytest.UsageError(*problems)
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "interop_backend(name): the case runs on this Aidge backend whatever --backend says (an operator "
        "configuration that forces its backend); the expected-failure table is read for it",
    )
    config.addinivalue_line(
        "markers",
        "torch_golden(name): compare the test's `golden.check(output)` with the golden file "
        "<test dir>/golden/<test module>/<name>[<param id>].npz; --torch-update-golden rewrites it",
    )
    device = config.getoption("--torch-device", default="auto")
    if device is not None and not _TORCH_DEVICE.match(str(device)):
        raise pytest.UsageError(f"--torch-device={device!r}: expected auto, cpu, cuda, cuda:N or mps")
    config.stash[_GOLDEN_WRITTEN] = []
    if config.getoption("--backend", default="cpu") == "cuda":
        # torch.cuda.is_available() asks the CUDA driver, and a process that did can no longer fork
        # a case child that uses CUDA; with this variable torch asks NVML instead, which leaves it
        # fork-safe (measured on an H200, 2026-12-04: docs/cuda-on-a-gpu.md). A session setting only.
        os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    from .records.plugin import RecordsPlugin

    try:
        shard = session_shard(config)
        directory = records_directory(config)  # INTEROP_RESULTS_DIR naming a file: named, once
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    if directory is not None or shard is not None:
        config.pluginmanager.register(RecordsPlugin(config, directory, shard), "interop-records")
    if getattr(config, "workerinput", None) is None and _collects_suites(config):
        from .cases.expected_failures import suite_input_problem

        problem = suite_input_problem()  # the table or the configuration folder: one error, naming the file
        if problem:
            raise pytest.UsageError(problem)
    # what a replay command needs to reproduce a case from a fresh shell
    config.stash[_REPLAY_SAVED] = dict(REPLAY_CONTEXT)  # an in-process inner run (pytester) restores it
    REPLAY_CONTEXT["rootdir"] = str(config.rootpath)
    backend = config.getoption("--backend", default="cpu")
    REPLAY_CONTEXT["options"] = [] if backend == "cpu" else [f"--backend={backend}"]
    exporter = config.getoption("--exporter", default="auto")
    if exporter != "auto" or given(EXPORTER_ENV):
        # every wrap() of the session (forked children and xdist workers inherit it) takes it
        os.environ[EXPORTER_ENV] = exporter
        REPLAY_CONTEXT["options"].append(f"--exporter={exporter}")


# -- expected failures: applied here, for every suite, from the one table -----------------------
def _case_param(item: pytest.Item):
    """``(parameter name, Case)`` of a test whose parameter is a case, else ``(None, None)``."""
    from .cases.case import Case

    params = getattr(getattr(item, "callspec", None), "params", {}) or {}
    return next(((k, v) for k, v in params.items() if isinstance(v, Case)), (None, None))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """The one place a case's table row is looked up: every test whose parameter is a case gets,
    at collection, the case on the backend it runs on (the ``interop_backend`` marker, else
    ``--backend``) with the table's row attached, and that row's strict xfail: ``--collect-only``
    shows them and ``-m "not xfail"`` leaves them out. The case replaces the parameter (what the
    fixtures and the test receive) and travels on the item (``item.interop_case``,
    ``item.interop_expected_failure``) to the guard around the call."""
    from .cases.expected_failures import with_expected_failure, xfail_marks

    run_backend = config.getoption("--backend", default="cpu")
    for item in items:
        name, case = _case_param(item)
        if case is None:
            continue
        forced = item.get_closest_marker("interop_backend")
        case = with_expected_failure(case, forced.args[0] if forced else run_backend)
        item.callspec.params[name] = case
        item.interop_case = case
        item.interop_expected_failure = case.expected_failure
        for mark in xfail_marks(case.expected_failure):
            item.add_marker(mark)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    """The call of a test with a table row, under that row's guard: a failure quoting the row (in
    its category and phase) becomes the ExpectedAidgeFailure the strict xfail accepts; any other
    failure fails the test."""
    entry = getattr(pyfuncitem, "interop_expected_failure", None)
    if entry is None:
        return (yield)
    from .cases.expected_failures import expected_failure_guard

    with expected_failure_guard(entry):
        return (yield)


def pytest_unconfigure(config: pytest.Config) -> None:
    saved = config.stash.get(_REPLAY_SAVED, None)
    if saved is not None:
        REPLAY_CONTEXT.clear()
        REPLAY_CONTEXT.update(saved)


@pytest.fixture(scope="session")
def torch_device(request: pytest.FixtureRequest):
    """The ``torch.device`` of --torch-device (``auto``: cuda when available, else cpu);
    skips when an explicitly requested accelerator is unusable."""
    import torch

    name = request.config.getoption("--torch-device")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        pytest.skip(f"--torch-device={name}: torch.cuda.is_available() is False (torch {torch.__version__})")
    if name == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        pytest.skip("--torch-device=mps: MPS is not available")
    return torch.device(name)


@pytest.fixture
def golden(request: pytest.FixtureRequest):
    """The golden reference of this test: ``golden.check(output, rtol=..., atol=...)``.

    Its name is the ``@pytest.mark.torch_golden("name")`` argument (default: the test
    function's name); each parameter set of a parametrised test has its own file.
    """
    marker = request.node.get_closest_marker("torch_golden")
    name = (marker.args[0] if marker and marker.args else
            marker.kwargs.get("name") if marker and "name" in marker.kwargs else request.node.originalname)
    callspec = getattr(request.node, "callspec", None)
    path = golden_path(request.path, name, callspec.id if callspec is not None else None)
    update = request.config.getoption("--torch-update-golden")
    gf = GoldenFile(path, update=update, test_id=request.node.nodeid,
                    device=str(request.config.getoption("--torch-device")))
    yield gf
    if gf.written:
        request.config.stash[_GOLDEN_WRITTEN].append(str(path))


@pytest.fixture
def make_tensor(request: pytest.FixtureRequest, torch_device):
    """``make_tensor(*shape, dtype=torch.float32, low=None, high=None, requires_grad=False)``:
    uniform random tensors on --torch-device from a seed derived from the test id (printed
    when the test fails); never touches the global RNG."""
    import torch

    base = zlib.crc32(request.node.nodeid.encode())
    calls = [0]

    def make(*shape, dtype=torch.float32, low=None, high=None, requires_grad=False):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
            shape = tuple(shape[0])
        gen = torch.Generator().manual_seed(base + calls[0])
        calls[0] += 1
        request.node.stash[_SEED_SECTION] = (f"make_tensor: seed {base} + call index (0..{calls[0] - 1}), "
                                             f"derived from the test id; rerun the test to replay")
        if dtype == torch.bool:
            t = torch.randint(0, 2, shape, generator=gen).to(torch.bool)
        elif dtype.is_floating_point or dtype.is_complex:
            lo, hi = (-9.0 if low is None else low), (9.0 if high is None else high)
            t = (torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
        else:
            lo, hi = (-9 if low is None else int(low)), (10 if high is None else int(high))
            if dtype == torch.uint8:
                lo = max(lo, 0)
            t = torch.randint(lo, hi, shape, generator=gen, dtype=torch.int64).to(dtype)
        t = t.to(torch_device)
        return t.requires_grad_(True) if requires_grad else t

    return make


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    """After pytest's report (the xfail verdict included): a failing test's seed section and
    the CUDA kernel-image verdict (:func:`_report_cuda_kernel_image`).

    And a test with an xfail mark that raised: pytest's traceback text (``item.repr_failure``,
    which reads the source of every frame and formats the arguments: ~30 ms, measured by
    tools/case_cost.py) is made only when the report shows it. An expected failure that
    held keeps one line (the exception's type and first line; its reason is
    ``report.wasxfail``, its record is made from the exception itself); any other outcome gets
    the very traceback pytest makes."""
    made: list = []
    patched = call.excinfo is not None and call.when == "call" and item.get_closest_marker("xfail") is not None
    if patched:
        real = item.repr_failure

        def deferred(excinfo, *args, **kwargs):
            made.append(lambda: real(excinfo, *args, **kwargs))
            return _DEFERRED

        item.repr_failure = deferred
    try:
        report = yield
    finally:
        if patched:
            del item.repr_failure
    if made and report.longrepr is _DEFERRED:
        if report.skipped and getattr(report, "wasxfail", None) is not None:
            exc = call.excinfo.value
            text = str(exc).strip()
            report.longrepr = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"
        else:
            report.longrepr = made[-1]()
    section = item.stash.get(_SEED_SECTION, None)
    if section and report.failed:
        report.sections.append(("interop seed", section))
    _report_cuda_kernel_image(item, call, report)
    return report


#: what ``item.repr_failure`` returns while the outcome is not known yet (see above)
_DEFERRED = object()


def _report_cuda_kernel_image(item: pytest.Item, call, report) -> None:
    """On ``--backend=cuda``: a test failing because Aidge's CUDA kernels are not compiled for
    this GPU (aidge-backend-cuda 0.10.1 ships sm_52 code only) is an Aidge *packaging*
    defect, reported as XFAIL in category ``cuda_kernel_image`` with Aidge's message, never
    as a numerical mismatch and never hiding another failure (only that exact error)."""
    if not report.failed or call.excinfo is None or item.config.getoption("--backend") != "cuda":
        return
    message = str(call.excinfo.value)
    match = KERNEL_IMAGE_RE.search(message)
    if not match:
        return
    first_line = next((line for line in message.splitlines() if match.group(0) in line), match.group(0))
    report.outcome = "skipped"
    report.wasxfail = f"[cuda_kernel_image] Aidge packaging defect: {first_line.strip()}"


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    written = config.stash.get(_GOLDEN_WRITTEN, [])
    if written:
        terminalreporter.write_sep("-", f"golden files written: {len(written)}")
        for path in written:
            terminalreporter.write_line(path)


@pytest.fixture(scope="session")
def aidge_backend(request: pytest.FixtureRequest) -> str:
    """The Aidge backend under test; CUDA cases skip with the probe's reason when unusable."""
    backend = request.config.getoption("--backend")
    if backend == "export_cpp":
        if importlib.util.find_spec("aidge_export_cpp") is None:
            pytest.skip("--backend=export_cpp: aidge_export_cpp is not installed (pip install aidge-export-cpp==0.10.1)")
    if backend == "cuda":
        ok, reason = cuda_available()
        if not ok:
            pytest.skip(f"--backend=cuda: {reason}")
    return backend
