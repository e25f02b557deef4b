"""Runs a workload through a real Slurm (22.05 tested) in a private network namespace and reads back
what happened to every job.

**The network rule**: Slurm never runs on the host's network. :func:`run_slurm` starts
``unshare -n -u python -m pbf.validate.slurm_inside SCRATCH`` (:mod:`pbf.validate.slurm_inside`): a
new network namespace (loopback and a veth pair with the private address 10.253.0.1, nothing routed
out) and a new host-name namespace (the controller's host is ``pbfctl``). The daemons, the submissions
and the jobs live there only; the inner program refuses to start daemons in the host's namespace.

Every daemon is stopped by its pid and checked gone: by the inner program on its way out (normal end,
error, signals, atexit), and, should the inner program itself have to be ended (timeout, Ctrl-C), this
module sends it SIGTERM (it then stops its daemons), SIGKILL after a grace period, and ends by pid any
process still in that namespace. A scratch folder holds the configuration, state, spool and logs.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import PbfError
from .jobs import HarnessJob
from .records import JobRecord, parse_jobcomp_line, read_jobcomp, read_starts_log, read_timing
from .slurm_config import DBD_PORT, MYSQL_PORT, PrivateConf

__all__ = ["SlurmUnavailable", "SlurmRunError", "SlurmRun", "check_requirements", "run_slurm", "slurm_version",
           "job_outcomes", "new_scratch", "compact_run"]

#: the daemons the harness needs: found on PATH, else in these folders
_DAEMONS = ("slurmctld", "slurmd")
_SBIN = ("/usr/sbin", "/usr/local/sbin", "/sbin")
_CLIENTS = ("sbatch", "squeue", "sinfo", "scontrol", "scancel", "sdiag")
#: the first uid of the throwaway users of ``--as-users`` (in the run's own copy of /etc/passwd only)
USER_UID0 = 61000


class SlurmUnavailable(PbfError, RuntimeError):
    """This machine cannot run the real-Slurm harness; the message says what is missing (root, unshare,
    ip, the Slurm daemons or clients, a private network namespace)."""


class SlurmRunError(PbfError, RuntimeError):
    """A real-Slurm run failed; the message says where and points to its logs."""


def check_requirements(accounting: bool = False, as_users: bool = False) -> dict:
    """The paths of what the harness needs (with ``accounting``: slurmdbd, sacctmgr, MariaDB too; with
    ``as_users``: ``mount`` and a private mount namespace); :class:`SlurmUnavailable` naming everything that
    is missing (and how to get it) otherwise. Also checks that a private network namespace can be made."""
    missing = []
    if os.geteuid() != 0:
        missing.append("root (the daemons run as root and the harness makes network namespaces; run as root)")
    found = {}
    for prog in ("unshare", "ip"):
        found[prog] = shutil.which(prog)
        if not found[prog]:
            missing.append(f"{prog} (util-linux / iproute2)")
    for name in _DAEMONS:
        found[name] = _daemon(name)
        if not found[name]:
            missing.append(f"{name} (apt-get install slurmctld slurmd)")
    for prog in _CLIENTS:
        found[prog] = shutil.which(prog)
        if not found[prog]:
            missing.append(f"{prog} (apt-get install slurm-client)")
    if accounting:
        for name, how in (("slurmdbd", "apt-get install slurmdbd"), ("mariadbd", "apt-get install mariadb-server"),
                          ("mariadb-install-db", "apt-get install mariadb-server")):
            found[name] = _daemon(name)
            if not found[name]:
                missing.append(f"{name} ({how}; fair share needs slurmdbd and a database)")
        found["sacctmgr"] = shutil.which("sacctmgr")
        if not found["sacctmgr"]:
            missing.append("sacctmgr (apt-get install slurm-client)")
    if as_users:
        found["mount"] = shutil.which("mount")
        if not found["mount"]:
            missing.append("mount (util-linux; --as-users binds private copies of /etc/passwd and /etc/group)")
    if not missing:
        flags = ["-n", "-u", *(["-m"] if as_users else [])]
        r = subprocess.run([found["unshare"], *flags, "true"], capture_output=True, text=True)
        if r.returncode != 0:
            missing.append(f"a private namespace ('unshare {' '.join(flags)} true' failed: {r.stderr.strip()})")
    if missing:
        raise SlurmUnavailable("the real-Slurm harness cannot run here; missing: " + "; ".join(missing))
    return found


def _daemon(name):
    found = shutil.which(name)
    if found:
        return found
    for folder in _SBIN:
        path = os.path.join(folder, name)
        if os.access(path, os.X_OK):
            return path
    return None


def slurm_version() -> str:
    """``slurmctld -V`` (e.g. ``slurm-wlm 22.05.8``), or '' when it cannot be run."""
    path = _daemon("slurmctld")
    if not path:
        return ""
    try:
        r = subprocess.run([path, "-V"], capture_output=True, text=True, timeout=30)
    except OSError:
        return ""
    return r.stdout.strip()


@dataclass
class SlurmRun:
    """What one real-Slurm run gave: per workload job id, ``jobs[id]`` = dict(start, end (seconds from
    the run's origin t0, None if it never ran), nodes (names), state, slurm_id, submit_lag (seconds
    between the planned and the actual ``sbatch``), error (sbatch's message if refused)); the ``sdiag``
    text, Slurm's ``version``, ``t0`` (epoch of the origin), ``idle_after_s`` (daemons up to every node
    idle), ``wall_s``, ``finished`` (every job ended before the timeout), ``stopped`` (each daemon, how it
    was stopped and whether it is gone) and the ``scratch`` folder (removed unless kept); ``timing``:
    Slurm's sub-second timing read from its log (:func:`pbf.validate.records.read_timing`);
    ``pending_reasons``: squeue's pending reasons from the last submission to the end, polled about
    every second (``jobs``: how many jobs had each reason at some poll; ``job_polls``: how many job-polls had it), or
    None where the run did not record them."""
    jobs: dict
    sdiag: str
    version: str
    t0: int
    idle_after_s: float
    wall_s: float
    finished: bool
    stopped: list
    scratch: str
    jobcomp: str = ""
    errors: list = field(default_factory=list)
    timing: dict = field(default_factory=dict)
    pending_reasons: dict | None = None


def _pids_in_netns(ns):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink(f"/proc/{name}/ns/net") == ns:
                    out.append(int(name))
            except OSError:
                pass
    return out


class _Inner:
    """The inner program's process, ended by pid on every way out of :func:`run_slurm`."""

    def __init__(self, proc, scratch):
        self.proc, self.scratch, self.ended = proc, scratch, False

    def end(self, grace: float = 60.0) -> None:
        if self.ended:
            return
        self.ended = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)           # it stops its daemons, then exits
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        try:
            with open(os.path.join(self.scratch, "netns")) as fh:
                ns = fh.read().strip()
        except OSError:
            return
        if ns and ns != os.readlink("/proc/self/ns/net"):
            for pid in _pids_in_netns(ns):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


def run_slurm(private: PrivateConf, jobs: Sequence[HarnessJob], *, timeout: float, keep: str | None = None,
              verbose: bool = True, stuck_after: float = 15.0, reservation: dict | None = None,
              actions: list | None = None, setup: list | None = None, as_users: bool = False) -> SlurmRun:
    """Run ``jobs`` (:class:`pbf.validate.jobs.HarnessJob`) through a real Slurm configured by
    ``private`` (a :class:`pbf.validate.slurm_config.PrivateConf`, whose scratch folder the run uses),
    inside a private network namespace; wait at most ``timeout`` seconds after the first submission.
    ``keep``: a folder to copy the run's records into (slurm.conf, gres.conf, jobcomp.txt, sdiag.txt, the
    logs, submitted.json). Progress goes to stderr when ``verbose``. Jobs still pending, with nothing
    running and nothing changing for ``stuck_after`` seconds, can never start: they are cancelled and
    reported (state ``NEVER_STARTED``, with Slurm's pending reason). ``reservation``: a reservation to
    create before the first submission (name, nodes, start and end in seconds of the run's clock, flags;
    :mod:`pbf.validate.reservation`), its dump kept as ``reservation.txt``. ``actions``: timed ``scontrol``
    commands (``at``: seconds of the run's clock; :func:`pbf.validate.drain.drain_actions`); with accounting
    the run keeps ``sacctmgr show events`` as ``events.txt``. ``setup``: ``sacctmgr -i`` commands run
    before slurmctld starts (a case's limits, :mod:`pbf.validate.limits`), the QOS and association
    dumps kept as ``qos.txt`` and ``assoc.cfg``. ``as_users``: each job is submitted by its trace user's own
    Unix user (:attr:`HarnessJob.unix_user`, ``pbfu<N>``), made in a private mount namespace (``unshare -m``:
    copies of /etc/passwd and /etc/group bound over them there, never changed on the host) and, with
    accounting, given the association in its account ``a<N>`` that root has otherwise."""
    found = check_requirements(private.accounting, as_users)
    scratch = private.scratch
    spec = {"conf": private.path, "nodes": private.nodes, "slurmctld": found["slurmctld"], "slurmd": found["slurmd"],
            "timeout": float(timeout), "stuck_after": stuck_after,
            "host_netns": os.readlink("/proc/self/ns/net"),
            "jobs": [{"id": j.id, "submit": j.submit, "args": j.sbatch_args(private.partition,
                                                                              os.path.join(scratch, "work"),
                                                                              with_account=private.accounting)}
                     for j in jobs]}
    users = {}
    if as_users:
        names = sorted({j.unix_user for j in jobs})
        users = {name: USER_UID0 + k for k, name in enumerate(names)}
        for entry, j in zip(spec["jobs"], jobs):
            entry["user"] = j.unix_user
        spec["users"] = users
        spec["host_mntns"] = os.readlink("/proc/self/ns/mnt")
        os.chmod(scratch, 0o755)           # the users' sbatch reads slurm.conf there
    if reservation:
        spec["reservation"] = reservation
    if actions:
        spec["actions"] = list(actions)
    if setup:
        spec["reasons_from_start"] = True        # a limits case: squeue's reasons from the first submission on
    if private.accounting:
        spec["accounting"] = {"accounts": sorted({j.account for j in jobs}), "cluster": "pbfvalidate",
                              "slurmdbd": found["slurmdbd"], "mariadbd": found["mariadbd"],
                              "install_db": found["mariadb-install-db"],
                              "mysql_port": MYSQL_PORT, "dbd_port": DBD_PORT, "setup": list(setup or []),
                              "users": {j.unix_user: j.account for j in jobs} if as_users else {}}
    with open(os.path.join(scratch, "spec.json"), "w") as fh:
        json.dump(spec, fh)
    pbf_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [pbf_root, os.environ.get("PYTHONPATH")]))}
    env.pop("SLURM_CONF", None)
    log_path = os.path.join(scratch, "inside.log")
    log = open(log_path, "w")
    cmd = [found["unshare"], "-n", "-u", *(["-m"] if as_users else []), sys.executable, "-m",
           "pbf.validate.slurm_inside", scratch]
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, cwd=scratch)
    log.close()
    inner = _Inner(proc, scratch)
    atexit.register(inner.end)
    shown = 0
    try:
        limit = time.monotonic() + timeout + 300          # daemons' start, the submissions' span, the stop
        while proc.poll() is None:
            if time.monotonic() > limit:
                raise SlurmRunError(f"the Slurm run did not end {timeout + 300:.0f} s after it began; ended it "
                                    f"(logs in {scratch})")
            time.sleep(0.5)
            if verbose:
                shown = _show(log_path, shown)
    finally:
        inner.end()
        atexit.unregister(inner.end)
        if verbose:
            _show(log_path, shown)
        if keep:
            _keep(scratch, keep)
    if not os.path.exists(os.path.join(scratch, "result.json")):
        raise SlurmRunError(f"the Slurm run left no result (exit {proc.returncode}); its log:\n"
                            + _tail(log_path))
    return read_run(scratch, jobs, shown_as=keep or scratch)


def read_run(folder: str | os.PathLike, jobs: Sequence[HarnessJob], shown_as: str | None = None) -> SlurmRun:
    """A finished run read back from its folder (the scratch folder, or the copy ``keep`` made:
    ``OUT/slurm/runK``): result.json, jobcomp.txt and log/slurmctld.log. ``shown_as``: the folder named
    in errors."""
    scratch = os.fspath(folder)
    shown_as = shown_as or scratch
    log_path = os.path.join(scratch, "inside.log")
    result_path = os.path.join(scratch, "result.json")
    recording = not os.path.exists(result_path) and is_recording(scratch)
    if recording:                      # a recording as the repository ships it (see is_recording)
        result_path = os.path.join(scratch, "submitted.json")
    if not os.path.exists(result_path):
        raise SlurmRunError(f"{result_path}: no such file (a Slurm run's folder holds its result.json; a "
                            "recording holds submitted.json, jobcomp.txt and slurmctld_starts.log)")
    with open(result_path) as fh:
        result = json.load(fh)
    if recording:
        result.setdefault("finished", True)
        sdiag_path = os.path.join(scratch, "sdiag.txt")
        if "sdiag" not in result and os.path.exists(sdiag_path):
            with open(sdiag_path, errors="replace") as fh:
                result["sdiag"] = fh.read()
    errors = list(result.get("errors", []))
    not_gone = [s for s in result.get("stopped", []) if not s["gone"]] + [
        {"name": "left in the namespace", "pid": p} for p in result.get("leftovers_alive", [])]
    if not_gone:
        errors.append(f"processes not gone after the run: {not_gone}")
    if "t0" not in result:
        raise SlurmRunError("the Slurm run failed before any job was submitted: " + "; ".join(errors)
                            + f"\n(logs in {shown_as})\n" + _tail(log_path))
    t0 = int(result["t0"])
    jobcomp_path = os.path.join(scratch, "jobcomp.txt")
    records = read_jobcomp(jobcomp_path) if os.path.exists(jobcomp_path) else []
    ctl_log = os.path.join(scratch, "slurmctld_starts.log" if recording else os.path.join("log", "slurmctld.log"))
    starts, timing = {}, {}
    if os.path.exists(ctl_log):
        with open(ctl_log, errors="replace") as fh:
            log_text = fh.read()
        starts = read_starts_log(log_text)
        runs = {sub["slurm_id"]: j.run for j in jobs for sub in [result["submitted"].get(str(j.id))]
                if sub and sub.get("slurm_id") is not None}
        timing = read_timing(log_text, runs, t0)
    out = job_outcomes(jobs, result["submitted"], t0, records, starts, result.get("never_started", {}))
    jobcomp_text = ""
    if os.path.exists(jobcomp_path):
        with open(jobcomp_path) as fh:
            jobcomp_text = fh.read()
    return SlurmRun(out, result.get("sdiag", ""), result.get("version", ""), t0, result.get("idle_after_s", 0.0),
                    result.get("wall_s", 0.0), bool(result.get("finished")), result.get("stopped", []), scratch,
                    jobcomp_text, errors, timing, result.get("pending_reasons"))


def is_recording(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is one Slurm run kept in the compact form the repository ships
    (``tests/data/slurm_harness/recorded_small4``): ``submitted.json`` (t0, the Slurm version and what
    was submitted when), ``jobcomp.txt``, ``slurmctld_starts.log`` (slurmctld's log lines of submissions
    and starts) and ``sdiag.txt``; ``pbf validate slurm --slurm-runs`` reads it as one run."""
    folder = os.fspath(folder)
    return all(os.path.isfile(os.path.join(folder, f)) for f in ("submitted.json", "jobcomp.txt"))


def job_outcomes(jobs: Sequence[HarnessJob], submitted: dict, t0: int, records: list[JobRecord], starts: dict,
                 never: dict | None = None) -> dict:
    """What happened to each job of a run, by workload job id (:attr:`SlurmRun.jobs`): ``submitted``
    (workload id -> planned, at (seconds from t0), slurm_id, error: what the inner program recorded),
    ``records`` (:func:`pbf.validate.records.read_jobcomp`), ``starts`` (:func:`read_starts_log`),
    ``never`` (Slurm id -> pending reason of jobs cancelled because they could never start)."""
    by_slurm = {r.slurm_id: r for r in records}
    never = {int(k): v for k, v in (never or {}).items()}
    out = {}
    for j in jobs:
        sub = submitted.get(str(j.id))
        sid = sub["slurm_id"] if sub else None
        rec = by_slurm.get(sid) if sid is not None else None
        ran = rec is not None and rec.ran
        state = rec.state if rec else ("REFUSED" if sub and sub["error"] else "UNKNOWN")
        if sid in never:
            state = "NEVER_STARTED"
        how, precise = starts.get(sid, ("", None)) if ran else ("", None)
        out[j.id] = {"slurm_id": sid, "submit_lag": (sub["at"] - sub["planned"]) if sub else None,
                     "error": sub["error"] if sub else "not submitted", "state": state,
                     "pending_reason": never.get(sid, ""),
                     "start": rec.start - t0 if ran else None, "end": rec.end - t0 if ran and rec.end else None,
                     "start_precise": precise - t0 if precise is not None else None, "how": how,
                     "nodes": list(rec.nodes) if rec else []}
    return out


def _show(path, shown):
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError:
        return shown
    if len(text) > shown:
        sys.stderr.write(text[shown:])
        sys.stderr.flush()
    return len(text)


def _tail(path, lines=30):
    try:
        with open(path) as fh:
            return "".join(fh.readlines()[-lines:])
    except OSError:
        return "(no log)"


def _keep(scratch, dest):
    os.makedirs(dest, exist_ok=True)
    for name in ("slurm.conf", "gres.conf", "slurmdbd.conf", "jobcomp.txt", "spec.json", "result.json", "inside.log",
                 "reservation.txt", "events.txt", "qos.txt", "assoc.cfg"):
        src = os.path.join(scratch, name)
        if os.path.exists(src):
            shutil.copy2(src, os.path.join(dest, name))
    logs = os.path.join(scratch, "log")
    if os.path.isdir(logs):
        shutil.copytree(logs, os.path.join(dest, "log"), dirs_exist_ok=True)
    try:
        with open(os.path.join(scratch, "result.json")) as fh:
            sdiag = json.load(fh).get("sdiag", "")
        with open(os.path.join(dest, "sdiag.txt"), "w") as fh:
            fh.write(sdiag)
    except (OSError, ValueError):
        pass


#: slurmctld's log lines a compact recording keeps: submissions, starts (backfill and main scheduler),
#: ends, backfill cycles' beginnings (the timing), the main scheduler's first pass, slurmctld's start and the jobs
#: a reservation's end ended (the phase of its 30-second time-limit timer)
_KEPT_LOG = ("_slurm_rpc_submit_batch_job: JobId=", "_start_job: Started JobId=", "sched: Allocate JobId=",
             "_job_complete: JobId=", "_attempt_backfill: beginning", "SchedulerParameters=default_queue_depth",
             "Reservation ended for JobId=", "slurmctld version")


#: the jobcomp/filetxt keys the comparison reads (pbf.validate.records.read_jobcomp)
_JOBCOMP_READ = ("JobId", "UserId", "Name", "JobState", "TimeLimit", "StartTime", "EndTime", "NodeList", "ProcCnt",
                 "SubmitTime")


def _jobcomp_read_only(line: str) -> str:
    """A jobcomp/filetxt ``line`` with only the keys the comparison reads (:data:`_JOBCOMP_READ`)."""
    f = parse_jobcomp_line(line)
    return " ".join(f"{k}={f[k]}" for k in _JOBCOMP_READ if k in f) + "\n"


def compact_run(folder: str | os.PathLike, dest: str | os.PathLike, note: str = "", *,
                cycles: bool = True, read_only: bool = False) -> list[str]:
    """Keep the run in ``folder`` (``OUT/slurm/runK`` of ``pbf validate slurm``) in the compact form the
    repository ships (:func:`is_recording`) in ``dest``: ``submitted.json`` (t0, its local time, the Slurm
    version, what was submitted when, ``note``), ``jobcomp.txt``, ``sdiag.txt`` and
    ``slurmctld_starts.log`` (slurmctld's log lines of submissions, starts, ends and, with ``cycles``,
    the backfill cycles' beginnings, from which the run's timing is read). ``read_only``: each jobcomp
    line keeps only the keys the comparison reads (a large run's recording). Returns the paths written."""
    folder, dest = os.fspath(folder), os.fspath(dest)
    try:
        with open(os.path.join(folder, "result.json")) as fh:
            result = json.load(fh)
    except (OSError, ValueError) as exc:
        raise SlurmRunError(f"{folder}: no readable result.json ({exc}): expected the slurm/runK folder of an "
                            "earlier 'pbf validate slurm --out'") from None
    if "t0" not in result:
        raise SlurmRunError(f"{folder}/result.json: no t0 (the run failed before any job was submitted)")
    os.makedirs(dest, exist_ok=True)
    sub = {"note": note, "t0": result["t0"],
           "t0_local": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(result["t0"])),
           "version": result.get("version", ""), "submitted": result["submitted"]}
    for key in ("never_started", "pending_reasons", "reservation_text", "events_text", "actions"):
        if result.get(key):
            sub[key] = result[key]
    paths = [os.path.join(dest, n) for n in ("submitted.json", "jobcomp.txt", "sdiag.txt", "slurmctld_starts.log")]
    with open(paths[0], "w") as fh:
        json.dump(sub, fh, indent=1)
        fh.write("\n")
    if read_only:
        with open(os.path.join(folder, "jobcomp.txt"), errors="replace") as src, open(paths[1], "w") as fh:
            fh.writelines(_jobcomp_read_only(line) for line in src if line.strip())
    else:
        shutil.copyfile(os.path.join(folder, "jobcomp.txt"), paths[1])
    for name in ("qos.txt", "assoc.cfg"):            # a limits case's dumps (pbf.validate.limits)
        if os.path.isfile(os.path.join(folder, name)):
            shutil.copyfile(os.path.join(folder, name), os.path.join(dest, name))
            paths.append(os.path.join(dest, name))
    with open(paths[2], "w") as fh:
        fh.write(result.get("sdiag", ""))
    with open(os.path.join(folder, "log", "slurmctld.log"), errors="replace") as src, open(paths[3], "w") as fh:
        fh.writelines(line for line in src if any(k in line for k in _KEPT_LOG)
                      and ("_job_complete:" not in line or line.rstrip().endswith(" done"))
                      and (cycles or "_attempt_backfill: beginning" not in line))
    return paths


def new_scratch() -> str:
    """A new scratch folder for one run (under the system's temporary folder)."""
    return tempfile.mkdtemp(prefix="pbf-slurm-")
