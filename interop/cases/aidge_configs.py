"""Aidge's benchmark configurations as cases of the suite: every leaf of every file
(:mod:`interop.cases.aidge_benchmark` reads them) becomes a :class:`~interop.cases.case.Case`
of kind ``aidge_config`` with id ``aidge.<file>_<label path>`` (``aidge.conv2d_shape_N_4``),
source ``aidge-benchmark/<file>.json`` (or the file's path outside the installed package),
and, for an operation or case without a torch
reference (:mod:`interop.cases.aidge_operations`), a skip that says why.

Size policy (the equivalence tests; the configs are benchmarks, some inputs hold 10^7-10^8
elements): a case whose random inputs hold more than :data:`ELEMENT_BUDGET` elements in
all runs with the batch (first dimension of the operation's batch inputs) reduced to the
largest size within the budget, and its id says so (``..._N_128_batch4``); a case still
above :data:`HARD_LIMIT_FACTOR` times the budget at batch 1 runs only at full size. ``INTEROP_AIDGE_FULL_SIZE=1``
(``nox -s aidge-configs-full``) runs every case as given; ``INTEROP_AIDGE_ELEMENT_BUDGET``
moves the budget. Inputs given as data literals are never changed.

Imports neither torch nor Aidge.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Iterable

from .aidge_benchmark import BenchmarkFile, InputSpec, installed_config_dir, label_id, \
    read_benchmark_file
from ..env import read as read_env
from .aidge_operations import operation_entry, unmapped_reason
from .case import Case, on_backend
from .config_error import ConfigError

__all__ = ["ELEMENT_BUDGET", "HARD_LIMIT_FACTOR", "FULL_SIZE", "KIND", "benchmark_cases", "file_cases", "config_files",
           "sized_specs", "CONFIGS_ENV", "config_root"]

KIND = "aidge_config"
#: the directory ``--aidge-configs`` / this variable points at (default: the installed package's)
CONFIGS_ENV = "INTEROP_AIDGE_CONFIGS"
FULL_SIZE = read_env("INTEROP_AIDGE_FULL_SIZE")
#: the most input elements (all inputs of a case together) the default run feeds a case
ELEMENT_BUDGET = int(read_env("INTEROP_AIDGE_ELEMENT_BUDGET"))
#: a case still above HARD_LIMIT_FACTOR x the budget at batch 1 runs only at full size (seconds per case)
HARD_LIMIT_FACTOR = 8


def _elements(specs: Iterable[InputSpec]) -> int:
    total = 0
    for s in specs:
        if s.shape is not None:
            n = 1
            for d in s.shape:
                n *= d
            total += n
    return total


def sized_specs(specs: tuple[InputSpec, ...], batch_inputs: tuple[int, ...], budget: int | None
                ) -> tuple[tuple[InputSpec, ...], int | None, str | None]:
    """``(specs, reduced batch or None, reason to run at full size only or None)`` under
    the size policy (``budget`` None: full size)."""
    total = _elements(specs)
    if budget is None or total <= budget:
        return specs, None, None
    batched = [i for i in batch_inputs if i < len(specs) and specs[i].data is None and specs[i].shape]
    if not batched:
        return specs, None, (f"{total:,} input elements, above the default run's budget of {budget:,}, and no "
                             "random batch input to reduce: runs at full size only (INTEROP_AIDGE_FULL_SIZE=1)")
    rank = len(specs[batched[0]].shape)
    batched = [i for i in batched if len(specs[i].shape) == rank]  # a lower-rank input broadcasts, no batch
    batch = specs[batched[0]].shape[0]
    batched = [i for i in batched if specs[i].shape[0] == batch]
    per_item = sum(_elements([specs[i]]) // max(specs[i].shape[0], 1) for i in batched)
    fixed = total - sum(_elements([specs[i]]) for i in batched)
    n = max(1, min(batch, (budget - fixed) // max(per_item, 1)))
    limit = HARD_LIMIT_FACTOR * budget
    if n >= batch:  # already at batch 1 (or the batch cannot shrink): the hard limit still applies
        if total > limit:
            return specs, None, (f"{total:,} input elements at batch {batch}, above the default run's limit of "
                                 f"{limit:,}: runs at full size only (INTEROP_AIDGE_FULL_SIZE=1)")
        return specs, None, None
    out = list(specs)
    for i in batched:
        out[i] = dataclasses.replace(specs[i], shape=(n,) + specs[i].shape[1:])
    if _elements(out) > limit:
        return specs, None, (f"{_elements(out):,} input elements even at batch {n}, above the default run's limit "
                             f"of {limit:,}: runs at full size only (INTEROP_AIDGE_FULL_SIZE=1)")
    return tuple(out), n, None


def _source(path: Path) -> str:
    try:
        if path.parent.resolve() == installed_config_dir().resolve():
            return f"aidge-benchmark/{path.name}"
    except ConfigError:
        pass
    return str(path)


def file_cases(bfile: BenchmarkFile, *, backend: str = "cpu", full_size: bool | None = None) -> list[Case]:
    """The cases of one file, in file order (the table's row: the pytest plugin, at collection)."""
    full = FULL_SIZE if full_size is None else full_size
    entry = operation_entry(bfile.operation)
    operator, source = f"aidge.{bfile.stem}", _source(bfile.path)
    seen: dict[str, int] = {}
    out = []
    for bcase in bfile.cases:
        label = label_id(bcase.labels)
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:  # two label paths that normalise alike: keep both, numbered
            label = f"{label}_{seen[label]}"
        specs, batch, full_only = sized_specs(bcase.specs, entry.batch_inputs, None if full else ELEMENT_BUDGET)
        label_run = f"{label}_batch{batch}" if batch is not None else label
        no_reference = unmapped_reason(bfile.operation, bcase.attributes)
        # a negative case needs Aidge's rejection only: it runs unless the operation itself is unmapped
        skip = unmapped_reason(bfile.operation, None) if bcase.negative else no_reference
        if skip is None and bfile.format.lower() != "aidge":
            skip = f"{bfile.operation}: format {bfile.format!r}: this suite builds Aidge-format configurations only"
        if skip is None and full_only:
            skip = full_only
        if skip is None and not bcase.negative and all(s.omitted for s in bcase.specs):
            skip = (f"{bfile.operation}: the configuration gives this case no input at all (neither the case nor "
                    "base_configuration has an input_specs entry): an incomplete case of the file, nothing to run")
        case = Case(
            id=f"{operator}_{label_run}", op_class=None, operator=operator, path=label_run, source=source,
            kind=KIND, test_backward=False, training=False, backend=backend, skip_reason=skip,
            input_size=[s.shape for s in specs if not s.omitted],
            params={"operation": bfile.operation, "format": bfile.format, "file": str(bfile.path),
                    "labels": bcase.labels, "attributes": dict(bcase.attributes), "specs": specs,
                    "negative": bcase.negative, "full_shapes": [s.shape for s in bcase.specs],
                    "reduced_batch": batch, "metadata": dict(bfile.metadata),
                    "no_reference": no_reference})
        out.append(on_backend(case))
    return out


def _config_target(directory: str | os.PathLike | None) -> Path:
    """``directory``, else $INTEROP_AIDGE_CONFIGS, else the installed package's ``operations_config``."""
    directory = directory or read_env(CONFIGS_ENV)
    return Path(directory) if directory else installed_config_dir()


def config_files(directory: str | os.PathLike | None = None) -> list[Path]:
    """The ``*.json`` files of ``directory`` ($INTEROP_AIDGE_CONFIGS, else the installed
    package's ``operations_config``), by name; one file may be given too."""
    folder = _config_target(directory)
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        raise ConfigError("no such directory of Aidge benchmark configurations", file=folder)
    return sorted(folder.glob("*.json"))


def config_root(directory: str | os.PathLike | None = None) -> Path | None:
    """The directory :func:`config_files` lists (its files' symbolic links must stay inside
    it), or None when ``directory`` names one file."""
    folder = _config_target(directory)
    return None if folder.is_file() else folder


def benchmark_cases(directory: str | os.PathLike | None = None, *, backend: str = "cpu",
                    full_size: bool | None = None) -> list[Case]:
    """Every case of every file of ``directory`` (see :func:`config_files`); a file that
    cannot be read raises its ConfigError."""
    out: list[Case] = []
    root = config_root(directory)
    for path in config_files(directory):
        out.extend(file_cases(read_benchmark_file(path, within=root), backend=backend, full_size=full_size))
    return out

