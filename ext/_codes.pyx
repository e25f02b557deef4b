"""The codes of the compiled core as Python IntEnums (declared in ``pbf/_codes.pxd``, the single
definition; :mod:`pbf.codes` adds the labels the outputs use)."""


def time_dependent(int prio):
    """Whether a priority code's key depends on the time (recomputed before passes, no resumed pass):
    the compiled ``prio_time_dependent``, the one definition."""
    return prio_time_dependent(prio)
