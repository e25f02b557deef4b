"""The program the backfill-cost measurement (:mod:`pbf.validate.scale`) runs inside its private network
namespace: ``unshare -n -u python -m pbf.validate.scale_inside SCRATCH``.

It reuses the harness's machinery (:mod:`pbf.validate.slurm_inside`): the network (loopback and a veth
pair with 10.253.0.1, host name ``pbfctl``), the daemons started as children and stopped by pid
(SIGTERM, SIGKILL after 10 s, checked gone) on every way out, and the end, by pid, of every process left
in the namespace. It refuses to run in the host's namespace.

What it does (``SCRATCH/spec.json``): starts ``slurmctld`` and one ``slurmd -N NAME`` per node, waits until
every node is idle, submits the *running* jobs (each pinned to its node, sleeping longer than the whole
measurement) and waits until they all run, so that the cluster is full and nothing pending can start.
Then, stage by stage, it takes the partition DOWN (jobs are queued but neither tested nor started: the
submissions are not slowed by backfill cycles, nor do they break them), submits the stage's pending jobs
(``sbatch --wrap "sleep N"``: their payload never runs), takes the partition UP again and, for each case
of the stage, writes the case's ``SchedulerParameters`` into the private ``slurm.conf``, runs ``scontrol
reconfigure``, resets sdiag's statistics (``sdiag -r``) and samples ``sdiag`` every few seconds into
``OUT/CASE/sdiag-NNN.txt`` (the raw text, as ``while sleep 5; do sdiag; done`` would save it), with the
machine's load beside each sample (``OUT/CASE/samples.csv``).

A backfill cycle runs only when something changed since the last one (``_more_work`` in Slurm's
``backfill.c``: a job, node or partition update). In a queue where nothing starts or ends, cycles would
stop; with ``poke`` the program touches one pending job (``scontrol update JobId=J Comment=...``, a job
update and nothing else) right after each cycle it sees end, so the next cycle runs at its interval. The
poke comes seconds after a cycle ends and ``bf_interval`` before the next begins, so it does not break a
cycle (a cycle ends early when it finds changes at a lock yield, without ``bf_continue``).
"""
from __future__ import annotations

import atexit
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .slurm_inside import Daemons, _interrupt, _log, _netns, _run, _setup_network, end_leftovers

__all__ = ["main", "set_scheduler_parameters", "sdiag_numbers"]

_SDIAG_NUM = re.compile(r"^\s*([A-Za-z][A-Za-z ()]*?)\s*:\s*(-?\d+)")


def sdiag_numbers(text: str) -> dict:
    """The numbers of sdiag's "Backfilling stats" block ({label: int}); ``{}`` without the block."""
    out, inside = {}, False
    for raw in text.splitlines():
        if raw.strip().startswith("Backfilling stats"):
            inside = True
            continue
        if inside:
            if raw[:1] not in ("", " ", "\t"):
                break
            m = _SDIAG_NUM.match(raw)
            if m:
                out.setdefault(m.group(1), int(m.group(2)))
    return out


def set_scheduler_parameters(conf: str, value: str) -> None:
    """Rewrite the ``SchedulerParameters`` line of the private ``slurm.conf`` (added when there is none)."""
    with open(conf) as fh:
        lines = fh.read().splitlines()
    out, done = [], False
    for line in lines:
        if line.lower().startswith("schedulerparameters="):
            if not done:
                out.append(f"SchedulerParameters={value}")
                done = True
            continue
        out.append(line)
    if not done:
        out.append(f"SchedulerParameters={value}")
    with open(conf + ".part", "w") as fh:
        fh.write("\n".join(out) + "\n")
    os.replace(conf + ".part", conf)


def _submit_all(jobs, env, workers=4, what="jobs"):
    """Submit every job (a list of sbatch argument lists) with ``workers`` sbatch processes at once; returns
    (Slurm ids, errors, seconds)."""
    ids, errors = [None] * len(jobs), []
    lock = threading.Lock()
    t0 = time.monotonic()
    done = [0]

    def one(k):
        for attempt in range(5):
            r = subprocess.run(["sbatch", *jobs[k]], env=env, capture_output=True, text=True, timeout=120)
            if r.returncode == 0:
                ids[k] = int(r.stdout.strip().split(";")[0])
                break
            msg = r.stderr.strip()
            if "temporarily unavailable" in msg or "Socket timed out" in msg or "timed out" in msg:
                time.sleep(1 + attempt)
                continue
            with lock:
                errors.append(msg[:300])
            break
        with lock:
            done[0] += 1
            if done[0] % 5000 == 0:
                rate = done[0] / (time.monotonic() - t0)
                _log(f"submitted {done[0]:,} of {len(jobs):,} {what} ({rate:.0f}/s)")

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(one, range(len(jobs))))
    return ids, errors, time.monotonic() - t0


def _queue_counts(env):
    r = _run(["squeue", "-h", "-o", "%T"], env, check=False, timeout=300)
    counts = {}
    for line in r.stdout.split():
        counts[line] = counts.get(line, 0) + 1
    return counts


def _proc_cpu(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            parts = fh.read().split(") ", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _thread_cpu(pid, name="bckfl"):
    """CPU seconds used so far by slurmctld's thread ``name`` (the backfill agent names itself ``bckfl``), or
    None when it is not found."""
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as fh:
                    if fh.read().strip() != name:
                        continue
                with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                    parts = fh.read().split(") ", 1)[1].split()
                return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
            except OSError:
                continue
    except OSError:
        pass
    return None


def _machine():
    """(1-minute load average, the machine's CPU seconds busy and in all) from /proc."""
    with open("/proc/loadavg") as fh:
        load1 = float(fh.read().split()[0])
    with open("/proc/stat") as fh:
        cpu = [int(x) for x in fh.readline().split()[1:]]
    idle = cpu[3] + (cpu[4] if len(cpu) > 4 else 0)
    tick = os.sysconf("SC_CLK_TCK")
    return load1, (sum(cpu) - idle) / tick, sum(cpu) / tick


def _measure(case, spec, env, ctld_pid, pending_id, daemons):
    """Sample sdiag for one case; returns the case's record."""
    out = os.path.join(spec["out"], case["name"])
    os.makedirs(out, exist_ok=True)
    sample_s, interval = spec.get("sample_s", 3.0), spec.get("bf_interval", 30)
    t_end_min = time.monotonic() + case.get("min_s", 0)
    t_end_max = time.monotonic() + case["max_s"]
    min_cycles = case.get("min_cycles", 5)
    rows, k, pokes = [], 0, 0
    last_cycles, last_change = 0, time.monotonic()
    prev_machine, prev_ctld, prev_t = _machine(), _proc_cpu(ctld_pid), time.monotonic()
    with open(os.path.join(out, "samples.csv"), "w") as csv:
        csv.write("file,t_s,epoch,cycles,last_cycle_us,last_depth,last_depth_try,queue_len,load1,"
                  "machine_busy_pct,slurmctld_cpu_pct,poked,bckfl_cpu_s\n")
        while True:
            daemons.check_running()
            time.sleep(sample_s)
            r = _run(["sdiag"], env, check=False, timeout=120)
            now = time.monotonic()
            bf_cpu = _thread_cpu(ctld_pid)
            bf_cpu = -1.0 if bf_cpu is None else bf_cpu
            machine, ctld = _machine(), _proc_cpu(ctld_pid)
            busy = (machine[1] - prev_machine[1]) / max(1e-9, machine[2] - prev_machine[2]) * 100
            ctld_pct = ((ctld - prev_ctld) / (now - prev_t) * 100) if ctld is not None and prev_ctld is not None \
                else -1
            prev_machine, prev_ctld, prev_t = machine, ctld, now
            k += 1
            name = f"sdiag-{k:03d}.txt"
            with open(os.path.join(out, name), "w") as fh:
                fh.write(r.stdout)
            nums = sdiag_numbers(r.stdout)
            cycles = nums.get("Total cycles", 0)
            poked = 0
            if cycles != last_cycles:
                last_cycles, last_change = cycles, now
                if spec.get("poke") and pending_id:
                    pr = _run(["scontrol", "update", f"JobId={pending_id}", f"Comment=poke{pokes}"], env, check=False)
                    poked = 1 if pr.returncode == 0 else -1
                    pokes += 1
            elif spec.get("poke") and pending_id and now - last_change > 2.5 * interval and k % 10 == 0:
                # (no cycle for long: the first one, or one missed)
                pr = _run(["scontrol", "update", f"JobId={pending_id}", f"Comment=poke{pokes}"], env, check=False)
                poked = 2 if pr.returncode == 0 else -2
                pokes += 1
            row = [name, f"{case['max_s'] - (t_end_max - now):.1f}", f"{time.time():.1f}", cycles,
                   nums.get("Last cycle", -1), nums.get("Last depth cycle", -1),
                   nums.get("Last depth cycle (try sched)", -1), nums.get("Last queue length", -1),
                   f"{machine[0]:.2f}", f"{busy:.1f}", f"{ctld_pct:.1f}", poked, f"{bf_cpu:.2f}"]
            csv.write(",".join(str(x) for x in row) + "\n")
            csv.flush()
            rows.append(row)
            if now >= t_end_max or (now >= t_end_min and cycles >= min_cycles):
                break
    return {"name": case["name"], "samples": k, "cycles": last_cycles, "pokes": pokes, "folder": out}


def run(scratch: str) -> int:
    with open(os.path.join(scratch, "spec.json")) as fh:
        spec = json.load(fh)
    ns = _netns()
    if ns == spec.get("host_netns"):
        raise RuntimeError("refusing to start Slurm on the host's network: this process is not in a private "
                           "network namespace (run it through pbf.validate.scale)")
    with open(os.path.join(scratch, "netns"), "w") as fh:
        fh.write(ns)
    result = {"netns": ns, "errors": [], "cases": [], "stages": []}
    conf = spec["conf"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin:/usr/sbin:/sbin"), "HOME": "/root", "SLURM_CONF": conf,
           "LANG": "C"}
    for d in ("state", "log", "work"):
        os.makedirs(os.path.join(scratch, d), exist_ok=True)
    for name, _port, _gpus in spec["nodes"]:
        os.makedirs(os.path.join(scratch, "spool", name), exist_ok=True)
    daemons = Daemons(scratch)
    atexit.register(daemons.stop)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    t_start = time.time()
    part = spec["partition"]

    def save():
        result["wall_s"] = time.time() - t_start
        with open(os.path.join(scratch, "result.json.part"), "w") as fh:
            json.dump(result, fh, indent=1)
        os.replace(os.path.join(scratch, "result.json.part"), os.path.join(scratch, "result.json"))

    try:
        _setup_network()
        ctld, slurmd = spec["slurmctld"], spec["slurmd"]
        result["version"] = _run([ctld, "-V"], env).stdout.strip()
        ctld_proc = daemons.start("slurmctld", [ctld, "-D", "-f", conf], env)
        for name, _port, _gpus in spec["nodes"]:
            daemons.start(f"slurmd.{name}", [slurmd, "-D", "-f", conf, "-N", name], env)
            time.sleep(spec.get("slurmd_stagger_s", 0.02))
        names = [n[0] for n in spec["nodes"]]
        from .slurm_inside import _wait_idle
        result["idle_after_s"] = _wait_idle(daemons, names, env, spec.get("idle_timeout", 600))
        _log(f"{len(names)} nodes idle after {result['idle_after_s']:.1f} s")
        result["rss_after_start_kb"] = _rss_kb([p.pid for _, p in daemons.procs])
        _, errors, secs = _submit_all(spec["running"], env, spec.get("submit_workers", 4), "running jobs")
        result["running_submit"] = {"jobs": len(spec["running"]), "errors": errors[:20], "error_count": len(errors),
                                    "seconds": secs}
        t0 = time.monotonic()
        while True:
            daemons.check_running()
            counts = _queue_counts(env)
            if counts.get("RUNNING", 0) >= len(spec["running"]) - len(errors):
                break
            if time.monotonic() - t0 > spec.get("running_timeout", 600):
                raise RuntimeError(f"the running jobs are not all running after {spec.get('running_timeout', 600)} "
                                   f"s: {counts}")
            time.sleep(2)
        _log(f"{counts.get('RUNNING', 0)} jobs running ({secs:.0f} s to submit)")
        result["rss_with_running_kb"] = _rss_kb([p.pid for _, p in daemons.procs])
        save()
        pending_id = None
        for stage in spec["stages"]:
            _run(["scontrol", "update", f"PartitionName={part}", "State=DOWN"], env)
            ids, errors, secs = _submit_all(stage["jobs"], env, spec.get("submit_workers", 4), "pending jobs")
            if pending_id is None:
                pending_id = next((i for i in ids if i), None)
            _run(["scontrol", "update", f"PartitionName={part}", "State=UP"], env)
            counts = _queue_counts(env)
            st = {"depth": stage["depth"], "submitted": len(stage["jobs"]), "errors": errors[:20],
                  "error_count": len(errors), "seconds": secs, "queue": counts}
            result["stages"].append(st)
            _log(f"stage {stage['depth']:,}: {len(stage['jobs']):,} submitted in {secs:.0f} s "
                 f"({len(errors)} refused); queue {counts}")
            for case in stage["cases"]:
                set_scheduler_parameters(conf, case["scheduler_parameters"])
                _run(["scontrol", "reconfigure"], env, timeout=300)
                time.sleep(3)
                shown = _run(["scontrol", "show", "config"], env, timeout=120).stdout
                sp = next((ln.split("=", 1)[1].strip() for ln in shown.splitlines()
                           if ln.startswith("SchedulerParameters")), "")
                _run(["sdiag", "-r"], env, timeout=120)
                _log(f"case {case['name']}: SchedulerParameters {sp}; measuring")
                before = _queue_counts(env)
                rec = _measure(case, spec, env, ctld_proc.pid, pending_id, daemons)
                rec.update({"scheduler_parameters": sp, "queue_before": before, "queue_after": _queue_counts(env),
                            "rss_kb": _rss_kb([p.pid for _, p in daemons.procs])})
                result["cases"].append(rec)
                _log(f"case {case['name']}: {rec['cycles']} cycles in {rec['samples']} samples; "
                     f"queue after {rec['queue_after']}")
                save()
        tail = _run(["tail", "-n", "400", os.path.join(scratch, "log", "slurmctld.log")], env, check=False)
        result["slurmctld_log_tail"] = tail.stdout[-20000:]
    except BaseException as exc:       # recorded, then the daemons are stopped below
        result["errors"].append(f"{type(exc).__name__}: {exc}")
        _log(f"error: {type(exc).__name__}: {exc}")
    finally:
        # no scancel: tens of thousands of jobs take long to cancel, and the whole state is thrown away
        result["stopped"] = daemons.stop()
        ended, result["leftovers_alive"] = end_leftovers(ns)
        result["leftovers_ended"] = len(ended)
        save()
        gone = sum(1 for s in result["stopped"] if s["gone"])
        _log(f"daemons stopped: {gone} of {len(result['stopped'])} gone; {len(ended)} leftover processes "
             f"ended, {len(result['leftovers_alive'])} still alive")
    return 0 if not result["errors"] else 1


def _rss_kb(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: unshare -n -u python -m pbf.validate.scale_inside SCRATCH  (started by pbf.validate.scale)",
              file=sys.stderr)
        return 2
    return run(os.path.abspath(argv[0]))


if __name__ == "__main__":
    sys.exit(main())
