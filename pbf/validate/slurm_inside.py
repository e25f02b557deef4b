"""The part of the harness that runs *inside* the private network and host-name namespaces
(``unshare -n -u python -m pbf.validate.slurm_inside SCRATCH``; started by :mod:`pbf.validate.slurm_run`,
never by hand on a host's network).

It names the host ``pbfctl``, brings up loopback and a veth pair with the private address 10.253.0.1
(with loopback alone Slurm's name lookups fail), starts ``slurmctld -D`` and one ``slurmd -D -N NAME``
per node as its own children, waits until every node is idle, creates the case's reservation (when
``spec.json`` has one; its dump kept as ``SCRATCH/reservation.txt``), submits the jobs of
``SCRATCH/spec.json`` with ``sbatch`` at their times, waits until none is left (or the timeout), takes
``sdiag``, cancels what is left, stops every daemon by its pid (SIGTERM, then SIGKILL) and checks that
each is gone, ends any process left in the namespace (job steps, sleeps) by pid, and writes ``SCRATCH/result.json``. The
daemons are stopped on every way out: normal end, error, SIGTERM/SIGINT/SIGHUP, and ``atexit``.
"""
from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import time

__all__ = ["main"]

HOST, ADDR = "pbfctl", "10.253.0.1"
#: the columns kept of ``sacctmgr show events`` (as pbf.validate.drain asks them)
EVENTS_FORMAT = "NodeName,TimeStart,TimeEnd,State,Reason"


def _log(msg):
    print(f"[slurm {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _run(args, env, timeout=60, check=True, uid=None):
    who = {} if uid is None else {"user": uid, "group": uid, "extra_groups": []}
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout, **who)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])} failed (exit {r.returncode}): {r.stderr.strip()[:500]}")
    return r


def _netns():
    return os.readlink("/proc/self/ns/net")


def end_leftovers(ns: str) -> tuple[list, list]:
    """End every process still in the namespace ``ns`` (a job step, its ``sleep``) by pid: SIGTERM, then
    SIGKILL a second later. Returns (the pids found, those still alive after)."""
    leftovers = _others_in_namespace(ns)
    for pid in leftovers:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    time.sleep(1 if leftovers else 0)
    for pid in leftovers:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    time.sleep(0.5 if leftovers else 0)
    return leftovers, [p for p in _others_in_namespace(ns) if _alive(p)]


def _others_in_namespace(ns):
    """Pids of processes in the network namespace ``ns`` other than this one (job steps, their sleeps)."""
    me, out = os.getpid(), []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            if os.readlink(f"/proc/{name}/ns/net") == ns:
                out.append(int(name))
        except OSError:
            continue
    return out


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return False


class Daemons:
    """The daemons this process started (``subprocess.Popen`` each), stopped by pid in reverse order."""

    def __init__(self, scratch: str):
        self.scratch = scratch
        self.procs = []          # (name, Popen)
        self.stopped = []
        self.done = False

    def start(self, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen:
        """Start daemon ``name`` (``args``, ``env``) in a session of its own, its output in ``log/NAME.out``."""
        out = open(os.path.join(self.scratch, "log", f"{name}.out"), "w")
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        out.close()
        self.procs.append((name, proc))
        _log(f"started {name} (pid {proc.pid})")
        return proc

    def check_running(self) -> None:
        """Raise RuntimeError naming the first daemon that has exited."""
        for name, proc in self.procs:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} (pid {proc.pid}) exited with {proc.returncode}; see "
                                   f"{self.scratch}/log/{name}.out and the Slurm logs beside it")

    def stop(self) -> list[dict]:
        """SIGTERM every daemon (node daemons first), wait up to 10 s in all, SIGKILL what is left, and check
        that each is gone."""
        if self.done:
            return self.stopped
        self.done = True
        how = {}
        for name, proc in reversed(self.procs):
            if proc.poll() is None:
                how[name] = "SIGTERM"
                try:
                    proc.send_signal(signal.SIGTERM)
                except OSError:
                    pass
            else:
                how[name] = "exited before"
        deadline = time.monotonic() + 10
        for name, proc in reversed(self.procs):
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                how[name] = "SIGKILL"
                proc.kill()
                proc.wait(timeout=10)
        for name, proc in reversed(self.procs):
            gone = proc.poll() is not None and not _alive(proc.pid)
            self.stopped.append({"name": name, "pid": proc.pid, "how": how[name], "gone": gone})
            if not gone:
                _log(f"{name} (pid {proc.pid}) is still there after SIGKILL")
        return self.stopped


def _sinfo_states(env):
    r = _run(["sinfo", "-h", "-N", "-o", "%N %T"], env, check=False, timeout=20)
    if r.returncode != 0:
        return None
    return dict(line.split()[:2] for line in r.stdout.splitlines() if len(line.split()) >= 2)


def _wait_idle(daemons, nodes, env, limit):
    t0 = time.monotonic()
    states = None
    while time.monotonic() - t0 < limit:
        daemons.check_running()
        states = _sinfo_states(env)
        if states and all(states.get(n, "").rstrip("*") == "idle" for n in nodes):
            return time.monotonic() - t0
        time.sleep(0.5)
    raise RuntimeError(f"the nodes are not all idle after {limit} s: {states}")


def _setup_network():
    socket.sethostname(HOST)
    for cmd in (["ip", "link", "set", "lo", "up"], ["ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"],
                ["ip", "addr", "add", f"{ADDR}/24", "dev", "v0"], ["ip", "link", "set", "v0", "up"],
                ["ip", "link", "set", "v1", "up"]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")


def _private_users(scratch, users, host_mntns, env):
    """Make the throwaway users ``users`` (name -> uid, each its own group of that number) visible to every
    process of this run, and only to them: copies of /etc/passwd and /etc/group with the users added,
    bound over the originals inside this process's private mount namespace (refused in the host's)."""
    if os.readlink("/proc/self/ns/mnt") == host_mntns:
        raise RuntimeError("refusing to add users: this process is not in a private mount namespace (the "
                           "harness runs it through 'unshare -m')")
    os.makedirs(os.path.join(scratch, "etc"), exist_ok=True)
    for name in ("passwd", "group"):
        with open(f"/etc/{name}") as fh:
            lines = fh.read().splitlines()
        taken = {line.split(":")[0] for line in lines} | {line.split(":")[2] for line in lines if line.count(":") >= 2}
        for user, uid in users.items():
            if user in taken or str(uid) in taken:
                raise RuntimeError(f"/etc/{name} already has {user!r} or id {uid}: cannot make the harness's users")
            lines.append(f"{user}:x:{uid}:{uid}:pbf harness:/nonexistent:/usr/sbin/nologin" if name == "passwd"
                         else f"{user}:x:{uid}:")
        path = os.path.join(scratch, "etc", name)
        with open(path, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        os.chmod(path, 0o644)
        _run(["mount", "--bind", path, f"/etc/{name}"], env, timeout=30)
    os.chmod(os.path.join(scratch, "work"), 0o1777)     # the jobs' --chdir
    _log(f"{len(users)} users made in this run's mount namespace: {', '.join(sorted(users))}")


def _wait_port(daemons, port, what, limit=60.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        daemons.check_running()
        try:
            with socket.create_connection(("127.0.0.1" if port == 3306 else ADDR, port), timeout=1):
                return time.monotonic() - t0
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{what} does not listen on port {port} after {limit:.0f} s")


def _start_accounting(daemons, acc, scratch, env):
    """MariaDB (a fresh data folder, no grant tables: nothing but this namespace reaches it), slurmdbd, then
    the cluster, one account per trace user and user root in each, so that fair share has associations."""
    data = os.path.join(scratch, "mysql")
    _run([acc["install_db"], "--no-defaults", f"--datadir={data}", "--user=root", "--skip-test-db",
          "--auth-root-authentication-method=normal"], env, timeout=120)
    daemons.start("mariadbd", [acc["mariadbd"], "--no-defaults", f"--datadir={data}", "--user=root",
                               f"--socket={scratch}/mysql.sock", f"--port={acc['mysql_port']}",
                               "--bind-address=127.0.0.1", "--skip-grant-tables", "--skip-name-resolve",
                               f"--pid-file={scratch}/mysql.pid", f"--log-error={scratch}/log/mariadb.log"], env)
    _wait_port(daemons, acc["mysql_port"], "mariadbd")
    daemons.start("slurmdbd", [acc["slurmdbd"], "-D"], env)
    _wait_port(daemons, acc["dbd_port"], "slurmdbd")
    sac = ["sacctmgr", "-i"]
    _run([*sac, "add", "cluster", acc["cluster"]], env, timeout=60)
    accounts = acc["accounts"]
    users = acc.get("users") or {}           # --as-users: the trace users' own, in their accounts, for root
    for k in range(0, len(accounts), 50):
        _run([*sac, "add", "account", ",".join(accounts[k:k + 50]), "fairshare=1"], env, timeout=60)
        if not users:
            _run([*sac, "add", "user", "root", f"account={','.join(accounts[k:k + 50])}", "fairshare=1"], env,
                 timeout=60)
    for user, account in sorted(users.items()):
        _run([*sac, "add", "user", user, f"account={account}", f"defaultaccount={account}", "fairshare=1"], env,
             timeout=60)
    for cmd in acc.get("setup", []):          # the case's limits (pbf.validate.limits), before slurmctld starts
        _run([*sac, *cmd], env, timeout=60)
        _log("sacctmgr " + " ".join(cmd))
    if acc.get("setup"):
        qos = _run(["sacctmgr", "-P", "show", "qos"], env, timeout=60).stdout
        with open(os.path.join(scratch, "qos.txt"), "w") as fh:
            fh.write(qos)
        _run(["sacctmgr", "-i", "dump", acc["cluster"], f"file={scratch}/assoc.cfg"], env, timeout=60)
    dump = _run(["sacctmgr", "-n", "-P", "show", "assoc", "format=account,user,fairshare"], env, timeout=60)
    return dump.stdout


def _reserve(resv, t0, scratch, env):
    """Create the case's reservation (``resv``: name, nodes, start and end in seconds from ``t0``, flags) for
    user root, and keep ``scontrol show reservation`` in ``SCRATCH/reservation.txt``; returns that text."""
    def at(s):
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t0 + s))
    _run(["scontrol", "create", "reservation", f"ReservationName={resv['name']}", "Users=root",
          f"StartTime={at(resv['start'])}", f"EndTime={at(resv['end'])}", f"Nodes={','.join(resv['nodes'])}",
          *([f"Flags={','.join(resv['flags'])}"] if resv['flags'] else [])], env, timeout=30)
    text = _run(["scontrol", "show", "reservation"], env, timeout=30).stdout
    with open(os.path.join(scratch, "reservation.txt"), "w") as fh:
        fh.write(text)
    _log(f"reservation {resv['name']} on {','.join(resv['nodes'])} from +{resv['start']} s to +{resv['end']} s")
    return text


def _note_reasons(queue, reasons, seen, polls, result):
    """Count one squeue poll's pending reasons (``queue``: :func:`_squeue`) into ``result``."""
    if queue is None:
        return
    for sid, (state, reason) in queue.items():
        if state in _PENDING:
            reason = reason if state == "PENDING" else f"{state} {reason}".strip()
            reasons[sid] = reason
            seen.setdefault(reason, set()).add(sid)
            polls[reason] = polls.get(reason, 0) + 1
            if reason.startswith(("QOS", "Assoc")):
                last_limit = result.setdefault("last_limit_reason", {})
                last_limit[sid] = reason
    counts = {}
    for reason in result.get("last_limit_reason", {}).values():
        counts[reason] = counts.get(reason, 0) + 1
    result["pending_reasons"] = {"jobs": {r: len(s) for r, s in sorted(seen.items())},
                                 "last_limit": dict(sorted(counts.items())),
                                 "job_polls": dict(sorted(polls.items())),
                                 "from": "the first submission" if result.get("reasons_from_start")
                                 else "the last submission"}


def _next_action(actions, t0):
    """The epoch second of the next timed action (far ahead when none is left)."""
    return t0 + actions[0]["at"] if actions else time.time() + 3600


def _due_actions(actions, t0, env, result):
    """Run (and drop from ``actions``) the timed ``scontrol`` commands whose time has come; each is kept in
    ``result["actions"]`` with the second of the run it ran at and its outcome."""
    while actions and time.time() >= t0 + actions[0]["at"]:
        a = actions.pop(0)
        at = time.time() - t0
        r = _run(a["args"], env, check=False, timeout=30)
        done = {"what": a["what"], "planned": a["at"], "at": at, "exit": r.returncode, "stderr": r.stderr.strip()[:300]}
        result["actions"].append(done)
        if r.returncode != 0:
            result["errors"].append(f"{a['what']} at +{at:.1f} s failed: {done['stderr']}")
        _log(f"{a['what']} at +{at:.1f} s" + ("" if r.returncode == 0 else f" failed: {done['stderr']}"))


#: squeue states of a job that waits: PENDING, and RESV_DEL_HOLD (Slurm 22.05 holds a job still pending in a
#: reservation that has ended: JOB_RESV_DEL_HOLD, shown as that state; it never starts)
_PENDING = ("PENDING", "RESV_DEL_HOLD")


def _squeue(env):
    """{job id: (state, reason)} of the queue, or None when squeue fails."""
    r = _run(["squeue", "-h", "-o", "%i %T %r"], env, check=False, timeout=30)
    if r.returncode != 0:
        return None
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2:
            out[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    return out


def _squeue_ids(env):
    r = _run(["squeue", "-h", "-o", "%i"], env, check=False, timeout=30)
    if r.returncode != 0:
        return None
    return [x.strip() for x in r.stdout.split() if x.strip()]


def run(scratch: str) -> int:
    """Run the workload of ``SCRATCH/spec.json`` through the daemons (module docstring); the exit status."""
    with open(os.path.join(scratch, "spec.json")) as fh:
        spec = json.load(fh)
    ns = _netns()
    if ns == spec.get("host_netns"):
        raise RuntimeError("refusing to start Slurm on the host's network: this process is not in a private "
                           "network namespace (run it through pbf.validate.slurm_run)")
    with open(os.path.join(scratch, "netns"), "w") as fh:
        fh.write(ns)
    result = {"netns": ns, "errors": [], "submitted": {}, "finished": False, "timed_out": False}
    conf = spec["conf"]
    env = {**os.environ, "SLURM_CONF": conf}
    for d in ("state", "log", "work"):
        os.makedirs(os.path.join(scratch, d), exist_ok=True)
    for name, _port, _gpus in spec["nodes"]:
        os.makedirs(os.path.join(scratch, "spool", name), exist_ok=True)
    daemons = Daemons(scratch)
    atexit.register(daemons.stop)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    t_start = time.time()
    try:
        _setup_network()
        uids = spec.get("users") or {}
        if uids:
            _private_users(scratch, uids, spec.get("host_mntns"), env)
        ctld, slurmd = spec.get("slurmctld", "/usr/sbin/slurmctld"), spec.get("slurmd", "/usr/sbin/slurmd")
        result["version"] = _run([ctld, "-V"], env).stdout.strip()
        if spec.get("accounting"):
            result["associations"] = _start_accounting(daemons, spec["accounting"], scratch, env)
            _log(f"slurmdbd up; {len(spec['accounting']['accounts'])} accounts made")
        daemons.start("slurmctld", [ctld, "-D", "-f", conf], env)
        for name, _port, _gpus in spec["nodes"]:
            daemons.start(f"slurmd.{name}", [slurmd, "-D", "-f", conf, "-N", name], env)
        names = [n[0] for n in spec["nodes"]]
        result["idle_after_s"] = _wait_idle(daemons, names, env, spec.get("idle_timeout", 90))
        result["nodes_text"] = _run(["scontrol", "show", "nodes"], env).stdout
        _log(f"{len(names)} nodes idle after {result['idle_after_s']:.1f} s; submitting {len(spec['jobs'])} jobs")
        t0 = math_ceil(time.time()) + (2 if spec.get("reservation") else 1)
        if spec.get("reservation"):
            result["reservation_text"] = _reserve(spec["reservation"], t0, scratch, env)
        result["t0"] = t0
        result["reasons_from_start"] = bool(spec.get("reasons_from_start"))
        result["t0_local"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t0))
        actions = sorted(spec.get("actions", []), key=lambda a: a["at"])
        result["actions"] = []
        reasons, seen, polls = {}, {}, {}     # pending reasons: each job's last, the jobs that had each, job-polls
        early, last_poll = spec.get("reasons_from_start"), 0.0
        for job in spec["jobs"]:
            due = t0 + job["submit"]
            while True:
                _due_actions(actions, t0, env, result)
                if early and due - time.time() > 0.3 and time.time() - last_poll >= 1.0:
                    last_poll = time.time()      # a limits case: squeue's reasons while jobs are submitted too
                    _note_reasons(_squeue(env), reasons, seen, polls, result)
                left = due - time.time()
                if left <= 0:
                    break
                time.sleep(max(0.0, min(left, 1.0, _next_action(actions, t0) - time.time())))
                daemons.check_running()
            at = time.time()
            r = _run(["sbatch", *job["args"]], env, check=False, timeout=60, uid=uids.get(job.get("user")))
            entry = {"planned": job["submit"], "at": at - t0, "slurm_id": None, "error": None}
            if r.returncode == 0:
                entry["slurm_id"] = int(r.stdout.strip().split(";")[0])
            else:
                entry["error"] = r.stderr.strip()
            result["submitted"][str(job["id"])] = entry
        _log("all jobs submitted; waiting for them to end")
        deadline = t0 + spec["timeout"]
        # jobs waiting for the reservation's end are not stuck
        held_until = t0 + max([spec["reservation"]["end"] + 1 if spec.get("reservation") else 0]
                              + [a["at"] + 1 for a in actions])
        last, same_since = None, time.time()
        while True:
            daemons.check_running()
            _due_actions(actions, t0, env, result)
            queue = _squeue(env)
            if queue == {} and not actions:
                result["finished"] = True
                break
            if time.time() > deadline:
                result["timed_out"] = True
                _log(f"timeout: {len(queue or {})} jobs still queued or running")
                break
            if queue is not None:
                _note_reasons(queue, reasons, seen, polls, result)
                if queue != last:
                    if last is None or len(queue) != len(last):
                        _log(f"{len(queue)} jobs queued or running")
                    last, same_since = queue, time.time()
                elif (all(state in _PENDING for state, _ in queue.values())
                      and time.time() - same_since > spec.get("stuck_after", 15) and time.time() > held_until):
                    # nothing runs and nothing has changed: what is left can never start
                    never = sorted(queue, key=int)
                    result["never_started"] = {sid: reasons.get(sid, "") for sid in never}
                    why = ", ".join(sorted({reasons.get(s, "") for s in never}))
                    _log(f"{len(never)} jobs can never start here ({why}); cancelling them")
                    _run(["scancel", *never], env, check=False)
                    same_since = time.time()
            time.sleep(max(0.0, min(1.0, _next_action(actions, t0) - time.time())))
        result["sdiag"] = _run(["sdiag"], env, check=False).stdout
        if spec.get("accounting"):
            time.sleep(2)          # slurmctld hands node events to slurmdbd through its agent queue
            result["events_text"] = _run(["sacctmgr", "-P", "show", "events", f"format={EVENTS_FORMAT}",
                                          f"start={time.strftime('%Y-%m-%dT%H:%M:%S', time.localtime(t_start - 60))}",
                                          "end=now"], env, check=False, timeout=60).stdout
            with open(os.path.join(scratch, "events.txt"), "w") as fh:
                fh.write(result["events_text"])
    except BaseException as exc:       # recorded, then the daemons are stopped below
        result["errors"].append(f"{type(exc).__name__}: {exc}")
        _log(f"error: {type(exc).__name__}: {exc}")
    finally:
        try:
            if daemons.procs and daemons.procs[0][1].poll() is None:
                if spec.get("users"):
                    left = _squeue_ids(env)
                    if left:
                        _run(["scancel", *left], env, check=False, timeout=30)
                else:
                    _run(["scancel", "--user=root"], env, check=False, timeout=30)
                for _ in range(10):
                    if not _squeue_ids(env):
                        break
                    time.sleep(1)
        except BaseException as exc:     # noqa: BLE001 - the daemons are stopped whatever happened
            result["errors"].append(f"cancelling jobs: {exc}")
        result["stopped"] = daemons.stop()
        result["leftovers_ended"], result["leftovers_alive"] = end_leftovers(ns)
        result["wall_s"] = time.time() - t_start
        with open(os.path.join(scratch, "result.json.part"), "w") as fh:
            json.dump(result, fh, indent=1)
        os.replace(os.path.join(scratch, "result.json.part"), os.path.join(scratch, "result.json"))
        _log(f"daemons stopped: {', '.join(s['name'] + ' ' + s['how'] for s in result['stopped'])}")
    return 0 if not result["errors"] else 1


def math_ceil(x: float) -> int:
    """The least whole number >= ``x``."""
    i = int(x)
    return i if i == x else i + 1


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: unshare -n -u python -m pbf.validate.slurm_inside SCRATCH  (started by pbf validate slurm)",
              file=sys.stderr)
        return 2
    return run(os.path.abspath(argv[0]))


if __name__ == "__main__":
    sys.exit(main())
