"""How the embedded engine runs a check: one explicit, frozen value (`kreassign check`'s engine flags).

`checker/cli/check.py` builds it once from the parsed arguments and passes it down as a
parameter — `check_model` / `explore_classified` (checker/check/run.py), then the packed
engine (`packed_explorer`, `PackedReassignment`: workers, kernel, subsumption) and
compositional mode (`compositional_explorer`). No environment variable carries these
switches; the default value is the default run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class EngineOptions:
    fast: bool = True  # the packed path where the model splits per partition (`--no-fast`: the object engine)
    kernel: bool = True  # the kraft kernels answer where they were compared (`--no-kernel`: the reference alone)
    workers: int | None = None  # processes tabulating the reference's answers (`--workers N`; None: every core)
    subsume: bool = False  # budget subsumption, safety only (`--subsume`)
    compositional: bool = False  # each partition checked apart (`--compositional`)

    def worker_count(self) -> int:
        """The processes the packed engine tabulates in: `workers`, else one per core."""
        return max(1, self.workers) if self.workers is not None else (os.cpu_count() or 1)


#: the default run (what `kreassign check` without an engine flag explores with)
DEFAULT_ENGINE = EngineOptions()


__all__ = ["DEFAULT_ENGINE", "EngineOptions"]
