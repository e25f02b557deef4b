"""What the command line sets before anything else is imported: the process's start (a replay's
``wall_s.process`` counts from it) and numpy's thread limits."""
import os
import time

__all__ = ["STARTED"]

#: ``time.perf_counter()`` when the command line was first imported
STARTED = time.perf_counter()

# pbf does no linear algebra; numpy's OpenBLAS would start a thread per core at import (about 70 ms
# here). The command line limits it unless the user asked otherwise; the library leaves it alone.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
