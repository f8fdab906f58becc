"""``.gitlab-ci.yml`` (issue 48): it passes GitLab's own schema (vendored, ci/gitlab-ci-schema.json, so
that no CI machine needs gitlab-ci-local), every job's script is a nox session that exists or a command
that runs here, the reduced copy ``nox -s ci-local`` runs is valid too, and ``ci/gate.py`` fails the
pipeline on what the project decides (an incomplete run, an unexpected outcome), never on the rest."""
from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")  # PyYAML: asv and transformers require it (requirements/test.txt)
jsonschema = pytest.importorskip("jsonschema")  # requirements/test.txt pins it

ROOT = Path(__file__).resolve().parents[2]
PIPELINE = ROOT / ".gitlab-ci.yml"
SCHEMA = ROOT / "ci" / "gitlab-ci-schema.json"
#: the keys of a pipeline file that are not jobs
GLOBAL_KEYS = {"workflow", "stages", "default", "variables", "include", "image", "services", "cache",
               "before_script", "after_script", "spec"}


def _module_exists(name: str) -> bool:
    """Whether ``python -m name`` finds its module here. ``pip`` through its installed metadata:
    setuptools' distutils shim (``_distutils_hack``, Python < 3.12) turns itself off for the rest
    of the process when the meta path is asked for the top-level ``pip``, and a later ``import
    setuptools`` (torch's OpInfo database imports it) then fails its own check (``AssertionError:
    .../python3.11/distutils/core.py``): the OpInfo tests skipped on the xdist worker that had run
    this file (docs/testing.md, "Two flaky tests explained")."""
    if name == "pip":
        try:
            importlib.metadata.distribution("pip")
        except importlib.metadata.PackageNotFoundError:
            return False
        return True
    return importlib.util.find_spec(name) is not None


def test_checking_for_pip_leaves_setuptools_importable():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import test_gitlab_ci as t; "
            "assert t._module_exists('pip'); import setuptools; print('ok')")
    done = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def _pipeline() -> dict:
    return yaml.safe_load(PIPELINE.read_text(encoding="utf-8"))


def _validator():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


def _jobs(doc: dict) -> dict[str, dict]:
    return {name: job for name, job in doc.items()
            if name not in GLOBAL_KEYS and not name.startswith(".") and isinstance(job, dict)}


def _errors(doc: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"[:300] for e in _validator().iter_errors(doc)]


def test_the_pipeline_passes_gitlabs_schema():
    doc = _pipeline()
    assert _errors(doc) == []
    assert {"prepare", "shards", "merge", "cuda", "bench", "release-matrix", "nightly", "pages"} <= set(_jobs(doc))


def test_the_schema_check_can_fail():
    """The vendored schema refuses what GitLab refuses: a script line YAML read as a mapping (what an
    unquoted ``echo "a: b"`` becomes), an unknown job key, a matrix of the wrong shape."""
    doc = _pipeline()
    doc["prepare"]["script"].append({"echo 'no durations yet": "shards by hash'"})
    doc["merge"]["scriptt"] = ["true"]
    doc["shards"]["parallel"] = {"matrix": "1/2"}
    said = "\n".join(_errors(doc))
    assert "prepare/script" in said and "merge" in said and "shards/parallel" in said, said


def test_the_schema_is_gitlabs_as_gitlab_ci_local_ships_it():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["$id"] == "https://gitlab.com/.gitlab-ci.yml" and "job_template" in schema["definitions"]
    # gitlab-ci-local adds keys of its own (gclInteractive...) to its copy: not in the vendored one
    assert not [k for k in schema["definitions"]["job_template"]["properties"] if k.startswith("gcl")]


def _nox_sessions() -> set[str]:
    """The sessions noxfile.py defines (their ``name=`` or function name), read without importing nox."""
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and ast.unparse(deco.func) == "nox.session":
                given = [k.value.value for k in deco.keywords if k.arg == "name"]
                names.add(given[0] if given else node.name)
    return names


def _matrix_values(job: dict, name: str) -> list[str]:
    values: list[str] = []
    for row in (job.get("parallel") or {}).get("matrix") or []:
        got = row.get(name)
        values += got if isinstance(got, list) else [got] if got is not None else []
    return values


def _commands(job: dict) -> list[str]:
    """Each shell command of a job's scripts (lines split at ``;``, ``&&``, ``||``, ``|``, ``$(...)``)."""
    out = []
    for line in (job.get("before_script") or []) + (job.get("script") or []):
        for part in re.split(r";|&&|\|\||\||\$\(|\)|\bthen\b|\bif\b|\bfi\b|\belse\b|\n", line):
            part = part.strip()
            if part and not part.startswith("#") and part not in ("[", "]"):
                out.append(part)
    return out


#: the first words a script may start with besides nox: the shell and git, a script of ci/, python running
#: a file of this repository or a module of the package, or an environment's asv
SHELL = {"mkdir", "test", "echo", "ln", "rm", "cp", "git", "grep", "ls", "xargs", "command", "[", "status=0",
         "status=$?", "true", "unset", "INTEROP_BACKEND=cuda"}


def test_every_job_script_is_a_nox_session_or_a_command_that_runs_here():
    doc = _pipeline()
    sessions = _nox_sessions()
    jobs = dict(_jobs(doc), default=doc["default"])
    checked = 0
    for name, job in jobs.items():
        for command in _commands(job):
            words = shlex.split(command.split(" #")[0], comments=True) if "'" in command or '"' in command \
                else command.split(" #")[0].split()
            if not words:
                continue
            if words[0] == "nox":
                session = words[words.index("-s") + 1]
                wanted = [session.replace("$INTEROP_SOURCE", v) for v in _matrix_values(job, "INTEROP_SOURCE")] \
                    if "$INTEROP_SOURCE" in session else [session]
                for one in wanted:
                    assert one in sessions, f"{name}: nox -s {one}: no such session in noxfile.py"
                checked += 1
            elif words[0] == "python" or words[0].endswith("/bin/python"):
                if words[1] == "-m":
                    module = words[2]
                    assert _module_exists(module), f"{name}: python -m {module}: no such module"
                elif words[1] != "-c":
                    assert (ROOT / words[1]).is_file(), f"{name}: python {words[1]}: no such file"
                checked += 1
            elif words[0].startswith("ci/"):
                script = ROOT / words[0]
                assert script.is_file() and script.stat().st_mode & 0o111, f"{name}: {words[0]}: not an executable"
                checked += 1
            elif words[0].endswith("/bin/asv") or (len(words) > 1 and words[1].endswith("/bin/asv")):
                checked += 1  # the tests-cuda session's environment (made by the line before)
            else:
                assert words[0] in SHELL or words[0].startswith("-"), f"{name}: {command!r}: not a nox session " \
                                                                      "nor a known command"
    assert checked >= 15


def test_the_scripts_gate_and_shard_helpers_answer_help():
    """The non-nox commands the jobs run exist as commands here (their --help exits 0)."""
    for command in ([sys.executable, "ci/gate.py", "--help"],
                    [sys.executable, "-m", "interop.records.shard", "--help"],
                    ["bash", "-n", "ci/nightly.sh"]):
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, (command, proc.stderr)


def test_the_shard_jobs_cover_their_shards_and_the_merge_takes_them_all():
    doc = _pipeline()
    for job, key in (("shards", "SHARD"), ("full-shards", "SHARD")):
        by_count: dict[int, set[int]] = {}
        rows = doc[job]["parallel"]["matrix"]
        for row in rows:
            ks = [tuple(map(int, v.split("/"))) for v in (row[key] if isinstance(row[key], list) else [row[key]])]
            n = {n for _, n in ks}
            assert len(n) == 1, (job, row)
            assert sorted(k for k, _ in ks) == list(range(1, n.pop() + 1)), (job, row)
        by_count.clear()
    merge_needs = {n["job"] if isinstance(n, dict) else n for n in doc["merge"]["needs"]}
    assert "shards" in merge_needs
    # a failed or killed shard still gets its merge, which names it (never skipped, never complete)
    assert all(rule.get("when") in ("always", "never") for rule in doc["merge"]["rules"])
    assert doc["shards"]["artifacts"]["when"] == "always"


def test_the_gpu_and_quiet_jobs_need_their_tags_and_their_variable():
    doc = _pipeline()
    assert doc["cuda"]["tags"] == ["gpu"] and doc["bench"]["tags"] == ["quiet"]
    assert "INTEROP_GPU_RUNNER" in json.dumps(doc["cuda"]["rules"])
    assert "INTEROP_QUIET_RUNNER" in json.dumps(doc["bench"]["rules"])


def test_the_reduced_pipeline_of_ci_local_is_valid_with_two_shards():
    spec = importlib.util.spec_from_file_location("_noxfile", ROOT / "noxfile.py")
    noxfile = importlib.util.module_from_spec(spec)
    pytest.importorskip("nox")
    spec.loader.exec_module(noxfile)
    reduced = yaml.safe_load(noxfile.ci_local_pipeline(PIPELINE.read_text(encoding="utf-8")))
    assert _errors(reduced) == []
    assert "image" not in reduced["default"]  # gitlab-ci-local's shell executor, not docker
    assert reduced["shards"]["parallel"]["matrix"] == [{"SHARD": ["1/2", "2/2"]}]
    assert {k: v for k, v in reduced.items() if k != "shards" and k != "default"} == \
        {k: v for k, v in _pipeline().items() if k != "shards" and k != "default"}


# -- ci/gate.py ------------------------------------------------------------------------------------------

def _merged_run(tmp_path: Path, outcomes: list[str], *, complete: bool = True, incomplete: list[str] = ()) -> Path:
    run = tmp_path / "runs" / "20261203T000000000000Z-abcdef12-merged-1"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"complete": complete, "merged_from": ["a", "b"],
                                              "ended": "; ".join(incomplete) or None}))
    (run / "report.json").write_text(json.dumps({"incomplete": list(incomplete), "defects": {"count": 1, "cases": 1}}))
    (run / "records.jsonl").write_text("".join(json.dumps({"nodeid": f"t.py::test_{i}", "outcome": o}) + "\n"
                                               for i, o in enumerate(outcomes)))
    (run / "defects.json").write_text(json.dumps({"defects": [{"id": "D-1", "title": "X fails", "new": 1}]}))
    (run / "reproducers").mkdir()
    return run


def _gate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "ci" / "gate.py"), *args], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("outcomes, extra, code, said", [
    (["passed", "xfailed", "skipped"], [], 0, "passed: complete"),
    (["passed", "failed"], [], 1, "failed: t.py::test_1"),
    (["passed", "xpassed"], [], 1, "xpassed: t.py::test_1"),
    (["passed", "failed"], ["--complete-only"], 0, "complete (unexpected failures are this selection's triage"),
])
def test_the_gate_fails_on_an_unexpected_outcome_only(tmp_path, outcomes, extra, code, said):
    _merged_run(tmp_path, outcomes)
    proc = _gate(str(tmp_path / "runs"), "--publish", str(tmp_path / "pub"), *extra)
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert said in proc.stdout and "D-1 X fails: 1 new case(s)" in proc.stdout
    published = sorted(p.name for p in (tmp_path / "pub").iterdir())
    assert "report.json" in published and "reproducers" not in published


def test_the_gate_reads_the_ledger_through_the_pages_model_and_names_a_wrong_entry(tmp_path):
    run = _merged_run(tmp_path, ["passed"])
    (run / "defects.json").write_text(json.dumps({"defects": [{"id": "D-1", "title": "X fails", "new": "1"}]}))
    proc = _gate(str(tmp_path / "runs"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert f"ci/gate.py: {run / 'defects.json'}: defect D-1: key 'new': an integer, got str" in proc.stderr


def test_the_gate_fails_on_an_incomplete_run_and_on_a_refused_merge(tmp_path):
    _merged_run(tmp_path, ["passed"], complete=False, incomplete=["shard 2/2: 3 test(s) killed"])
    proc = _gate(str(tmp_path / "runs"), "--complete-only")
    assert proc.returncode == 3 and "RUN INCOMPLETE: shard 2/2: 3 test(s) killed" in proc.stdout
    # the merge refused (a shard missing): no merged run; the merge's own status, its reasons said above it
    proc = _gate(str(tmp_path / "empty"), "--merge-status", "2")
    assert proc.returncode == 2 and "no merged run" in proc.stdout
