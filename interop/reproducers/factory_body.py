# ---- the run() of a reproducer for one Aidge node built from its aidge_core factory -------------
# Aidge's own benchmark configurations (``format: Aidge``) build one operator straight from its
# factory, no ONNX. The generated ``repro.py`` of such a case is: its settings (OPERATION,
# ATTRIBUTES_JSON, INPUT_NAMES, RANK, DIMS_FROM_DATA, NEGATIVE, ...), the helpers of
# ``body.py`` (loading, comparing), this run(), then body's main(). It is never
# imported by the suite: it is text, kept as a Python file so that it is linted and read like code.
# The steps are interop.bridge.single_node's (build_node, compile_node, run_node).
import json  # noqa: E402

_FORMATS = {2: "nc", 3: "ncw", 4: "nchw", 5: "ncdhw"}


def _refused(phase, exc):
    """An Aidge refusal: the defect itself, or, for a negative case (an input Aidge should refuse), the fix."""
    if NEGATIVE:  # noqa: F821
        return None
    return f"{phase}: {type(exc).__name__}: {exc}" if isinstance(exc, BaseException) else f"{phase}: {exc}"


def run():
    """The defect's line, or None when Aidge behaves as expected."""
    import aidge_core as core
    import aidge_backend_cpu  # noqa: F401  (registers the CPU kernels)

    core.Log.set_console_level(core.Level.Warn)  # Aidge's own words stay visible
    inputs = [None if name is None else _load(f"input_{k}.pb") for k, name in enumerate(INPUT_NAMES)]  # noqa: F821
    expected = [_load(f"output_{i}.pb") for i in range(N_OUTPUTS)]  # noqa: F821
    factory = getattr(core, OPERATION, None)  # noqa: F821
    if factory is None:
        return _refused("import", f"aidge_core has no operator factory {OPERATION!r}")  # noqa: F821
    try:
        op = factory(**json.loads(ATTRIBUTES_JSON))  # noqa: F821
        node = core.Node(op)
        graph = core.GraphView()
        graph.add(node)
        for idx, (target, target_idx) in enumerate(graph.get_ordered_inputs()):
            if idx >= len(inputs) or inputs[idx] is None:
                continue
            tensor = core.Tensor(_c_order(inputs[idx]))  # noqa: F821
            operator = target.get_operator()
            if operator.input_category(target_idx) in (core.InputCategory.OptionalParam, core.InputCategory.Param):
                producer = core.Producer(tensor, name=INPUT_NAMES[idx])  # noqa: F821
                producer.add_child(target, 0, target_idx)
                graph.add(producer)
            else:
                operator.associate_input(target_idx, tensor)
    except Exception as exc:  # noqa: BLE001
        return _refused("import", exc)
    try:
        if RANK in _FORMATS:  # noqa: F821
            graph.set_dataformat(getattr(core.dformat, _FORMATS[RANK]))  # noqa: F821
        graph.set_backend("cpu")
        ok = graph.forward_dims(allow_data_dependency=True)
        graph.forward_dtype()
    except Exception as exc:  # noqa: BLE001
        return _refused("compile", exc)
    if ok is False and not DIMS_FROM_DATA:  # noqa: F821
        return _refused("compile", "forward_dims() returned False: Aidge cannot compute the output dims")
    try:
        core.SequentialScheduler(graph).forward()
        outputs = [np.array(op.get_output(i), copy=True) for i in range(op.nb_outputs())]  # noqa: F821
    except Exception as exc:  # noqa: BLE001
        return _refused("forward", exc)
    if NEGATIVE:  # noqa: F821
        shapes = ", ".join(f"{list(o.shape)} {o.dtype}" for o in outputs)
        return f"forward: Aidge ran {OPERATION} to the end on an input it should refuse (outputs {shapes})"  # noqa: F821
    if len(outputs) < len(expected):
        return f"forward: Aidge gives {len(outputs)} output(s), {len(expected)} expected"
    for k, want in enumerate(expected):
        _save(f"output_{k}.pb", outputs[k])  # noqa: F821
        line = _compare(f"forward, output {k} of {OPERATION}", outputs[k], want)  # noqa: F821
        if line and not SAVE_ACTUAL:  # noqa: F821
            return line
    return None
