"""The defect registry (interop/registry): declared once as data, matched by Aidge's words, the
component decided from evidence; the ledger's identify() is the one answer."""
from __future__ import annotations

import json

import pytest

from interop import registry
from interop.registry import RegistryError, component_of
from interop.registry.identify import identify
from interop.reporting.ledger import proposed_entry

GATHER = "Aidge backward failed (operator Gather, node 'node_Gather_3'): backward() not implemented yet for operator of type Gather"


def _write(tmp_path, entries):
    path = tmp_path / "defects.json"
    path.write_text(json.dumps({"defects": entries}))
    return path


def _entry(**kw):
    base = {"id": "D-0123abcd", "title": "Gather has no backward", "component": "aidge_core", "evidence": "e",
            "operators": ["Gather"], "kind": "no backward", "phases": ["backward"], "backend": "cpu",
            "pattern": r"backward\(\) not implemented yet for operator of type \w+"}
    base.update(kw)
    return base


def test_a_failure_matches_its_entry_by_aidge_s_words(tmp_path):
    entries = registry.load(_write(tmp_path, [_entry()]))
    found = registry.match(kind="no backward", operator="Gather", phase="backward", backend="cpu", error=GATHER,
                           entries=entries)
    assert found is not None and found.id == "D-0123abcd"
    # another operator, another phase or other words: not this defect
    assert registry.match(kind="no backward", operator="Split", phase="backward", backend="cpu", error=GATHER,
                          entries=entries) is None
    assert registry.match(kind="no backward", operator="Gather", phase="forward", backend="cpu", error=GATHER,
                          entries=entries) is None
    assert registry.match(kind="no backward", operator="Gather", phase="backward", backend="cpu",
                          error="something else", entries=entries) is None


def test_variants_of_one_class_are_one_entry(tmp_path):
    entries = registry.load(_write(tmp_path, [_entry(operators=["Conv2D", "ConvDepthWise2D"], kind="error",
                                                     phases=["compile"], pattern="Wrong input size")]))
    for op in ("Conv2D", "ConvDepthWise2D"):
        assert registry.match(kind="error", operator=op, phase="compile", backend="cpu",
                              error="Wrong input size for x", entries=entries).id == "D-0123abcd"


@pytest.mark.parametrize("entries, words", [
    ([_entry(id="E-1")], "key 'id' must be D- and 8 hex digits"),
    ([_entry(colour="red")], "unknown key(s) ['colour']"),
    ([_entry(pattern="(")], "key 'pattern' is not a regular expression"),
    ([_entry(), _entry()], "id 'D-0123abcd' is already entry 0's"),
    ([_entry(operators="Gather")], "key 'operators' must be a list of strings"),
])
def test_a_bad_registry_names_the_file_the_entry_and_the_key(tmp_path, entries, words):
    path = _write(tmp_path, entries)
    with pytest.raises(RegistryError) as info:
        registry.load(path)
    assert str(path) in str(info.value) and words in str(info.value) and "entry" in str(info.value)


def test_the_shipped_registry_loads_and_its_ids_are_unique():
    entries = registry.load()
    names = [n for d in entries for n in (d.id, *d.aliases)]
    assert len(names) == len(set(names))
    for d in entries:
        assert d.component and d.evidence, d.id


def test_the_component_comes_from_the_library_holding_the_message():
    # measured 2026-12-06 (strings on the 0.10.1 libraries): this message is aidge_core's, though the
    # ledger used to file every missing backward against the CPU backend
    component, evidence = component_of("no backward", GATHER.split(": ", 1)[1])
    assert component == "aidge_core" and "aidge_core" in evidence
    # a missing kernel: the registrar's words are the core's, the kernel is the backend's to register
    component, _ = component_of("no kernel", 'missing or invalid registrar key: "[int64]" for registrable object')
    assert component == "aidge_backend_cpu"
    # no words: the library that runs the kernel
    assert component_of("wrong values", "", backend="cpu")[0] == "aidge_backend_cpu"
    assert component_of("wrong shape", "", backend="cpu")[0] == "aidge_core"  # forwardDims is the operator's
    assert component_of("no importer", "", onnx_op="GridSample")[0] == "aidge_onnx"


def test_the_suite_s_own_words_for_a_crash_are_no_library_s_message():
    """Before 2026-12-07 "crash: process killed by SIGSEGV during forward" was filed against
    aidge_export_cpp ("during forward" is in its templates) for 14 crashes of cpu kernels."""
    for message in ("crash: process killed by SIGSEGV during forward", "crash: timed out after 30 s during forward"):
        component, evidence = component_of("memory-unsafe", message, backend="cpu")
        assert component == "aidge_backend_cpu" and "no message of Aidge's" in evidence, evidence
    shipped = [d for d in registry.load() if d.kind == "memory-unsafe" and d.backend == "cpu"]
    assert shipped and all(d.component != "aidge_export_cpp" for d in shipped)


def test_an_unregistered_failure_gets_a_proposed_entry_with_evidence(tmp_path, monkeypatch):
    record = {"outcome": "failed", "category": "backward_not_implemented", "phase": "backward",
              "error": GATHER, "backend": "cpu", "nodeid": "tests/test_operators.py::x"}
    registered = identify(record)
    assert registered["registered"], registered  # the shipped registry holds Gather's missing backward
    empty = tmp_path / "empty" / "defects.json"
    empty.parent.mkdir()
    empty.write_text('{"defects": []}')
    monkeypatch.setattr(registry, "REGISTRY_PATH", empty)
    ident = identify(record)
    assert not ident["registered"] and ident["id"] == registered["id"]  # the signature proposes the same id
    assert ident["id"].startswith("D-") and ident["component"] == "aidge_core"
    entry = dict(ident, kind="no backward", operator="Gather", phase="backward", backend="cpu",
                 message="x", error=GATHER)
    proposed = proposed_entry(entry)
    # the proposal is a valid registry entry, and it matches the failure it was proposed for
    path = _write(tmp_path, [proposed])
    (d,) = registry.load(path)
    assert d.matches(kind="no backward", operator="Gather", phase="backward", backend="cpu", error=GATHER)
    assert not d.matches(kind="no backward", operator="Gather", phase="backward", backend="cpu", error="other words")



def test_every_defect_the_table_names_is_in_the_registry():
    from interop.cases import failure_table as ft

    held = {n for d in registry.load() for n in (d.id, *d.aliases)}
    missing = sorted({r.defect for r in ft.load_table() if r.defect} - held)
    assert not missing, f"table rows name defects the registry lacks (python -m interop.triage registry --write): {missing[:10]}"


def test_the_table_s_rows_and_the_ledger_name_one_entry_for_merged_variants():
    from interop.cases import failure_table as ft
    from interop.registry.identify import identify_row

    merged = [d for d in registry.load() if d.aliases]
    assert merged, "the shipped registry merges some variants"
    d = merged[0]
    rows = [r for r in ft.load_table() if r.defect in (d.id, *d.aliases)]
    assert {identify_row(r)["id"] for r in rows} == {d.id}


def test_verify_and_wrap_name_the_registry_s_id_and_title():
    """Issue 58 item 3: verify's verdict and wrap's error say the id and title ``check``, the records
    and the ledger give (before 2026-12-07 neither named a defect)."""
    import torch

    import interop
    from interop.errors import AidgeNotImplementedError

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.AdaptiveAvgPool2d(1)).eval()
    verdict = interop.verify(model, torch.randn(2, 3, 8, 8), isolate=False)
    gap = registry.by_id("D-5bd3fd2c")
    assert gap is not None and verdict.defect["id"] == gap.id and verdict.defect["title"] == gap.title
    assert f"[{gap.id}: {gap.title}]" in str(verdict)
    am = interop.wrap(model, example_inputs=[torch.randn(2, 3, 8, 8)])
    with pytest.raises(AidgeNotImplementedError) as info:
        am(torch.randn(2, 3, 8, 8, requires_grad=True)).sum().backward()
    assert info.value.defect["id"] == gap.id
    assert any(gap.id in note and gap.title in note for note in info.value.__notes__)
