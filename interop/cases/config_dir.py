"""Where the JSON operator configurations live (``$INTEROP_CONFIG_DIR``, else the checkout's
``configs/``, else the copy inside the wheel), and why that folder cannot be read. Imports no
other module of the case database: the catalog and the expected-failure guard both read it."""
from __future__ import annotations

import os
from pathlib import Path

from ..env import VARIABLES
from ..env import read

__all__ = ["CONFIG_DIR", "config_folder_problem"]


#: where the JSON operator configurations live (``$INTEROP_CONFIG_DIR`` overrides)
def _config_dir() -> Path:
    """$INTEROP_CONFIG_DIR, else the checkout's configs/, else the copy inside the wheel."""
    if (chosen := read("INTEROP_CONFIG_DIR")) is not None:
        return chosen
    package = Path(__file__).resolve().parents[1]  # interop/
    checkout = package.parent / "configs"
    if checkout.is_dir():
        return checkout
    return package / "configs"  # package interop.configs (see pyproject.toml)


CONFIG_DIR = _config_dir()


def config_folder_problem() -> str | None:
    """Why the operator configuration folder cannot be read (missing, not a folder), naming it
    and where it came from; None when it can."""
    where = "INTEROP_CONFIG_DIR" if VARIABLES["INTEROP_CONFIG_DIR"].raw() else "the checkout's configs/"
    if CONFIG_DIR.is_dir():
        return None
    what = "not a folder" if os.path.lexists(CONFIG_DIR) else "no such folder"
    return f"{CONFIG_DIR}: the operator configuration folder ({where}): {what}"
