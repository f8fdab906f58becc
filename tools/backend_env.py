"""Benchmark one commit on another Aidge backend in asv's own environments (a script, not an
asv module), so that the asv site shows that backend beside ``cpu``.

    python tools/backend_env.py run export_cpp [--range HEAD^!] [ASV RUN ARGS]
    python tools/backend_env.py config export_cpp      # print the derived config
    nox -s bench-export-cpp [-- --bench REGEX]

``asv.conf.json``'s matrix sets ``INTEROP_BACKEND=cpu`` (asv's virtualenvs override the
shell's variable with it), and a second value there would double every ``asv run``. This
derives from ``asv.conf.json`` a configuration with ``INTEROP_BACKEND`` set to the backend and
the backend's own packages added to ``matrix.req`` (:data:`BACKEND_PACKAGES`: aidge-export-cpp
0.10.1 for ``export_cpp``; everything else, torch==2.13.0 included, unchanged), writes it next
to ``asv.conf.json`` for the duration of the run and runs ``asv --config
asv-<backend>.conf.json run HEAD^! ...``. The results land in the same ``results/asv`` under an
environment of their own (its name holds ``INTEROP_BACKEND-<backend>``), so ``asv publish``
draws one line per backend in every graph and lists the backend as an environment parameter.

The benchmark list is the same whichever backend discovered it (``benchmarks.json`` is
rewritten by every ``asv run``): on ``export_cpp`` the backward benchmarks exist with the same
cases and are skipped as not applicable, and the ``ExportBuild`` benchmarks (generation and
compile seconds) exist on ``cpu`` too, skipped there.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: tools/ is not a package on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tools.aidge_matrix import CONFIG, ROOT, run_derived  # noqa: E402

#: what asv installs on top of asv.conf.json's matrix.req, per backend (asv's spelling)
BACKEND_PACKAGES = {"export_cpp": {"aidge-export-cpp": ["==0.10.1"]}}


def backend_config(backend: str, config: Path = CONFIG) -> dict:
    from asv import util  # asv reads its config with // comments

    if backend not in BACKEND_PACKAGES:
        raise SystemExit(f"backend {backend!r}: no asv environment is defined for it here "
                         f"(choices: {', '.join(BACKEND_PACKAGES)}; cpu is asv.conf.json itself; cuda "
                         f"needs a GPU machine, docs/testing.md, nox -s tests-cuda)")
    conf = util.load_json(str(config), js_comments=True)
    matrix = dict(conf.get("matrix", {}))
    env_nobuild = dict(matrix.get("env_nobuild", {}))
    if "INTEROP_BACKEND" not in env_nobuild:
        raise SystemExit(f"{config}: matrix.env_nobuild has no INTEROP_BACKEND; nothing to replace")
    env_nobuild["INTEROP_BACKEND"] = [backend]
    matrix["env_nobuild"] = env_nobuild
    matrix["req"] = {**matrix.get("req", {}), **BACKEND_PACKAGES[backend]}
    conf["matrix"] = matrix
    return conf


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("run", "config"))
    parser.add_argument("backend", choices=sorted(BACKEND_PACKAGES))
    parser.add_argument("--range", default="HEAD^!", help="commits to benchmark (default: HEAD^!)")
    args, asv_args = parser.parse_known_args(argv)  # the rest goes to `asv run` (--bench ...)
    return run_derived(args.command, backend_config(args.backend), ROOT / f"asv-{args.backend}.conf.json",
                       args.range, asv_args, f"backend {args.backend}")


if __name__ == "__main__":
    sys.exit(main())
