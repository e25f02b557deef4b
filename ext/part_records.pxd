# Jobs of several partitions (header only), as Slurm 22.05 schedules them: a job submitted to
# partitions a,b is a queue record per partition (build_job_queue in src/slurmctld/job_scheduler.c);
# each record is tested on its own partition's nodes only (select_nodes with job_ptr->part_ptr set
# to the record's), and the job runs inside one partition. Here the records of a job are tested one
# after the other at the job's place in the queue, in its partitions' order (PriorityTier first, as
# priority_sort_part_tier orders them): a record is the job's own features with its partition's
# feature (a feature set on that partition's nodes), swapped into NodeModel.jfeat for its test, so
# every node search, cache and oracle works as for a job of one partition.

from libc.stdint cimport uint64_t, int64_t, int32_t
from libc.stdlib cimport malloc, free

from pbf._codes cimport RC_OK, RC_NO_MEMORY


ctypedef struct PartRecords:
    int64_t cap                # jobs 0 .. cap - 1 have an entry in n and at
    int32_t* n                 # per job: its records (0 or 1: tested as it is)
    int64_t* at                # per job: its first record
    uint64_t* mask             # each record: the job's features with its partition's ...
    uint64_t* part             # ... and that partition's bit (NodeModel.jpart / npart)
    int64_t nrec


cdef inline void pr_free(PartRecords* R) noexcept nogil:
    free(R.n); free(R.at); free(R.mask); free(R.part)
    R.n = NULL
    R.at = NULL
    R.mask = NULL
    R.part = NULL
    R.cap = 0
    R.nrec = 0


cdef inline int pr_alloc(PartRecords* R, int64_t jobs, int64_t records) noexcept nogil:
    cdef int64_t i
    pr_free(R)
    R.n = <int32_t*>malloc((jobs + 1) * sizeof(int32_t))
    R.at = <int64_t*>malloc((jobs + 1) * sizeof(int64_t))
    R.mask = <uint64_t*>malloc((records + 1) * sizeof(uint64_t))
    R.part = <uint64_t*>malloc((records + 1) * sizeof(uint64_t))
    if R.n == NULL or R.at == NULL or R.mask == NULL or R.part == NULL:
        pr_free(R)
        return RC_NO_MEMORY
    for i in range(jobs):
        R.n[i] = 0
        R.at[i] = 0
    R.cap = jobs
    R.nrec = records
    return RC_OK


cdef inline int32_t pr_count(const PartRecords* R, int64_t j) noexcept nogil:
    # job j's records (more than one: it is tested once a partition)
    return R.n[j] if j < R.cap else 0
