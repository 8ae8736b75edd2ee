"""Process-wide tuning for a process whose job is replication (the standalone runner, a worker's pool process)."""

from __future__ import annotations

import gc

# The hot path allocates many short-lived containers (tuples, partials) and no reference cycles worth
# collecting often: the cyclic collector's gen-0 passes took 20-24 % of engine CPU in profiles (bench/README.md).
GEN0_THRESHOLD = 50_000


def tune_gc() -> None:
    """Move everything allocated so far out of the collector's view and make gen-0 collections rare."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, gen1, gen2)
