"""The reasons each import inside a function of ``interop/`` has (issue 62: function-level imports
only where start-up cost is measured and said), read by tests/unit/test_function_imports.py.

Costs: a fresh process importing the module alone, three runs, on this project's 2-core VM
(2026-12-07, load 0.1-1.8): docs/costs.md#what-an-import-costs gives the command and every figure."""
from __future__ import annotations

#: (a) a third-party module, by its top-level name -> its measured cold import cost and why it waits
HEAVY = {
    'torch': 'torch: 1.17-1.20 s cold; import interop, interop.reporting, interop.records and the case catalog run without it',
    'onnx': 'onnx: 0.83-0.89 s cold (protobuf, ml_dtypes); only an export or a graph check needs it',
    'onnxruntime': 'onnxruntime: 0.10-0.11 s cold, an optional test dependency (pyproject [test]); the ONNX oracle only',
    'onnxscript': "onnxscript: 1.35-1.47 s cold; torch's dynamo exporter only",
    'aidge_core': 'aidge_core: 1.39-1.55 s cold, an optional dependency (pyproject [cpu]); the bridge loads it on first use (interop.bridge.runtime)',
    'aidge_backend_cpu': 'aidge_backend_cpu: 1.55-1.74 s cold (with aidge_core), optional ([cpu]); a run on the CPU backend only',
    'aidge_onnx': 'aidge_onnx: 1.52-1.91 s cold, optional ([cpu]); the ONNX import only',
    'aidge_export_cpp': 'aidge_export_cpp: 2.34-2.64 s cold, optional ([cpu]); the export_cpp backend only',
    'numpy': 'numpy: 0.13-0.16 s cold; interop, interop.records, the catalog and the analysis CLIs import without it',
    'pytest': "pytest: 0.13-0.16 s cold, a test dependency: asv's environments have none (interop.cases.suite's docstring)",
    'packaging': 'packaging.version: 7-8 ms cold; interop.env is standard library only (its docstring)',
    'ml_dtypes': 'ml_dtypes: 0.77-0.79 s cold (numpy); a bfloat16/float8 reproducer only',
    'monai': 'monai: 4.9-6.9 s cold, an optional test dependency; one architecture case',
    'transformers': 'transformers: 0.76-0.77 s cold (more on first model), an optional test dependency; one architecture case',
}

#: (b) an interop module imported inside a function of another, (importer, imported) -> why: its
#: top-level import would load a heavy module of HEAVY into a module that must stay light, or go
#: against the layers (tests/unit/test_layout.py LAYERS, UPWARD_ALLOWED)
LOCAL = {
    ('interop.__main__', 'interop.check'):
        'import interop.check costs 0.24-0.31 s (pydantic, the checking package); `python -m interop` answers --help and usage errors before it',
    ('interop.__main__', 'interop.checking.defect_ids'):
        'the same: read only for --ledger, after the arguments are parsed',
    ('interop.__main__', 'interop.reporting.models'):
        "the same: pydantic's page models, only when a ledger page is read",
    ('interop.bridge.cuda', 'interop.errors'):
        'the noxfile loads cuda.py by path, outside the package: standard library only at its top (tests/unit/test_bridge_imports.py); the error is raised inside the package only',
    ('interop.bridge.export_validity', 'interop.oracle.attribution'):
        'importing it loads numpy (0.13-0.16 s); {a} imports without it',
    ('interop.bridge.export_validity', 'interop.oracle.onnxruntime'):
        'importing it loads numpy (0.13-0.16 s); {a} imports without it',
    ('interop.bridge.graph', 'interop.bridge.tensors'):
        'interop.bridge.tensors imports aidge_core (1.4-1.6 s); the graph helpers import without Aidge',
    ('interop.bridge.onnx_backend', 'interop.bridge.graph'):
        "interop.bridge.graph imports torch (1.2 s); onnx's backend API runs without torch",
    ('interop.bridge.onnx_backend', 'interop.bridge.runner'):
        "interop.bridge.runner imports torch (1.2 s); onnx's backend API runs without torch",
    ('interop.bridge.runner', 'interop.bridge.tensors'):
        'interop.bridge.tensors imports aidge_core (1.4-1.6 s); the runner loads Aidge on first use',
    ('interop.bridge.wrapping', 'interop.bridge.tensors'):
        'interop.bridge.tensors imports aidge_core (1.4-1.6 s); wrap() loads Aidge on first use',
    ('interop.cases.aidge_check', 'interop.cases.aidge_references'):
        'importing it loads torch (1.2 s); the Aidge benchmark cases (interop.cases.aidge_configs -> aidge_check) imports without it',
    ('interop.cases.aidge_check', 'interop.cases.suite'):
        'interop.cases.suite imports torch and onnx (2 s); collecting the Aidge benchmark cases does not',
    ('interop.cases.aidge_check', 'interop.equivalence.tester'):
        'importing it loads torch (1.2 s); collecting the Aidge benchmark cases imports without it',
    ('interop.cases.architectures', 'interop.equivalence.callable_check'):
        'importing it loads numpy (0.13-0.16 s); collecting the architecture cases imports without it',
    ('interop.cases.catalog', 'interop.diagnostics'):
        'CHECKS is a lazy name: it imports interop.diagnostics.contract_checks (torch, onnx: 2 s); the catalog stays torch-free (tests/unit/test_cases.py)',
    ('interop.cases.config', 'interop.oracle.tolerance'):
        'importing it loads numpy (0.13-0.16 s); the catalog (tests/unit/test_cases.py: config is read at collection) imports without it',
    ('interop.cases.moduleinfo', 'interop.bridge.onnx_export'):
        'importing it loads torch and onnx (2 s); a case runs it, collection does not',
    ('interop.cases.moduleinfo', 'interop.cases.kept_samples'):
        'importing it loads numpy (0.13-0.16 s); collecting the ModuleInfo cases imports without it',
    ('interop.cases.moduleinfo', 'interop.equivalence.callable_check'):
        'importing it loads numpy (0.13-0.16 s); collecting the ModuleInfo cases imports without it',
    ('interop.cases.moduleinfo', 'interop.equivalence.callable_module'):
        'importing it loads numpy (0.13-0.16 s); collecting the ModuleInfo cases imports without it',
    ('interop.cases.moduleinfo', 'interop.equivalence.isolation'):
        'importing it loads numpy (0.13-0.16 s); collecting the ModuleInfo cases imports without it',
    ('interop.cases.onnx_conformance', 'interop.bridge.onnx_backend'):
        'importing it loads onnx and numpy (1 s); collecting the ONNX backend cases needs neither',
    ('interop.cases.onnx_conformance', 'interop.equivalence.tester'):
        'importing it loads torch and numpy (1.3 s); collecting the ONNX backend cases needs neither',
    ('interop.cases.onnx_conformance', 'interop.oracle.attribution'):
        'importing it loads numpy (0.13-0.16 s); collecting the ONNX backend cases imports without it',
    ('interop.cases.onnx_conformance', 'interop.oracle.compare'):
        'importing it loads numpy (0.13-0.16 s); collecting the ONNX backend cases imports without it',
    ('interop.cases.onnx_conformance', 'interop.oracle.onnxruntime'):
        'importing it loads numpy (0.13-0.16 s); collecting the ONNX backend cases imports without it',
    ('interop.cases.onnx_conformance', 'interop.oracle.outputs'):
        'importing it loads numpy (0.13-0.16 s); collecting the ONNX backend cases imports without it',
    ('interop.cases.onnx_conformance', 'interop.oracle.tolerance'):
        'importing it loads numpy (0.13-0.16 s); collecting the ONNX backend cases imports without it',
    ('interop.cases.opinfo', 'interop.bridge.onnx_export'):
        'importing it loads torch and onnx (2 s); a case runs it, collection does not',
    ('interop.cases.opinfo', 'interop.cases.kept_samples'):
        'importing it loads numpy (0.13-0.16 s); collecting the OpInfo cases imports without it',
    ('interop.cases.opinfo', 'interop.equivalence.callable_check'):
        'importing it loads numpy (0.13-0.16 s); collecting the OpInfo cases imports without it',
    ('interop.cases.opinfo', 'interop.equivalence.callable_module'):
        'importing it loads numpy (0.13-0.16 s); collecting the OpInfo cases imports without it',
    ('interop.cases.opinfo', 'interop.equivalence.isolation'):
        'importing it loads numpy (0.13-0.16 s); collecting the OpInfo cases imports without it',
    ('interop.cases.opinfo', 'interop.records.shard'):
        'against the layers (records above cases): tests/unit/test_layout.py UPWARD_ALLOWED',
    ('interop.checking.defect_ids', 'interop.equivalence.callable_check'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.defect_ids (pydantic only) imports without it',
    ('interop.checking.defect_ids', 'interop.equivalence.isolation'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.defect_ids (pydantic only) imports without it',
    ('interop.checking.defect_ids', 'interop.reporting.ledger'):
        'importing it loads jinja2 (0.04-0.05 s); interop.checking.defect_ids imports with pydantic only',
    ('interop.checking.defect_ids', 'interop.reproducers.bundle'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.defect_ids (pydantic only) imports without it',
    ('interop.checking.defect_ids', 'interop.reproducers.fields'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.defect_ids (pydantic only) imports without it',
    ('interop.checking.defect_ids', 'interop.reproducers.layout'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.defect_ids (pydantic only) imports without it',
    ('interop.checking.inputs', 'interop.equivalence.isolation'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.inputs (standard library only) imports without it',
    ('interop.checking.inputs', 'interop.equivalence.isolation_memory'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.inputs (standard library only) imports without it',
    ('interop.checking.leaves', 'interop.bridge'):
        'wrap is a lazy name: it imports interop.bridge.wrapping (torch, onnx: 2 s); interop.checking.leaves (standard library only) imports without them',
    ('interop.checking.leaves', 'interop.bridge.value_check'):
        'importing it loads torch (1.2 s); interop.checking.leaves (standard library only) imports without it',
    ('interop.checking.leaves', 'interop.equivalence.callable_module'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.leaves (standard library only) imports without it',
    ('interop.checking.leaves', 'interop.equivalence.isolation'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.leaves (standard library only) imports without it',
    ('interop.checking.leaves', 'interop.equivalence.policy'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.leaves (standard library only) imports without it',
    ('interop.checking.leaves', 'interop.equivalence.verdict'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.leaves (standard library only) imports without it',
    ('interop.checking.passes', 'interop.equivalence.verdict'):
        'importing it loads numpy (0.13-0.16 s); interop.checking.passes (pydantic only) imports without it',
    ('interop.diagnostics.batch_sweep', 'interop.bridge'):
        'wrap is a lazy name: it imports interop.bridge.wrapping (onnx: 0.83-0.89 s); the batch sweep imports with torch and numpy only',
    ('interop.diagnostics.batch_sweep', 'interop.cases.moduleinfo'):
        'against the layers (cases above diagnostics): tests/unit/test_layout.py UPWARD_ALLOWED, the --moduleinfo mode only',
    ('interop.env', 'interop.backends'):
        "interop.env is standard library only, the bottom of the layers (its docstring): the backends' names are read when --backend is",
    ('interop.equivalence.callable_check', 'interop.bridge'):
        'wrap is a lazy name: it imports interop.bridge.wrapping (torch, onnx: 2 s); callable_check imports with numpy only',
    ('interop.equivalence.callable_check', 'interop.bridge.onnx_export_graph'):
        'importing it loads torch and onnx (2 s); callable_check imports with numpy only',
    ('interop.equivalence.callable_check', 'interop.bridge.onnx_export_state'):
        'importing it loads torch (1.2 s); callable_check imports with numpy only',
    ('interop.equivalence.callable_check', 'interop.bridge.value_check'):
        'importing it loads torch (1.2 s); callable_check imports without it',
    ('interop.equivalence.callable_check', 'interop.equivalence.tester'):
        'importing it loads torch (1.2 s); callable_check imports without it',
    ('interop.equivalence.tester', 'interop.bridge'):
        'AidgeModule and normalize_input_sizes are lazy names: they import interop.bridge.module and interop.bridge.wrapping (onnx: 0.85 s); this module imports with torch only',
    ('interop.equivalence.tester', 'interop.bridge.onnx_export_graph'):
        'importing it loads onnx (0.83-0.89 s); this module imports with torch only (the attribution of a difference reads the graph)',
    ('interop.equivalence.tester', 'interop.diagnostics'):
        'against the layers (diagnostics above equivalence): tests/unit/test_layout.py UPWARD_ALLOWED, only when a comparison has failed',
    ('interop.equivalence.tester_aidge_time', 'interop.bridge'):
        'AidgeModule is a lazy name: it imports interop.bridge.module (onnx: 0.85 s); this module imports with torch only',
    ('interop.equivalence.tester_steppers', 'interop.bridge'):
        'AidgeModule is a lazy name: it imports interop.bridge.module (onnx: 0.85 s); this module imports with torch only',
    ('interop.equivalence.verdict', 'interop.bridge'):
        'wrap is a lazy name: it imports interop.bridge.wrapping (torch, onnx: 2 s); verdict imports with numpy only',
    ('interop.equivalence.verdict', 'interop.bridge.onnx_export'):
        'importing it loads torch and onnx (2 s); verdict imports with numpy only',
    ('interop.equivalence.verdict', 'interop.bridge.onnx_export_graph'):
        'importing it loads torch and onnx (2 s); verdict imports with numpy only',
    ('interop.equivalence.verdict', 'interop.equivalence.tester'):
        'importing it loads torch (1.2 s); verdict imports with numpy only',
    ('interop.node_profile.backward', 'interop.bridge.onnx_export_state'):
        'importing it loads torch (1.2 s); interop.node_profile.backward (numpy only) imports without it',
    ('interop.node_profile.backward', 'interop.bridge.wrapping'):
        'importing it loads torch and onnx (2 s); interop.node_profile.backward (numpy only) imports without them',
    ('interop.node_profile.cli', 'interop.zoo.models'):
        'importing it loads torch (1.2 s); interop.node_profile.cli (numpy only) imports without it',
    ('interop.node_profile.torch', 'interop.bridge.onnx_export'):
        'importing it loads torch and onnx (2 s); interop.node_profile.torch (numpy only) imports without them',
    ('interop.node_profile.torch', 'interop.bridge.onnx_export_state'):
        'importing it loads torch (1.2 s); interop.node_profile.torch (numpy only) imports without it',
    ('interop.records.plugin', 'interop.equivalence.tester_replay'):
        'importing it loads numpy (0.13-0.16 s); the records plugin is loaded by every pytest session (a unit-test run included) and imports without it: only a failed or expected-to-fail test needs its replay command',
    ('interop.records.plugin', 'interop.reproducers.bundle'):
        'importing it loads numpy (0.13-0.16 s); the records plugin is loaded by every pytest session (a unit-test run included) and imports without it: only a failing case under reproducers needs it',
    ('interop.records.plugin', 'interop.reproducers.fields'):
        'importing it loads numpy (0.13-0.16 s); the records plugin is loaded by every pytest session (a unit-test run included) and imports without it: only a failing case under reproducers needs it',
    ('interop.records.plugin', 'interop.reproducers.layout'):
        'importing it loads numpy (0.13-0.16 s); the records plugin is loaded by every pytest session (a unit-test run included) and imports without it: only a failing case under reproducers needs it',
    ('interop.records.shard', 'interop.records.store'):
        'interop.records.store imports pydantic; the shard rule is read by the OpInfo source (interop.cases.opinfo) and the plugin at configure time',
    ('interop.reporting.bench_calls', 'interop.bridge.onnx_export'):
        'importing it loads onnx (0.83-0.89 s); interop.reporting.bench_calls (torch, numpy) imports without it',
    ('interop.reporting.bench_calls', 'interop.cases.suite'):
        'importing it loads onnx (0.83-0.89 s); interop.reporting.bench_calls (torch, numpy) imports without it',
    ('interop.reporting.bench_harness', 'interop.cases.suite'):
        'importing it loads onnx (0.83-0.89 s); interop.reporting.bench_harness (torch, numpy) imports without it',
    ('interop.reporting.run_merge_bundles', 'interop.reporting.defect_issue_script'):
        'importing it loads numpy (0.13-0.16 s); interop.reporting.run_merge_bundles (pydantic only) imports without it',
    ('interop.reporting.run_merge_bundles', 'interop.reproducers.script'):
        'importing it loads numpy (0.13-0.16 s); interop.reporting.run_merge_bundles (pydantic only) imports without it',
    ('interop.reporting.timing_pass', 'interop.equivalence.timing'):
        'importing it loads torch and numpy (1.3 s); interop.reporting.timing_pass imports with pydantic only',
    ('interop.reporting.triage_operators', 'interop.reproducers.fields'):
        'importing it loads numpy (0.13-0.16 s); interop.reporting.triage_operators (pydantic, packaging) imports without it',
    ('interop.reproducers.aidge', 'interop.bridge.graph'):
        'importing it loads torch and onnx (2 s); interop.reproducers.aidge (numpy only) imports without them',
    ('interop.reproducers.aidge', 'interop.bridge.runner'):
        'importing it loads torch (1.2 s); interop.reproducers.aidge (numpy only) imports without it',
    ('interop.reproducers.bundle', 'interop.bridge.onnx_export_graph'):
        'importing it loads torch and onnx (2 s); interop.reproducers.bundle (numpy only) imports without them',
    ('interop.reproducers.default_export', 'interop.bridge.binding'):
        'importing it loads torch (1.2 s); interop.reproducers.default_export (numpy only) imports without it',
    ('interop.reproducers.default_export', 'interop.bridge.onnx_export'):
        'importing it loads torch and onnx (2 s); interop.reproducers.default_export (numpy only) imports without them',
    ('interop.reproducers.default_export', 'interop.bridge.onnx_export_state'):
        'importing it loads torch (1.2 s); interop.reproducers.default_export (numpy only) imports without it',
    ('interop.reproducers.default_export', 'interop.zoo.models'):
        'importing it loads torch (1.2 s); interop.reproducers.default_export (numpy only) imports without it',
    ('interop.reporting.ledger', 'interop.reporting.defect_issue_write'):
        'importing it loads numpy (0.13-0.16 s); the ledger imports without it: only writing the issue files needs it',
    ('interop.reporting.ledger_slow', 'interop.reporting.defect_issue_write'):
        'importing it loads numpy (0.13-0.16 s); ledger_slow (and the ledger) imports without it: only writing the slow issues needs it',
    ('interop.triage', 'interop.reporting.ledger'):
        'importing it loads jinja2; `python -m interop.triage --help` and its diff command run without',
    ('interop.triage', 'interop.reporting.triage_apply'):
        'importing it loads numpy and jinja2 (0.2 s); `python -m interop.triage --help` and its diff command run without',
    ('interop.triage', 'interop.reporting.triage_propose'):
        'importing it loads numpy and jinja2 (0.2 s); `python -m interop.triage --help` and its diff command run without',
}

#: (c) an import that must happen at a given moment: in a forked child, after an environment
#: variable is set, or in the parent before it forks
LATE = {
    ('interop.cases.suite', 'interop.bridge'):
        'pre-imported by the parent (_prepare_parent) before it forks a child per case: each child starts with it loaded',
    ('interop.cases.suite', 'interop.equivalence.tester'):
        'pre-imported by the parent (_prepare_parent) before it forks a child per case: each child starts with it loaded',
    ('interop.pytest_plugin', 'interop.cases.case'):
        "importing it runs interop.cases.config, which reads INTEROP_FORWARD_ONLY_CASES: after pytest_cmdline_main's check of every INTEROP_* variable, so a bad value is a usage error (4), not a traceback loading the plugin (tests/unit/test_run_environment.py)",
    ('interop.pytest_plugin', 'interop.cases.expected_failures'):
        "importing it runs interop.cases.config, which reads INTEROP_FORWARD_ONLY_CASES: after pytest_cmdline_main's check of every INTEROP_* variable, so a bad value is a usage error (4), not a traceback loading the plugin (tests/unit/test_run_environment.py)",
    ('interop.pytest_plugin', 'interop.records.plugin'):
        "importing it runs interop.cases.config, which reads INTEROP_FORWARD_ONLY_CASES: after pytest_cmdline_main's check of every INTEROP_* variable, so a bad value is a usage error (4), not a traceback loading the plugin (tests/unit/test_run_environment.py)",
}
