"""Generated scripts take data, never text pasted into code (repro.py, reduced/repro.py, the factory
variant, standalone.py), and a reproducer keeps to its documented exit codes (docs/reproducers.md:
1 defect, 0 fixed, 2 an unreadable bundle or a wrong command line).

Before: ``repro_script`` wrote the case's node id and message into repro.py's docstring, so a
``\"\"\"`` in a configuration label ran as Python (a configs/Clip.json case renamed
``relu6\"\"\"+getattr(__import__("os"),"system")("touch /tmp/x")+\"\"\"`` ran the shell command), and a
backslash or NUL made it a SyntaxError; a truncated, empty or directory model.onnx exited 1
"DEFECT PRESENT: import" and a FIFO input hung it; ``--save-actual`` without a folder saved nothing."""
from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import tokenize
import types
from pathlib import Path

import numpy as np
import pytest

from interop.reporting import defect_issue_script
from interop.reproducers.bundle import write_factory_bundle
from interop.reproducers.layout import _write_layout
from interop.reproducers.run import FreshServer, verdict_of
from interop.reproducers.script import repro_script, script_literal

MARK_NAME = "INJECTED"


def _payloads(mark: Path) -> list[str]:
    """Hostile case text: each would run code or break the script if pasted into it."""
    touch = f'__import__("pathlib").Path({str(mark)!r}).touch()'
    return [
        f'relu6"""+{touch}+"""',
        f"relu6'''+{touch}+'''",
        f'"""\n{touch}\n"""',
        f"x\n{touch}\n# ",
        f"x\r{touch}\r",
        "C:\\Users\\x \\N \\N{BULLET} \\x \\u12 \\",
        "a\x00b",
        "line1\nline2\rline3\r\n",
        "\x1b]0;title\x07\x1b[31mred\x1b[0m\x07\x08\x7f",
        "\u2028\u2029\ufeff\u202e",
        "%(prog)s %d {} {0}",
        "x" * 100_000 + '"""' + touch,
    ]


def _plain_settings(value: str, field: str) -> dict:
    settings = {"CASE": "case", "WHAT": "what", "PHASE": "forward", "CALLS": 1, "RTOL": 1e-5, "ATOL": 1e-6,
                "FAITHFUL": False, "DATA_INPUTS": ["x"], "N_OUTPUTS": 1, "PARAMS": ["p"], "GRAD_OUTPUTS": [0]}
    settings[field] = [value] if isinstance(settings[field], list) else value
    return settings


def _factory_settings(value: str, field: str) -> dict:
    settings = {"CASE": "case", "WHAT": "what", "PHASE": "forward", "CALLS": 1, "RTOL": 1e-5, "ATOL": 1e-6,
                "OPERATION": "ReLUOp", "ATTRIBUTES_JSON": "{}", "INPUT_NAMES": ["x", None], "RANK": 4,
                "DIMS_FROM_DATA": False, "NEGATIVE": False, "N_OUTPUTS": 1}
    settings[field] = [value] if isinstance(settings[field], list) else value
    return settings


GENERATORS = [("plain", f, _plain_settings, False) for f in ("CASE", "WHAT", "PHASE", "DATA_INPUTS", "PARAMS")] + \
             [("factory", f, _factory_settings, True) for f in ("CASE", "WHAT", "OPERATION", "ATTRIBUTES_JSON",
                                                                 "INPUT_NAMES")]


def _docstring_and_comments(text: str) -> tuple[str | None, list[str]]:
    comments = [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    return ast.get_docstring(ast.parse(text)), comments


def _settings_of(text: str) -> dict:
    """The script's module-level literal assignments (ast.literal_eval: data, never code)."""
    from interop.reproducers.script import script_settings

    return script_settings(text)


def _exec_module(text: str, path: Path) -> dict:
    """The script executed as a module (not __main__): every line at module level runs, main does not."""
    namespace = {"__name__": "generated", "__file__": str(path)}
    exec(compile(text, str(path), "exec"), namespace)  # noqa: S102 - the point of the test
    return namespace


@pytest.mark.parametrize("kind, field, make, factory", GENERATORS, ids=[f"{g[0]}-{g[1]}" for g in GENERATORS])
def test_every_field_of_every_repro_script_is_data(tmp_path, capsys, kind, field, make, factory):
    mark = tmp_path / MARK_NAME
    neutral = repro_script(make("neutral", field), factory=factory)
    fixed_doc, fixed_comments = _docstring_and_comments(neutral)
    for k, payload in enumerate(_payloads(mark)):
        text = repro_script(make(payload, field), factory=factory)
        compile(text, "repro.py", "exec")  # before: SyntaxError on a backslash or NUL, code on a quote
        doc, comments = _docstring_and_comments(text)
        assert doc == fixed_doc and comments == fixed_comments, (k, "case text outside a literal")
        settings = _settings_of(text)
        assert settings[field] == make(payload, field)[field], k  # the case is stated: a literal, read back
        namespace = _exec_module(text, tmp_path / "repro.py")
        assert not mark.exists(), (k, "the script ran case text as code")
        if field in ("CASE", "WHAT"):  # --help prints the case, one line, control characters escaped
            assert namespace["main"](["--help"]) == 0
            out = capsys.readouterr().out
            assert namespace["_shown"](payload) in out
            assert not any(c in out for c in "\x00\x1b\x07\r\u2028"), k
            assert out[out.index("\ncase: ") + 1:].count("\n") == 2  # the case and what was seen: a line each
    assert not mark.exists()


def test_script_literal_round_trips_and_refuses_what_is_not_data():
    values = ["a\"\"\"b'''c\\N\x00\x1b\u2028", b"\x00\"\"\"", 1.5, -0.0, 3, True, None, [1, "x", None],
              ("t",), {"k": ["v"]}, np.float32(1e-5), np.int64(4), np.bool_(True)]
    for v in values:
        text = script_literal(v)
        assert ast.literal_eval(text) == (v.item() if isinstance(v, np.generic) else v), text
    for special in (float("nan"), float("inf"), -float("inf")):
        got = eval(script_literal(special), {"__builtins__": {"float": float}})  # noqa: S307
        assert (got != got) if special != special else got == special

    class Sneaky(str):
        def __repr__(self):
            return "__import__('os').system('true')"

    assert ast.literal_eval(script_literal(Sneaky("ok"))) == "ok"
    for bad in (object(), {1: "x"}, {"k": object()}, np.zeros(2)):
        with pytest.raises(TypeError):
            script_literal(bad)
    with pytest.raises(ValueError):
        repro_script({"CASE = 1\nimport os\nX": 1})


# --------------------------------------------------------------------------------------------------
# a real one-node bundle (Relu), written by the suite's own writer, run as its user runs it
def _relu_bundle(folder: Path, *, case: str = "t.py::test_relu", what: str = "forward: a failure",
                 wrong: bool = False) -> Path:
    import onnx
    from onnx import TensorProto, helper

    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    proto.ir_version = 8
    onnx.checker.check_model(proto)
    x = np.array([[-1.0, 0.5, 2.0], [3.0, -4.0, 0.0]], np.float32)
    y = np.maximum(x, 0) + (1.0 if wrong else 0.0)
    settings = {"CASE": case, "WHAT": what, "PHASE": "forward", "CALLS": 1, "RTOL": 1e-5, "ATOL": 1e-6,
                "FAITHFUL": False, "DATA_INPUTS": ["x"], "N_OUTPUTS": 1, "PARAMS": [], "GRAD_OUTPUTS": []}
    _write_layout(folder, proto, ["x"], [x], [y.astype(np.float32)], settings)
    return folder


def _run(folder: Path, *args: str, script: str = "repro.py", timeout: float = 60) -> subprocess.CompletedProcess:
    """``python repro.py ARGS`` as an Aidge developer runs it: isolated mode, torch and interop unimportable."""
    code = ("import runpy, sys\nsys.modules['torch'] = None\nsys.modules['interop'] = None\n"
            f"sys.argv = [{script!r}] + sys.argv[1:]\nrunpy.run_path({script!r}, run_name='__main__')\n")
    return subprocess.run([sys.executable, "-I", "-c", code, *args], cwd=folder, capture_output=True, text=True,
                          timeout=timeout, env={"PATH": os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1"})


def test_a_real_bundle_whose_case_and_message_are_hostile_runs_only_its_check(tmp_path):
    mark = tmp_path / MARK_NAME
    payload = f'relu6"""+getattr(__import__("os"),"system")("touch {mark}")+"""\\N\x00\x1b]0;t\x07'
    folder = _relu_bundle(tmp_path / "b", case=payload, what=payload)
    done = _run(folder)
    assert done.returncode == 0 and "FIXED" in done.stdout, done.stdout + done.stderr
    assert not mark.exists()
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\\x1b]0;t\\x07" in done.stdout
    assert verdict_of(done.returncode, done.stdout)["line"].startswith("FIXED")
    wrong = _run(_relu_bundle(tmp_path / "w", case=payload, what=payload, wrong=True))
    assert wrong.returncode == 1 and "DEFECT PRESENT: forward call 1" in wrong.stdout, wrong.stdout + wrong.stderr
    assert not mark.exists()


def test_a_factory_bundle_of_a_renamed_config_case_runs_only_its_check(tmp_path):
    """configs/*.json's label reaches write_factory_bundle as the case's node id and its message."""
    mark = tmp_path / MARK_NAME
    payload = f'test_aidge_configs.py::test[relu6"""+getattr(__import__("os"),"system")("touch {mark}")+"""]'
    x = np.array([[[[-1.0, 2.0]]]], np.float32)
    state = types.SimpleNamespace(
        factory={"operation": "ReLUOp", "attributes": {}, "arrays": [("x", x)], "rank": 4, "dims_from_data": False,
                 "negative": False, "expected": [np.maximum(x, 0) + 1]},
        directory=tmp_path / "f", case=payload, tolerance=None, log_path=None, log_set=False)
    meta = write_factory_bundle(state, RuntimeError(payload + "\\N\x00"))
    text = (tmp_path / "f" / "repro.py").read_text()
    compile(text, "repro.py", "exec")
    assert _settings_of(text)["CASE"] == payload
    assert meta["repro"]["exit"] == 1 and meta["reproduces"], meta["repro"]
    assert not mark.exists()


def test_standalone_script_holds_the_defect_s_id_and_title_as_data(tmp_path):
    mark = tmp_path / MARK_NAME
    folder = _relu_bundle(tmp_path / "b")
    neutral = defect_issue_script.standalone_script(folder, {"id": "D-1", "title": "t"})
    for k, payload in enumerate(_payloads(mark)):
        text = defect_issue_script.standalone_script(folder, {"id": payload, "title": payload})
        compile(text, "standalone.py", "exec")
        assert _docstring_and_comments(text) == _docstring_and_comments(neutral), k
        assert _settings_of(text)["TITLE"] == payload and _settings_of(text)["DEFECT_ID"] == payload
    (tmp_path / "standalone.py").write_text(text)
    done = _run(tmp_path, script="standalone.py")
    assert done.returncode == 0 and "FIXED" in done.stdout, done.stdout + done.stderr
    assert not mark.exists()


# --------------------------------------------------------------------------------------------------
# exit codes as documented: 2 for an unreadable bundle or a wrong command line
@pytest.mark.parametrize("how", ["truncated", "empty", "directory", "missing", "garbage"])
def test_an_unreadable_model_exits_2_not_defect_present(tmp_path, how):
    folder = _relu_bundle(tmp_path / "b")
    model = folder / "model.onnx"
    data = model.read_bytes()
    model.unlink()
    if how == "truncated":  # before: exit 1 "DEFECT PRESENT: import: aidge_onnx raised ..."
        model.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        model.write_bytes(b"")
    elif how == "directory":
        model.mkdir()
    elif how == "garbage":
        model.write_bytes(b"\xff" * 64)
    done = _run(folder)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot run the reproducer" in done.stdout and "DEFECT PRESENT" not in done.stdout, done.stdout
    assert verdict_of(done.returncode, done.stdout)["line"].startswith("cannot run")


def test_every_cut_of_the_model_exits_2(tmp_path):
    """Each prefix of model.onnx (every length) is refused as unreadable: none reaches Aidge's import."""
    folder = _relu_bundle(tmp_path / "b")
    data = (folder / "model.onnx").read_bytes()
    namespace = _exec_module((folder / "repro.py").read_text(), folder / "repro.py")
    assert namespace["_model"]().graph.node[0].op_type == "Relu"
    for n in range(len(data)):
        (folder / "model.onnx").write_bytes(data[:n])
        with pytest.raises(namespace["Unreadable"]):
            namespace["_model"]()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
@pytest.mark.parametrize("name", ["test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb", "model.onnx"])
def test_a_fifo_in_the_bundle_exits_2_without_hanging(tmp_path, name):
    folder = _relu_bundle(tmp_path / "b")
    (folder / name).unlink()
    os.mkfifo(folder / name)  # before: repro.py blocked in open() forever
    done = _run(folder, timeout=60)
    assert done.returncode == 2 and "not a regular file" in done.stdout, done.stdout + done.stderr


def test_a_truncated_tensor_exits_2(tmp_path):
    folder = _relu_bundle(tmp_path / "b")
    pb = folder / "test_data_set_0" / "input_0.pb"
    pb.write_bytes(pb.read_bytes()[:-3])
    done = _run(folder)
    assert done.returncode == 2 and "cannot run the reproducer" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("args", [("--save-actual",), ("--save-actual", ""), ("--no-such-option",)])
def test_a_wrong_command_line_is_an_argparse_error_exit_2(tmp_path, args):
    folder = _relu_bundle(tmp_path / "b")
    done = _run(folder, *args)  # before: --save-actual without a folder ran and silently saved nothing
    assert done.returncode == 2 and "usage: repro.py" in done.stderr, done.stdout + done.stderr
    assert "FIXED" not in done.stdout and "DEFECT PRESENT" not in done.stdout


def test_save_actual_with_a_folder_saves_and_help_states_the_case(tmp_path):
    folder = _relu_bundle(tmp_path / "b", case="t.py::test_relu[a\\N]", what="forward: x")
    done = _run(folder, "--save-actual", str(tmp_path / "own"))
    assert done.returncode == 0 and (tmp_path / "own" / "output_0.pb").is_file(), done.stdout + done.stderr
    helped = _run(folder, "--help")
    assert helped.returncode == 0 and "case: t.py::test_relu[a\\N]" in helped.stdout and "--save-actual DIR" in \
        helped.stdout, helped.stdout + helped.stderr


def test_run_repro_through_the_fork_server_keeps_the_exit_codes(tmp_path):
    """The suite's own runner (a fork server) sees the same 2 for an unreadable bundle."""
    folder = _relu_bundle(tmp_path / "b")
    (folder / "model.onnx").write_bytes(b"")
    server = FreshServer()
    try:
        got = server.run(folder, 60)
    finally:
        server.close()
    assert got is not None and got["exit"] == 2 and got["line"].startswith("cannot run"), got
