# Jobs of several partitions (header only), as Slurm 22.05 schedules them: a job submitted to
# partitions a,b is a queue record per partition (build_job_queue in src/slurmctld/job_scheduler.c);
# each record is tested on its own partition's nodes only (select_nodes with job_ptr->part_ptr set
# to the record's), and the job runs inside one partition. A record is the job's own features with
# its partition's feature (a feature set on that partition's nodes), swapped into NodeModel.jfeat for
# its test, so every node search, cache and oracle works as for a job of one partition.
#
# Where the job's records are all of one PriorityTier they are tested one after the other at the
# job's place in the queue, in the partitions' order (PriorityTier first, as priority_sort_part_tier
# orders them): Slurm's records of one job and one tier sort next to each other. Where their tiers
# differ the job is *split*: it has a queue entry per tier (PendEntry.rec, queue.pxd), each at its
# tier's place (sort_job_queue2 sorts records by their partition's tier first), testing the records of
# that tier; an entry whose job has started (through another entry) is passed over without a test
# (_attempt_backfill's and _schedule's "started in other partition") and leaves the queue at the
# pass's end (queue_compact).
#
# Under multifactor priority Slurm gives each record its own partition's priority (priority_array,
# made by _get_priority_internal in priority_multifactor.c with the job's other factors and that
# partition's PriorityJobFactor; build_job_queue queues each record with it, and sort_job_queue2
# orders records of one tier by it). Where a job's records differ in that factor (R.pf) the job is
# split too: a queue entry per run of records of one tier and one factor, each entry at its own key
# (R.rkey, set with the job's key by lifecycle.pxd's set_record_keys; queue.pxd's entry_key).

from libc.stdint cimport uint64_t, int64_t, int32_t, int8_t
from libc.stdlib cimport malloc, free

from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef enum:
    SPLIT_TIER = 1             # PartRecords.split: the job's records differ in PriorityTier ...
    SPLIT_FACTOR = 2           # ... in the partition factor (their priorities differ)


ctypedef struct PartRecords:
    int64_t cap                # jobs 0 .. cap - 1 have an entry in n and at
    int32_t* n                 # per job: its records (0 or 1: tested as it is)
    int64_t* at                # per job: its first record
    uint64_t* mask             # each record: the job's features with its partition's ...
    uint64_t* part             # ... and that partition's bit (NodeModel.jpart / npart)
    int32_t* tier              # each record: its partition's PriorityTier (NULL: records of one tier)
    double* pf                 # each record: its partition's multifactor factor (NULL: one a job)
    double* rkey               # each record of a job split by factor: its priority key (pf set)
    int8_t* split              # per job: it has a queue entry per tier (SPLIT_TIER) or per tier and
                               # factor (| SPLIT_FACTOR) (NULL: no job is split)
    int64_t* seen              # per split job: the last plan_starts that met an entry of it ...
    int64_t* first_entry       # ... and where its first entry was then (estimates.pxd)
    int64_t* resv_in           # per split job: the pass (its number) in which an entry of it reserved
    int64_t epoch              # ... counted here
    int64_t nrec
    int64_t nsplit             # jobs split


cdef inline void pr_free(PartRecords* R) noexcept nogil:
    free(R.n); free(R.at); free(R.mask); free(R.part); free(R.tier); free(R.pf); free(R.rkey); free(R.split); free(R.seen); free(R.first_entry); free(R.resv_in)
    R.n = NULL
    R.at = NULL
    R.mask = NULL
    R.part = NULL
    R.tier = NULL
    R.pf = NULL
    R.rkey = NULL
    R.split = NULL
    R.seen = NULL
    R.first_entry = NULL
    R.resv_in = NULL
    R.cap = 0
    R.nrec = 0
    R.nsplit = 0
    R.epoch = 0


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


cdef inline bint pr_split(const PartRecords* R, int64_t j) noexcept nogil:
    # job j has a queue entry per tier (and factor) of its records
    return R.split != NULL and j < R.cap and R.split[j] != 0


cdef inline bint pr_split_factor(const PartRecords* R, int64_t j) noexcept nogil:
    # job j's records differ in their partition factor: each entry has its own key (R.rkey)
    return R.split != NULL and j < R.cap and (R.split[j] & SPLIT_FACTOR) != 0


cdef inline void pr_range(const PartRecords* R, int64_t j, int32_t rec, int64_t* lo, int64_t* hi) noexcept nogil:
    # the records a queue entry of job j tests: rec < 0, all of them; else rec and the records after
    # it of its tier (records are in tier order) and, where factors are set, of its factor
    cdef int64_t end = R.at[j] + R.n[j], r
    if rec < 0:
        lo[0] = R.at[j]
        hi[0] = end
        return
    r = rec + 1
    while r < end and R.tier[r] == R.tier[rec] and (R.pf == NULL or R.pf[r] == R.pf[rec]):
        r += 1
    lo[0] = rec
    hi[0] = r


cdef inline uint64_t pr_parts(const PartRecords* R, int64_t lo, int64_t hi) noexcept nogil:
    # the partitions of records lo .. hi - 1
    cdef uint64_t parts = 0
    cdef int64_t r
    for r in range(lo, hi):
        parts |= R.part[r]
    return parts


cdef inline int pr_set_tiers(PartRecords* R) noexcept nogil:
    # after R.tier (and R.pf, if any) is filled: which jobs are split (records of more than one tier,
    # or of more than one factor)
    cdef int64_t j, r
    R.split = <int8_t*>malloc((R.cap + 1) * sizeof(int8_t))
    R.seen = <int64_t*>malloc((R.cap + 1) * sizeof(int64_t))
    R.resv_in = <int64_t*>malloc((R.cap + 1) * sizeof(int64_t))
    R.first_entry = <int64_t*>malloc((R.cap + 1) * sizeof(int64_t))
    if R.split == NULL or R.seen == NULL or R.resv_in == NULL or R.first_entry == NULL:
        return RC_NO_MEMORY
    if R.pf != NULL:
        R.rkey = <double*>malloc((R.nrec + 1) * sizeof(double))
        if R.rkey == NULL:
            return RC_NO_MEMORY
        for r in range(R.nrec):
            R.rkey[r] = 0.0
    R.nsplit = 0
    for j in range(R.cap):
        R.split[j] = 0
        R.seen[j] = -1
        R.resv_in[j] = -1
        R.first_entry[j] = -1
        for r in range(R.at[j] + 1, R.at[j] + R.n[j]):
            if R.tier[r] != R.tier[R.at[j]]:
                R.split[j] |= SPLIT_TIER
            if R.pf != NULL and R.pf[r] != R.pf[R.at[j]]:
                R.split[j] |= SPLIT_FACTOR
        if R.split[j]:
            R.nsplit += 1
    return RC_OK
