# The compiled core's facade, declared for the modules of its concerns (ext/_nodes.pyx,
# ext/_outages.pyx, ext/_estimates.pyx, ext/_coalloc.pyx, ext/_checkpoint.pyx), which cimport it:
# each takes a Core and works on its one State struct. This file sits in the package, not in
# ext/, because a cdef class is found by the module name it is imported from (pbf._core).

from libc.stdint cimport int64_t

from state cimport State


cdef class Core:
    cdef State s
    cdef object _threads
    cdef void use_planner(self)                            # State.plan for the cluster as now set


cdef object int64_array(const int64_t* src, int64_t n)     # a numpy copy of n int64 values
cdef raise_status(int rc, str where)                       # raise a failure code (Status), with the GIL
cdef double ns_per_tick()                                  # the CPU tick's length (measured once)
