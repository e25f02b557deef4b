"""``SchedulerParameters`` read as slurmctld reads it: each option found by a case-insensitive substring
search over the whole value (Slurm's ``xstrcasestr``; ``backfill.c`` ``_load_config`` and
``job_scheduler.c`` ``_sched_params``... of Slurm 22.05), not by splitting it into words.

So a word need not stand alone to count: ``SchedulerParameters==bf_max_job_user=20,bf_continue`` (a
real site's typo: the value begins with ``=``) sets ``bf_max_job_user`` to 20 and ``bf_continue``, as
slurmctld applies them; the first occurrence of an option wins; a word slurmctld does not look for is
ignored by it. :func:`find_options` returns what slurmctld would read, and each comma-separated word
with what became of it, so that every word is reported: read, read past (an option given twice), or
not one pbf knows.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["NUMBERS", "FLAGS", "find_options", "SchedOptions", "BF_LIMITS_WHY"]

#: options slurmctld reads as ``NAME=VALUE`` and pbf knows (Slurm 22.05's backfill.c and job_scheduler.c)
NUMBERS = ("bf_interval", "bf_max_time", "bf_window", "bf_resolution", "bf_max_job_test", "max_job_bf",
           "bf_yield_interval", "default_queue_depth", "sched_interval", "batch_sched_delay", "max_sched_time",
           "bf_max_job_user", "bf_max_job_part", "bf_max_job_start", "bf_max_job_user_part", "bf_max_job_assoc",
           "bf_min_age_reserve", "bf_min_prio_reserve", "bf_job_part_count_reserve", "bf_yield_sleep",
           "sched_min_interval", "partition_job_depth", "sched_max_job_start", "bf_max_job_array_resv",
           "bf_node_space_size", "max_rpc_cnt", "max_rpc_count", "bf_hetjob_prio", "max_array_tasks",
           "max_depend_depth", "max_switch_wait", "preempt_reorder_count")
#: options slurmctld reads as a bare word (present anywhere in the value: on)
FLAGS = ("bf_continue", "bf_one_resv_per_job", "bf_busy_nodes", "bf_running_job_reserve", "bf_licenses",
         "bf_hetjob_immediate", "assoc_limit_stop", "pack_serial_at_end", "defer", "nohold_on_prolog_fail",
         "preempt_strict_order", "bf_ignore_newly_avail_nodes", "salloc_wait_nodes",
         "sbatch_wait_nodes", "enable_user_top", "whole_hetjob", "ignore_prefer_validation")

#: why pbf does not model each Slurm backfill limit it leaves out (the others are
#: :class:`pbf.bf_limits.SlurmBackfill`'s)
BF_LIMITS_WHY = {
    "bf_busy_nodes": "Slurm's select plugin prefers nodes already in use for a backfill reservation; pbf picks "
                     "a reservation's nodes by its usual choice",
    "bf_max_job_array_resv": "pbf has no job arrays to reserve for (every array task is a job of its own)",
    "bf_node_space_size": "pbf's map of reservations grows as it needs",
    "bf_running_job_reserve": "pbf does not hold running jobs in the backfill map (Slurm's default)",
    "bf_licenses": "licenses are not planned in the future: a job waiting for licenses is passed over, as "
                   "without bf_licenses",
}


@dataclass
class SchedOptions:
    """What slurmctld reads of one ``SchedulerParameters`` value: ``values`` {option: (text after
    ``option=`` to the next comma, the text of the option as spelled, the word it is in)} (the first
    occurrence), ``flags`` {flag: the word it is in}, and every comma-separated ``word`` with what it
    gave: ``used`` {word index: [options read from it]}, ``read_past`` [(word, option)] (an option
    slurmctld reads from an earlier word), ``unknown`` [words] (no option pbf knows)."""
    values: dict = field(default_factory=dict)
    flags: dict = field(default_factory=dict)
    words: list = field(default_factory=list)
    used: dict = field(default_factory=dict)
    read_past: list = field(default_factory=list)
    unknown: list = field(default_factory=list)


def _words(text: str) -> list:
    """(start, end) of each comma-separated word (spaces around it left out); empty words dropped."""
    out, at = [], 0
    for part in text.split(","):
        lead = len(part) - len(part.lstrip())
        s, e = at + lead, at + len(part.rstrip())
        if e > s:
            out.append((s, e))
        at += len(part) + 1
    return out


def find_options(text: str) -> SchedOptions:
    """The options slurmctld finds in ``text`` (module docstring)."""
    low = text.lower()
    spans = _words(text)
    got = SchedOptions(words=[text[s:e] for s, e in spans])

    def word_of(i):
        for k, (s, e) in enumerate(spans):
            if s <= i < e:
                return k
        return None
    hits = {}                        # word index -> options found there (first or later occurrences)
    for name in NUMBERS:
        needle = name + "="
        i = low.find(needle)
        first = True
        while i >= 0:
            k = word_of(i)
            if k is not None:
                hits.setdefault(k, []).append((name, first))
                if first:
                    end = text.find(",", i)
                    end = len(text) if end < 0 else end
                    got.values[name] = (text[i + len(needle):end].strip(), text[i:i + len(name)], got.words[k])
            first = False
            i = low.find(needle, i + 1)
    for name in FLAGS:
        i = low.find(name)
        first = True
        while i >= 0:
            k = word_of(i)
            if k is not None:
                hits.setdefault(k, []).append((name, first))
                if first:
                    got.flags[name] = got.words[k]
            first = False
            i = low.find(name, i + 1)
    for k, word in enumerate(got.words):
        found = hits.get(k, [])
        # a longer option that contains a shorter one's name (bf_max_job_user_part holds no
        # "bf_max_job_user=", but "bf_licenses" is in "nobf_licenses"): every name found counts
        used = [n for n, first in found if first]
        if used:
            got.used[k] = used
        for n, first in found:
            if not first:
                got.read_past.append((word, n))
        if not found:
            got.unknown.append(word)
    return got
