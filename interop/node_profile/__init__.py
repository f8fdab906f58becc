"""Where Aidge spends a model's time, node by node, against onnxruntime on the same ONNX graph.

:func:`.forward.profile_onnx` takes an ONNX model and its inputs, :func:`.torch.profile_torch` a torch
model and its example inputs (exported through the bridge,
:func:`interop.bridge.onnx_export.export_to_onnx`, in eval mode). Each returns the profile as plain
data (JSON-ready):

- **Aidge's times** come from Aidge's own scheduling records. ``SequentialScheduler.
  get_forward_scheduling()`` returns the ``SchedulingElement`` s (``node``, ``start``, ``end``), but
  in aidge_core 0.10.1 ``start`` and ``end`` are ``std::chrono::time_point`` s that pybind11 cannot
  convert (``TypeError: Unable to convert function return value to a Python type``): the records are
  read from ``save_scheduling_diagram`` 's Mermaid file instead (written into a temporary folder,
  one per call), whose times are whole microseconds of the system clock since the call began. The
  records hold the last forward's nodes only; the Producers (constant inputs) are left out. As a
  cross-check on a loaded machine, each round also runs every scheduled node's operator
  ``forward()`` again, alone, in the scheduler's order, on the thread's CPU time (``aidge_cpu_s``):
  a node longer than a time slice (SegResNet's 20-40 ms Resize) is preempted in most rounds, and
  its wall-clock median then counts the waits (66 ms of records for 25 ms of CPU at load 6 on 2
  cores). The pass has a floor of its own, 20-80 us a node (BERT's 239 nodes: 7.4 ms alone for a
  2.0 ms call, 2026-12-03: ``Operator.forward()`` called from Python costs 20-40 us in steady
  state), so it only says something about nodes of a millisecond or more.
- **onnxruntime's times** are its profiler's ``Node`` events (``SessionOptions.enable_profiling``,
  ``<node name>_kernel_time``, microseconds) on a session with **no graph optimisation**
  (``ORT_DISABLE_ALL``): each ONNX node is then a kernel of its own, under its own name, and can be
  set beside the Aidge node(s) imported from it. A second session with the default optimisations
  (what a user of onnxruntime gets: fused Conv+Relu, NCHWc layouts) is timed too, unprofiled, for
  its total only.
- **Matching**: aidge_onnx renames every node (``/conv1/Conv`` becomes ``conv1_Conv``);
  :func:`interop.bridge.ort.aidge_node_indices` maps an Aidge name back to its ONNX node's
  index. An Aidge node whose name is not there is matched to the ONNX node whose Aidge name is
  the longest prefix of it (a node aidge_onnx splits); one matched to none is listed in
  ``unmatched_aidge`` and still counts in Aidge's total. An ONNX node Aidge does not run (Flatten,
  which the bridge removes; Identity; Constant) has an onnxruntime time and no Aidge time.
- **Threads**: one. Aidge's OpenMP teams are set to one thread (``omp_set_num_threads(1)`` on every
  loaded GNU OpenMP runtime: in a process that imported torch first, Aidge's kernels run on torch's,
  docs/openmp-threads.md), onnxruntime has ``intra_op_num_threads = inter_op_num_threads = 1``; both
  then compute in the calling thread.
- **Rounds**: after ``warmup`` calls of each, every round calls Aidge, onnxruntime unoptimised
  and unprofiled, onnxruntime optimised, and the profiled session once each, the order reversed
  every other round (a drift of the machine's load then falls on both sides alike). Each timed
  call follows an untimed call of the same session (the one timed right after Aidge's call paid
  for the switch: Perceptron's unoptimised onnxruntime took 170-260 us of thread CPU time after
  Aidge, 15-25 us after onnxruntime, 2026-12-03), and each side's records are the timed call's. A call's
  **total** is the calling thread's CPU time (``time.thread_time``), which a loaded machine does
  not inflate by the time the thread waits for a core; onnxruntime's totals are taken on the
  unprofiled sessions (its profiler adds 1-3 us a node: BERT's 239 nodes sum to 0.83 ms profiled,
  its unprofiled call takes 0.26 ms), Aidge's with its scheduling records, which it always keeps.
  The **per-node** times of both profilers are wall-clock intervals (neither records CPU time), so
  they are taken as the **median over the rounds**, which drops the rounds where a node was
  preempted; the spread (first and third quartiles over the rounds) is kept beside each.
- **Shares**: a node's share is its median over the sum of the medians of its side's nodes (the
  shares of one side sum to 1); an operator type's share is the sum of its nodes' shares, grouped
  by the ONNX ``op_type`` (the same key on both sides).

Nothing is printed and nothing written but the temporary files, removed on return. The CLI,
``python -m interop.node_profile --out DIR``, profiles the zoo's models (and the
architectures named with ``--architectures``), prints the tables and writes ``node_profile.json``
and ``node_profile.md`` into DIR (docs/node-profile.md).

The package's modules, by what each part does (a name is imported from the module that defines
it; this ``__init__`` imports nothing, so that importing ``interop.node_profile`` loads no torch):
:mod:`.records` (the settings, the readers of Aidge's scheduling diagram and of onnxruntime's
profile events, the helpers every measurement shares), :mod:`.forward` (the forward's rounds, the
matching of Aidge's nodes to the ONNX nodes, the assembled profile), :mod:`.torch` (a torch model
exported and profiled), :mod:`.backward` (Aidge's backward records against torch's backward),
:mod:`.slow` (the slow nodes and their ledger id), :mod:`.alone` (a slow node timed alone, its
timing reproducer), :mod:`.report` (the text tables and the Markdown), :mod:`.cli` (the command
line) and :mod:`.__main__` (its entry point).
"""
from __future__ import annotations
