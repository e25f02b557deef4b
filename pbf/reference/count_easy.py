"""Count-based EASY backfilling: the pyss/predictsim semantics, as a second reference.

Processors are counted, not named. At every instant (all its events applied first): start queue-head
jobs in FCFS order while they fit; then the first job that does not fit gets a reservation at the
"shadow time" (the earliest planned end of running jobs at which enough processors are free) and the
"extra" processors (free at the shadow time beyond what it needs); a later job may start now if it
fits now and either ends by the shadow time or uses no more than the extra processors (which it then
consumes). Running jobs are planned to end at start + estimate (never before now + 1).
"""
from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

INF = float("inf")


def count_easy_replay(submit: Sequence[int] | np.ndarray, units: Sequence[int] | np.ndarray,
                      est: Sequence[int] | np.ndarray, run: Sequence[int] | np.ndarray, total_units: int) -> list[int]:
    """Start times of every job (-1 = never started: wider than the cluster or no estimate)."""
    n = len(submit)
    submit = [int(x) for x in submit]
    units = [int(x) for x in units]
    est = [int(x) for x in est]
    run = [int(x) for x in run]
    start = [-1] * n
    queue = []                  # FCFS: submit order = index order
    running = {}                # job -> planned end
    ends = []                   # heap of (actual end, job)
    free = total_units
    nxt = 0
    while True:
        ts = submit[nxt] if nxt < n else INF
        te = ends[0][0] if ends else INF
        now = min(ts, te)
        if now == INF:
            return start
        while ends and ends[0][0] == now:
            _, j = heapq.heappop(ends)
            free += units[j]
            del running[j]
        while nxt < n and submit[nxt] == now:
            if 0 < units[nxt] <= total_units and est[nxt] > 0:
                queue.append(nxt)
            nxt += 1
        # 1. the head starts while it fits
        while queue and units[queue[0]] <= free:
            j = queue.pop(0)
            start[j] = now
            free -= units[j]
            running[j] = now + est[j]
            heapq.heappush(ends, (now + run[j], j))
        if not queue:
            continue
        # 2. the head's reservation: shadow time and extra processors
        head = queue[0]
        avail = free
        shadow = None
        planned = sorted((max(e, now + 1), units[j]) for j, e in running.items())
        i = 0
        while i < len(planned):
            t = planned[i][0]
            while i < len(planned) and planned[i][0] == t:
                avail += planned[i][1]
                i += 1
            if avail >= units[head]:
                shadow = t
                break
        extra = avail - units[head]
        # 3. backfill in queue order
        kept = [head]
        for j in queue[1:]:
            if units[j] <= free and (now + est[j] <= shadow or units[j] <= extra):
                start[j] = now
                free -= units[j]
                if now + est[j] > shadow:
                    extra -= units[j]
                running[j] = now + est[j]
                heapq.heappush(ends, (now + run[j], j))
            else:
                kept.append(j)
        queue = kept
