"""The per-node profile's entry point: ``python -m interop.node_profile --out DIR`` profiles the
zoo's models (and the architectures named with ``--architectures``), prints the tables and writes
``node_profile.json`` and ``node_profile.md`` into DIR (docs/node-profile.md); ``--run-dir RUN``
writes them into a findings run instead, with the slow nodes' timing reproducers. What each figure
is: :mod:`interop.node_profile`'s docstring; the command line: :mod:`.cli`.
"""
from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
