"""The Aidge-release matrix: benchmark one commit against several Aidge releases (a script,
not an asv module).

    python tools/aidge_matrix.py run [--range HEAD^!] [ASV RUN ARGS, e.g. --bench REGEX]
    python tools/aidge_matrix.py config                # print the derived config
    nox -s bench-matrix [-- --bench REGEX]

Derives from ``asv.conf.json`` a configuration with the four Aidge CPU packages
(aidge-core, aidge-backend-cpu, aidge-onnx, aidge-learning) taken out of ``matrix.req`` and
one asv environment per release of :data:`RELEASES` instead (same torch==2.13.0 and
everything else), writes it next to ``asv.conf.json`` for the duration of the run (asv
resolves every path from the directory of its config file) and runs
``asv --config asv-aidge-releases.conf.json run HEAD^! ...``. The
results land in the same ``results/asv`` (the environment of the release that
``asv.conf.json`` pins has the same name in both, so its history is shared), and
``asv publish`` shows the releases side by side: every graph has one line per release.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "asv.conf.json"
OUT = ROOT / "asv-aidge-releases.conf.json"  # removed after the run

#: Aidge releases of the matrix (each published for all four CPU packages, cp311 wheels).
#: 0.9.1.post2 runs through the compatibility shim of interop/bridge/runtime.py (no
#: ``Tensor.from_data_ptr`` before 0.10: inputs are copied instead of shared).
RELEASES = tuple(json.loads((ROOT / "interop" / "aidge_releases.json").read_text(encoding="utf-8"))["releases"])
AIDGE_PACKAGES = ("aidge-core", "aidge-backend-cpu", "aidge-onnx", "aidge-learning")


def asv_version_spec(version: str) -> str:
    """``==0.10.0post3`` for 0.10.0.post3: asv parses ``==0.10.0.post3`` as ``==0.10.0``;
    the PEP 440 spelling without the dot is the same version to pip."""
    return "==" + version.replace(".post", "post")


def release_config(releases=RELEASES, config: Path = CONFIG) -> dict:
    from asv import util  # asv reads its config with // comments

    conf = util.load_json(str(config), js_comments=True)
    matrix = dict(conf.get("matrix", {}))
    req = {k: v for k, v in matrix.get("req", {}).items() if k not in AIDGE_PACKAGES}
    missing = [p for p in AIDGE_PACKAGES if p not in matrix.get("req", {})]
    if missing:
        raise SystemExit(f"{config}: matrix.req has no {missing}; nothing to replace")
    single = {k: v[0] for k, v in req.items()}
    env_nobuild = {k: v[0] for k, v in matrix.get("env_nobuild", {}).items()}
    matrix["req"] = req
    conf["matrix"] = matrix
    conf["include"] = [
        {"python": conf["pythons"][0], "req": {**single, **{p: asv_version_spec(v) for p in AIDGE_PACKAGES}},
         "env_nobuild": env_nobuild}
        for v in releases
    ]
    # the product of matrix.req alone would be an environment without Aidge: drop it
    conf["exclude"] = [{"req": {"aidge-core": None}}]
    return conf


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("run", "config"))
    parser.add_argument("--releases", nargs="+", default=list(RELEASES), metavar="VERSION")
    parser.add_argument("--range", default="HEAD^!", help="commits to benchmark (default: HEAD^!)")
    args, asv_args = parser.parse_known_args(argv)  # the rest goes to `asv run` (--bench ...)
    return run_derived(args.command, release_config(args.releases), OUT, args.range, asv_args,
                       f"Aidge releases {', '.join(args.releases)}")


def run_derived(command: str, conf: dict, out: Path, commits: str, asv_args: list[str], title: str) -> int:
    """``command`` ``config``: print the derived configuration ``conf``. ``run``: write it to
    ``out`` (next to asv.conf.json: asv resolves every path from its config's directory), run
    ``asv --config out run commits ...`` and remove it again."""
    text = json.dumps(conf, indent=2) + "\n"
    if command == "config":
        print(text, end="")
        return 0
    asv_args = [a for a in asv_args if a != "--"]
    cmd = [sys.executable, "-m", "asv", "--config", out.name, "run", commits, *asv_args]
    print(f"{title}\n+ {' '.join(cmd)}", flush=True)
    out.write_text(text)
    try:
        return subprocess.call(cmd, cwd=ROOT)
    finally:
        out.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
