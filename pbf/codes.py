"""The codes of the compiled core and their labels, read from the one definition (``pbf/_codes.pxd``).

Every Python module takes codes from here; ``tests/test_codes.py`` ties each name to the compiled
value and each label table to its enum.
"""
from ._codes import (
    Clock,
    CoallocPolicy,
    Correction,
    ExitReason,
    How,
    JobState,
    OutageKind,
    PassKind,
    Predictor,
    Priority,
    RegressionWeight,
    RejectReason,
    Status,
    Trigger,
    time_dependent,
)

__all__ = ["Clock", "CoallocPolicy", "Correction", "ExitReason", "How", "JobState", "OutageKind", "PassKind",
           "Predictor", "Priority",
           "RegressionWeight", "RejectReason", "Status", "Trigger", "LABELS", "CLOCKS", "TRIGGERS",
           "CORRECTIONS", "OUTAGES", "COALLOC_POLICIES", "TIME_DEPENDENT", "label", "time_dependent"]

#: option names of the enums users choose from, in code order
CLOCKS = ("free", "model", "wall", "slurm-sim")
TRIGGERS = ("event", "interval")
OUTAGES = ("drain", "fail", "resume")
COALLOC_POLICIES = ("off", "fixed", "asax", "hedge", "exp3")
CORRECTIONS = ("incremental", "requested", "recursive-doubling")

#: the priorities whose keys depend on the time (a property of each code, from the compiled table)
TIME_DEPENDENT = frozenset(p for p in Priority if time_dependent(p))

#: the strings of the code columns of the outputs (jobs.csv, passes.csv), in code order
LABELS = {
    "state": ("new", "pending", "running", "completed", "rejected", "killed"),
    "how": ("", "main", "backfill", "co-allocated"),
    "reject_reason": ("", "larger than the cluster", "no requested time (estimate <= 0)", "asks for no units",
                      "wider than the units left up", "no set of nodes can hold it",
                      "asks licenses the cluster does not have", "over a QOS or association limit",
                      "its reservation ended before it started", "ended at its reservation's end (TIMEOUT)"),
    "kind": ("full", "quick"),
    "exit": ("end of queue", "max job test", "first job that does not fit", "time budget",
             "state changed at a yield", "reservation limit"),
}

#: each label table and option list with the enum whose codes index it
ENUM_OF = {"state": JobState, "outages": OutageKind, "coalloc": CoallocPolicy, "how": How,
           "reject_reason": RejectReason, "kind": PassKind,
           "exit": ExitReason, "clocks": Clock, "triggers": Trigger, "corrections": Correction}


def label(column: str, code: int) -> str:
    """The label of one code of an output column (``state``, ``how``, ``reject_reason``, ``kind``,
    ``exit``)."""
    return LABELS[column][int(code)]
