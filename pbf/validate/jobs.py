"""The workload as both sides see it: each job of a trace, on Slurm's clock (the time scale applied),
with what it asks -- cores, memory, GPUs, nodes, features -- as ``sbatch`` options and as a pbf job table.

**The time scale** ``S`` (``--time-scale``): Slurm runs in real seconds, so a workload of hours is
replayed ``S`` times faster. A job submitted at ``t`` seconds (counted from the workload's first
submission) is submitted at ``round(t / S)`` seconds of the run; it sleeps ``max(1, round(run / S))``
seconds; its time limit becomes ``max(1, ceil(requested / S / 60))`` whole minutes (Slurm takes
limits in minutes). A sleep that would reach its limit is cut to the limit less one second, because
slurmctld enforces limits on a 30-second timer (a job exactly at its limit ends by itself or is killed,
by chance). pbf replays *these* scaled jobs (submit, run, limit in whole seconds), so both sides see
the same workload and every time compared is in seconds of the run; multiply by ``S`` for the
workload's seconds.

What a job asks (pbf's :func:`pbf.resources.requests_of` of the trace) becomes: ``--ntasks`` its cores,
``--mem-per-cpu`` or ``--mem`` (per node) in MB, ``--gres=gpu:N,nvme:M`` (GPUs and any other generic
resources, per node), ``-N min[-max]`` when the
trace names node counts, ``--constraint=a&b``; on a site of several partitions, ``--partition`` the job's
own (the trace's ``Partition``, ``a,b`` for a job of several), as pbf replays it; ``--reservation=R`` for a
job the trace says ran inside reservation ``R`` (a sacct dump's ``Reservation`` column), which pbf's side
replays inside it (the job table's ``reservation`` column).
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..gres import gres_text
from ..resources import Requests, constraint_legend, requests_of
from ..workload import JobTable, read_swf
from ..workload.jobs import SwfHeader

__all__ = ["HarnessJob", "load_workload", "job_partitions", "job_reservations", "scale_jobs", "pbf_table"]


@dataclass(frozen=True)
class HarnessJob:
    """One job on Slurm's clock: ``id`` (the workload's job id), ``submit`` and ``run`` (whole seconds
    of the run), ``limit_min`` (the time limit, whole minutes), ``cores``, ``mem_core_mb`` /
    ``mem_node_mb`` (0: none asked), ``gpus`` (per node), ``nodes_min`` / ``nodes_max`` (0: any),
    ``features``, the workload's own ``orig_submit``, ``orig_run`` and ``orig_req`` (seconds), its
    ``user`` (the trace's user number), ``partition`` (the trace's partitions, ``a`` or ``a,b``; ""
    when the job goes where the harness sends every job) and ``reservation`` (the reservation the job
    names, ``sbatch --reservation``; "" for none); ``gres``: the generic resources besides GPUs it asks
    of each node (``(name, count)`` pairs)."""
    id: int
    submit: int
    run: int
    limit_min: int
    cores: int
    mem_core_mb: int = 0
    mem_node_mb: int = 0
    gpus: int = 0
    nodes_min: int = 1
    nodes_max: int = 0
    features: tuple = ()
    orig_submit: int = 0
    orig_run: int = 0
    orig_req: int = 0
    user: int = 1
    partition: str = ""
    reservation: str = ""
    gres: tuple = ()

    @property
    def account(self) -> str:
        """The Slurm account the harness submits this job to when it sets up fair share: one account per
        trace user (``a<user>``)."""
        return f"a{self.user}" if self.user >= 0 else "anone"

    @property
    def unix_user(self) -> str:
        """The throwaway Unix user that submits this job when the harness submits as the trace's users
        (``--as-users``): ``pbfu<user>``, made inside the run's private mount namespace only."""
        return f"pbfu{self.user}" if self.user >= 0 else "pbfunone"

    def sbatch_args(self, partition: str | None, workdir: str, with_account: bool = False) -> list:
        """``sbatch`` arguments that submit this job (a ``sleep`` of its run time) to its own
        :attr:`partition`, else to ``partition`` (None: Slurm's default partition); ``with_account``: to
        the trace user's own account (:attr:`account`)."""
        args = ["--parsable", f"--job-name=pbf{self.id}", "--output=/dev/null", f"--chdir={workdir}",
                f"--time={self.limit_min}", f"--ntasks={self.cores}"]
        partition = self.partition or partition
        if partition:
            args.append(f"--partition={partition}")
        if with_account:
            args.append(f"--account={self.account}")
        if self.reservation:
            args.append(f"--reservation={self.reservation}")
        if self.nodes_max:
            args.append(f"--nodes={self.nodes_min}" if self.nodes_max == self.nodes_min
                        else f"--nodes={self.nodes_min}-{self.nodes_max}")
        elif self.nodes_min > 1:
            args.append(f"--nodes={self.nodes_min}-{max(self.nodes_min, self.cores)}")
        if self.mem_node_mb:
            args.append(f"--mem={self.mem_node_mb}")
        elif self.mem_core_mb:
            args.append(f"--mem-per-cpu={self.mem_core_mb}")
        if self.gpus or self.gres:
            args.append("--gres=" + ",".join(([f"gpu:{self.gpus}"] if self.gpus else [])
                                             + [f"{name}:{count}" for name, count in self.gres]))
        if self.features:
            args.append(f"--constraint={'&'.join(self.features)}")
        args.append(f"--wrap=sleep {self.run}")
        return args


def load_workload(path: str | os.PathLike) -> tuple[JobTable, Requests]:
    """``(table, requests)`` of a workload: an SWF file or a ``sacct --parsable2`` dump, read and cleaned
    by pbf's readers (:func:`pbf.read_swf`, the PWA cleaning defaults), and what each job asks of the
    nodes (:func:`pbf.resources.requests_of`, memory as requested, no default memory: Slurm applies the
    partition's own)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ConfigError(f"workload {path!r}: no such file")
    table = read_swf(path)
    if len(table) == 0:
        raise ConfigError(f"workload {path!r}: no job is left after cleaning")
    return table, requests_of(table, "requested", 0)


def job_partitions(table: JobTable) -> list[str]:
    """Each job's partitions as the trace names them (``a``, ``a,b``; "" for none): a sacct dump's
    ``Partition`` column, an SWF trace's field 16 through its ``; Partition: N name`` header lines."""
    legend = constraint_legend(table.header, "Partition")
    if not legend:
        return [""] * len(table)
    names = {k: ("" if v == "(none)" else v) for k, v in legend.items()}
    return [names.get(int(p), "") for p in table.partition]


def job_reservations(table: JobTable) -> list[str]:
    """Each job's reservation as the trace names it (sacct's ``Reservation`` column, read into the table's
    ``reservation`` column with its ``; Reservation: N name`` header lines); "" for none."""
    col = table.columns.get("reservation")
    if col is None or not (col > 0).any():
        return [""] * len(table)
    names = {k: ("" if v == "(none)" else v) for k, v in constraint_legend(table.header, "Reservation").items()}
    return [names.get(int(r), "") if r > 0 else "" for r in col]


def scale_jobs(table: JobTable, requests: Requests, time_scale: float = 1.0, *,
               partitions: bool = False) -> tuple[list[HarnessJob], list[str]]:
    """``(jobs, notes)``: the :class:`HarnessJob` of every job of ``table`` (in submission order) on
    Slurm's clock at ``time_scale`` (module docstring), and notes on what the scale changed (jobs whose
    sleep was cut below their limit, runs rounded up to 1 s). ``partitions``: each job keeps the trace's
    partitions (:func:`job_partitions`; else none: the harness sends every job to one)."""
    if not isinstance(time_scale, (int, float)) or isinstance(time_scale, bool) or not math.isfinite(time_scale) \
            or time_scale <= 0:
        raise ConfigError(f"time scale must be a number > 0 (workload seconds per second of the run), "
                          f"got {time_scale!r}")
    order = np.lexsort((table.job_id, table.submit))
    first = int(table.submit[order[0]]) if len(order) else 0
    lines = table.columns.get("line")
    labels = job_partitions(table) if partitions else [""] * len(table)
    resvs = job_reservations(table)
    jobs, cut, rounded_up = [], 0, 0
    for i in order:
        i = int(i)
        req = int(table.req_time[i])
        if req <= 0:
            where = f"{table.source}, line {int(lines[i])}" if lines is not None else f"{table.source}"
            raise ConfigError(f"{where}: job {int(table.job_id[i])}: field 9 (req_time) = {req}: expected a requested "
                              "time > 0 (Slurm needs a time limit)")
        run0 = max(int(table.run[i]), 0)
        limit = max(1, math.ceil(req / time_scale / 60 - 1e-9))
        run = round(run0 / time_scale)
        if run < 1:
            run, rounded_up = 1, rounded_up + 1
        if run >= limit * 60:
            run, cut = limit * 60 - 1, cut + 1
        jobs.append(HarnessJob(
            id=int(table.job_id[i]), submit=round((int(table.submit[i]) - first) / time_scale), run=run,
            limit_min=limit, cores=int(table.units[i]), mem_core_mb=int(requests.mem_core_mb[i]),
            mem_node_mb=int(requests.mem_node_mb[i]), gpus=int(requests.gpus[i]),
            nodes_min=int(requests.nodes_min[i]), nodes_max=int(requests.nodes_max[i]),
            features=tuple(requests.features[i]), orig_submit=int(table.submit[i]), orig_run=run0, orig_req=req,
            user=int(table.user[i]), partition=labels[i], reservation=resvs[i],
            gres=tuple(requests.gres[i]) if requests.gres else ()))
    if len({j.id for j in jobs}) != len(jobs):
        raise ConfigError(f"{table.source}: job ids repeat; the harness names Slurm jobs by them")
    notes = []
    if cut:
        notes.append(f"{cut} jobs sleep their time limit less 1 s (their run reached the limit once scaled)")
    if rounded_up:
        notes.append(f"{rounded_up} jobs shorter than {time_scale:g} s sleep 1 s")
    return jobs, notes


def pbf_table(jobs: Sequence[HarnessJob], runs: dict | None = None, qos: str | None = None) -> JobTable:
    """A :class:`pbf.JobTable` of the scaled jobs for pbf's replay (submit, run and requested time in
    seconds of the run, memory, GPUs and other generic resources (``; Gres: N nvme:1`` header lines), nodes,
    features, user, and the jobs' own partitions as ``; Partition: N name`` header lines when some job
    names any). ``runs`` (job id -> seconds) replaces run
    times, e.g. by those Slurm measured. ``qos``: every job's QOS (a ``; Queue: 1 NAME`` header line), as a
    limits case submits them (:mod:`pbf.validate.limits`)."""
    n = len(jobs)
    col = lambda f, dtype=np.int64: np.array([f(j) for j in jobs], dtype=dtype)  # noqa: E731
    run = col(lambda j: runs.get(j.id, j.run) if runs else j.run)
    resvs = list(dict.fromkeys(j.reservation for j in jobs if j.reservation))
    kinds = list(dict.fromkeys(gres_text(j.gres) for j in jobs if j.gres))
    table = JobTable.from_arrays(
        job_id=col(lambda j: j.id), submit=col(lambda j: j.submit), wait=np.full(n, -1), run=run,
        alloc_procs=col(lambda j: j.cores), req_procs=col(lambda j: j.cores),
        req_time=col(lambda j: j.limit_min * 60), status=np.ones(n, dtype=np.int64), user=col(lambda j: j.user),
        mem_core_mb=col(lambda j: j.mem_core_mb), mem_node_mb=col(lambda j: j.mem_node_mb),
        gpus=col(lambda j: j.gpus), nodes_min=col(lambda j: j.nodes_min), nodes_max=col(lambda j: j.nodes_max),
        **({"reservation": col(lambda j: resvs.index(j.reservation) + 1 if j.reservation else 0)} if resvs else {}),
        **({"gres": col(lambda j: kinds.index(gres_text(j.gres)) + 1 if j.gres else 0)} if kinds else {}))
    table.features = ["&".join(j.features) for j in jobs]
    names = list(dict.fromkeys(j.partition for j in jobs if j.partition))
    if names or qos or resvs or kinds:
        header = SwfHeader()
        for k, text in enumerate(kinds, 1):
            header.add_line(f" Gres: {k} {text}")
        for k, name in enumerate(names, 1):
            header.add_line(f" Partition: {k} {name}")
        for k, name in enumerate(resvs, 1):
            header.add_line(f" Reservation: {k} {name}")
        if qos:
            header.add_line(f" Queue: 1 {qos}")
            table.queue[:] = 1
        table.header = header
    if names:
        number = {name: k for k, name in enumerate(names, 1)}
        table.partition[:] = np.array([number.get(j.partition, 0) for j in jobs], dtype=table.partition.dtype)
    table.source = "the harness's scaled workload"
    return table
