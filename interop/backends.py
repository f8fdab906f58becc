"""The Aidge backends the suite knows, as names (no Aidge import): what ``--backend`` accepts and
which of them run inference only. The bridge (:mod:`interop.bridge.runtime`), the case database
and the reports read these names from here."""
from __future__ import annotations

__all__ = ["BACKENDS", "FORWARD_ONLY_BACKENDS"]

#: every backend a case can run on
BACKENDS = ("cpu", "cuda", "export_cpp")
#: backends that run inference only (Aidge's generated C++ has no backward, no training
#: mode): on them a case runs its forward in eval mode, and what it would train is *not
#: applicable* (never a failure)
FORWARD_ONLY_BACKENDS = ("export_cpp",)
