"""repro_check's counts over a whole run (issue 42: "reproducers written, reproducing, and reduced
to 1, 2-3 and more nodes"), read from the bundles' meta.json."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from interop.reproducers import check as repro_check


def _bundle(run: Path, name: str, meta: dict) -> None:
    folder = run / "reproducers" / name
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps(meta))


def test_counts_take_the_reduced_graph_when_one_was_kept(tmp_path):
    _bundle(tmp_path, "a", {"reproduces": True, "nodes": 40, "reduced": {"kept": True, "nodes": 1}})
    _bundle(tmp_path, "b", {"reproduces": True, "nodes": 3, "reduced": {"kept": False, "why": "x"}})
    _bundle(tmp_path, "c", {"reproduces": True, "nodes": 12, "reduced": {"kept": True, "nodes": 4}})
    _bundle(tmp_path, "d", {"reproduces": True, "nodes": 1, "reduced": {"kept": False, "nodes": 1}})
    _bundle(tmp_path, "e", {"reproduces": False, "nodes": 2, "repro": {"exit": 0, "line": "FIXED: ..."},
                            "reduced": {"kept": False, "why": "the full graph does not reproduce: nothing to reduce"}})
    _bundle(tmp_path, "f", {"reproduces": True, "reduced": {}})  # no ONNX graph (an Aidge factory node)
    (tmp_path / "reproducers" / "g").mkdir()  # a folder without meta.json is no bundle
    counts = repro_check.run_counts(tmp_path)
    assert {k: v for k, v in counts.items() if k != "not_reproducing"} == {
        "written": 6, "reproducing": 5, "nodes_1": 2, "nodes_2_3": 1, "nodes_4_plus": 1, "nodes_unknown": 1}
    (item,) = counts["not_reproducing"]
    assert item["bundle"] == "e" and item["line"].startswith("FIXED") and "does not reproduce" in item["why"]


def test_all_checks_every_bundle_and_writes_the_counts(tmp_path, monkeypatch, capsys):
    _bundle(tmp_path, "a", {"reproduces": True, "nodes": 1, "reduced": {}})
    (tmp_path / "reproducers" / "a" / "repro.py").write_text("print('DEFECT PRESENT: forward call 1, x')\n"
                                                            "raise SystemExit(1)\n")
    _bundle(tmp_path, "b", {"reproduces": True, "nodes": 1, "reduced": {}})
    (tmp_path / "reproducers" / "b" / "repro.py").write_text("print('DEFECT PRESENT: import: x')\n"
                                                            "raise SystemExit(1)\n")
    monkeypatch.setattr(repro_check, "make_venv", lambda venv: Path(sys.executable))
    out = tmp_path / "check.json"
    code = repro_check.main([str(tmp_path), "--all", "--venv", str(tmp_path / "v"), "--json", str(out)])
    body = json.loads(out.read_text())
    assert len(body["checked"]) == 2 and body["counts"]["written"] == 2
    # bundle a fails on its first call; its "--save-actual" writes nothing, so it still exits 1: not ok
    assert [r["ok"] for r in sorted(body["checked"], key=lambda r: r["bundle"])] == [False, True]
    assert code == 1 and body["bad"] == 1
    assert "2 bundle(s) written, 2 reproduce" in capsys.readouterr().out


def test_the_fork_server_gives_the_same_verdicts_and_passes_the_script_its_arguments(tmp_path, monkeypatch):
    _bundle(tmp_path, "a", {"reproduces": True, "nodes": 1, "reduced": {}})
    # exits 1 on the stored values; with --save-actual DIR it writes nothing (a script that ignores its
    # arguments would be caught: the self-check below would not see "saved")
    (tmp_path / "reproducers" / "a" / "repro.py").write_text(
        "import sys\n"
        "if '--save-actual' in sys.argv:\n"
        "    print('saved', sys.argv[sys.argv.index('--save-actual') + 1]); raise SystemExit(0)\n"
        "print('DEFECT PRESENT: forward call 1, x'); raise SystemExit(1)\n")
    monkeypatch.setattr(repro_check, "make_venv", lambda venv: Path(sys.executable))
    runs = []
    real = repro_check._run

    def spy(python, folder, *extra):
        got = real(python, folder, *extra)
        runs.append((extra[:1], got))
        return got

    monkeypatch.setattr(repro_check, "_run", spy)
    for flags in ([], ["--fork-server"]):
        out = tmp_path / f"check{len(flags)}.json"
        repro_check.main([str(tmp_path), "--all", "--venv", str(tmp_path / "v"), "--json", str(out), *flags])
    plain, forked = runs[:3], runs[3:]
    def same(rs):  # the temporary folder's name aside
        return [(extra, code, line.split(" /")[0]) for extra, (code, line) in rs]

    assert same(plain) == same(forked)  # the same exits and lines: run, --save-actual run, run again
    assert [r[1][0] for r in forked] == [1, 0, 1]
    assert forked[1][0] == ("--save-actual",) and forked[1][1][1].startswith("saved")
    assert repro_check._SERVER is None  # closed after the run


def test_a_bundle_killed_at_its_time_out_says_so_through_the_fork_server(tmp_path):
    from interop.reproducers.run import FreshServer

    (tmp_path / "repro.py").write_text("import time\ntime.sleep(30)\n")
    server = FreshServer(sys.executable)
    try:
        got = server.run(tmp_path, 1.0)
    finally:
        server.close()
    assert got == {"exit": None, "line": "timed out after 1 s"}
