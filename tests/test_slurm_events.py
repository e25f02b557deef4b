"""A site's node drains and downs from its own ``sacctmgr show events`` dump (pbf.slurm_events,
``--slurm-events``): read onto the trace's clock, replayed as outages, bad lines refused with file, line
and column."""
import csv
import json

import pytest

from pbf import cli
from pbf.errors import ConfigError
from pbf.slurm_events import read_events

SITE = ("SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nSchedulerParameters=bf_interval=1\n"
        "NodeName=n[1-2] CPUs=4 RealMemory=8000\nNodeName=x1 CPUs=4 RealMemory=8000\n"
        "PartitionName=p Nodes=n[1-2] Default=YES\nPartitionName=q Nodes=x1\n")
HEADER = "JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|ReqTRES|Constraints|State|User|Partition\n"
EVENTS = ("Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n"
          "site||2024-01-01T00:00:00|Unknown|||root\n"                                  # a cluster event
          "site|n1|2024-01-01T00:10:00|2024-01-01T01:00:00|IDLE+DRAIN|disk|root\n"
          "site|x1|2024-01-01T00:00:00|2024-01-01T02:00:00|DOWN*|not responding|slurm\n"   # other partition
          "site|n2|2024-01-01T00:30:00|2024-01-01T00:40:00|MAINT|bios|root\n")


def _files(tmp_path, events=EVENTS):
    (tmp_path / "slurm.conf").write_text(SITE)
    # one-core jobs of 5 minutes every minute from 00:00 to 01:30
    rows = [f"{i}|2024-01-01T{(i - 1) // 60:02d}:{(i - 1) % 60:02d}:00|2024-01-01T00:00:00|300|10|1||100Mc|cpu=1||"
            f"COMPLETED|u1|p" for i in range(1, 91)]
    (tmp_path / "jobs.sacct").write_text(HEADER + "\n".join(rows) + "\n")
    (tmp_path / "events.txt").write_text(events)
    return tmp_path / "slurm.conf", tmp_path / "jobs.sacct", tmp_path / "events.txt"


def test_events_become_outages_on_the_traces_clock(tmp_path):
    _, _, ev = _files(tmp_path)
    origin = 1704067200                                   # 2024-01-01T00:00:00 UTC
    out, counts = read_events(ev, origin, ["n1", "n2"], {"n1", "n2", "x1"})
    assert out == [(600, (0,), "drain", 3600)]
    assert counts == {"events": 4, "outages": 1, "cluster_events": 1, "other_partitions": 1,
                      "not_modelled_states": {"MAINT": 1}}


def test_a_drained_node_takes_no_job_while_drained(tmp_path):
    conf, jobs, ev = _files(tmp_path)
    out = tmp_path / "out"
    assert cli.main(["replay", str(jobs), "--slurm-conf", str(conf), "--slurm-events", str(ev), "--record-nodes",
                     "--quiet", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out / "jobs.csv")))
    on_n1 = [int(r["start"]) for r in rows if r["nodes"] == "n1"]
    assert on_n1 and not any(600 <= s < 3600 for s in on_n1)       # drained from 00:10 to 01:00
    assert any(s >= 3600 for s in on_n1) and any(s < 600 for s in on_n1)
    s = json.loads((out / "summary.json").read_text())
    assert s["config"]["failures"]["format"] == "sacctmgr show events"


@pytest.mark.parametrize("line, said", [
    ("site|zz9|2024-01-01T00:10:00|2024-01-01T01:00:00|DRAIN|x|root", "NodeName 'zz9': a node the slurm.conf"),
    ("site|n1|yesterday|2024-01-01T01:00:00|DRAIN|x|root", "timestart 'yesterday': expected a time"),
    ("site|n1|2024-01-01T02:00:00|2024-01-01T01:00:00|DOWN|x|root", "TimeEnd 2024-01-01T01:00:00 is before"),
    ("site|n1|2024-01-01T02:00:00", "3 columns where the header names 7"),
])
def test_bad_event_lines_are_refused_naming_file_and_line(tmp_path, line, said):
    _, _, ev = _files(tmp_path, "Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n" + line + "\n")
    with pytest.raises(ConfigError, match="line 2: ") as err:
        read_events(ev, 0, ["n1", "n2"], {"n1", "n2", "x1"})
    assert said in str(err.value) and str(ev) in str(err.value)
    (tmp_path / "nohead.txt").write_text("site|n1|x\n")
    with pytest.raises(ConfigError, match="the header has no nodename, timestart, timeend, state column"):
        read_events(tmp_path / "nohead.txt", 0, ["n1"], {"n1"})


def test_events_go_with_slurm_conf(tmp_path, capsys):
    conf, jobs, ev = _files(tmp_path)
    assert cli.main(["replay", str(jobs), "--slurm-events", str(ev), "--quiet"]) != 0
    assert "--slurm-events names the site's nodes: it needs --slurm-conf" in capsys.readouterr().err
    assert cli.main(["replay", str(jobs), "--slurm-conf", str(conf), "--slurm-events", str(ev), "--mtbf", "10",
                     "--quiet"]) != 0
    assert "not with --failures or --mtbf" in capsys.readouterr().err


# ------------------------------------------------- a drain's request time, from where the trace's jobs ran

NODES4 = ["n1", "n2", "n3", "n4"]


def test_a_busy_nodes_drain_moves_to_the_second_after_its_last_start():
    from pbf.slurm_events import infer_drain_starts
    events = [(100, (0, 1, 2, 3), "drain", 200), (100, (2,), "fail", 150)]
    jobs = {"n1": [(10, 40), (60, 100)],          # busy to the event: its last start 60, so asked from 61
            "n2": [(10, 50)],                      # empty from 50: the event (100) is the request itself
            "n4": [(30, 101), (99, 100)]}          # busy; last start 99 -> 100 (no earlier than the event)
    out, moved = infer_drain_starts(events, jobs, NODES4)
    assert out == [(61, (0,), "drain", 200), (100, (1, 2, 3), "drain", 200), (100, (2,), "fail", 150)]
    assert moved == [{"node": "n1", "recorded_s": 100, "inferred_s": 61, "by_s": 39, "last_start_s": 60}]


def test_a_drain_is_not_moved_across_an_earlier_outage_of_its_node():
    from pbf.slurm_events import infer_drain_starts
    events = [(10, (0,), "fail", 50), (100, (0,), "drain", None), (100, (1,), "drain", None)]
    # n1: its only start is before the failure ended (50): the trace says nothing since; n2: ends at 99
    # (within a second of the event: busy), starts at 70 and 80
    jobs = {"n1": [(5, 100)], "n2": [(70, 90), (80, 99)]}
    out, moved = infer_drain_starts(events, jobs, NODES4)
    assert out == [(10, (0,), "fail", 50), (100, (0,), "drain", None), (81, (1,), "drain", None)]
    assert [m["node"] for m in moved] == ["n2"]


def _trace(tmp_path, rows, head="JobID|Start|End|NodeList|State"):
    path = tmp_path / "trace.sacct"
    path.write_text(head + "\n" + "\n".join(rows) + "\n")
    return path


def test_the_trace_of_node_lists_is_read_on_the_events_clock(tmp_path):
    from pbf.slurm_events import read_node_jobs
    path = _trace(tmp_path, ["1|2024-01-01T00:01:00|2024-01-01T00:02:00|n[1-2]|COMPLETED",
                             "1.batch|2024-01-01T00:01:00|2024-01-01T00:02:00|n1|COMPLETED",      # a step
                             "2|Unknown|Unknown|None assigned|PENDING",                           # never ran
                             "3|2024-01-01T00:03:00|Unknown|n2,x1|RUNNING"])
    jobs, read = read_node_jobs(path, 1704067200, {"n1", "n2"})
    assert jobs == {"n1": [(60, 120)], "n2": [(60, 120), (180, None)]} and read == 2


@pytest.mark.parametrize("rows, head, said", [
    (["1|yesterday|2024-01-01T00:02:00|n1|X"], None, "line 2: Start 'yesterday': expected a time"),
    (["1|2024-01-01T00:01:00|2024-01-01T25:00:00|n1|X"], None, "line 2: End '2024-01-01T25:00:00': expected"),
    (["1|2024-01-01T00:01:00|2024-01-01T00:02:00|n[1-|X"], None, "line 2: NodeList 'n[1-'"),
    (["1|2024-01-01T00:01:00"], None, "line 2: 2 columns where the header names 5"),
    (["1|2024-01-01T00:01:00|x"], "JobID|Start|End", "line 1: the header has no nodelist column"),
])
def test_a_bad_trace_line_is_refused_naming_file_line_field_and_value(tmp_path, rows, head, said):
    from pbf.slurm_events import read_node_jobs
    path = _trace(tmp_path, rows, *([head] if head else []))
    with pytest.raises(ConfigError) as err:
        read_node_jobs(path, 0, {"n1"})
    assert said in str(err.value) and str(path) in str(err.value)


def test_slurm_events_with_a_trace_replay_the_drain_from_its_inferred_request(tmp_path):
    from pbf.cluster import Cluster
    from pbf.slurm_events import SlurmEvents
    _, _, ev = _files(tmp_path)                    # n1 drained from 00:10 to 01:00 (x1, n2: not drains)
    trace = _trace(tmp_path, ["7|2024-01-01T00:04:00|2024-01-01T00:10:00|n1|COMPLETED",
                              "8|2024-01-01T00:06:30|2024-01-01T00:09:00|n1|COMPLETED"])
    cluster = Cluster(8, (("n1", 4), ("n2", 4)))
    inferred = SlurmEvents(path=str(ev), origin=1704067200, known=("n1", "n2", "x1"), trace=str(trace))
    got = inferred.outages(8, 0, 0, cluster=cluster)
    assert [(o.time, o.kind, o.until) for o in got] == [(391, "drain", 3600)]
    assert inferred.counts["drains_moved"] == [{"node": "n1", "recorded_s": 600, "inferred_s": 391, "by_s": 209,
                                                "last_start_s": 390}]
    assert inferred.as_dict()["drain_start"] == "inferred" and inferred.as_dict()["read"]["trace_jobs"] == 2
    kept = SlurmEvents(path=str(ev), origin=1704067200, known=("n1", "n2", "x1"), trace=str(trace),
                       drain_start="recorded")
    assert [o.time for o in kept.outages(8, 0, 0, cluster=cluster)] == [600]
    assert kept.counts["drain_start"] == "recorded"
    with pytest.raises(ConfigError, match="drain_start 'asked': expected one of inferred, recorded"):
        SlurmEvents(path=str(ev), drain_start="asked")


def test_pbf_replay_moves_a_drain_as_its_sacct_trace_tells(tmp_path, capsys):
    conf, jobs, ev = _files(tmp_path)
    # the trace again with where and when each job ran: job 6 (00:05-00:10) on n1 up to the drain's event
    head = HEADER.rstrip("\n") + "|NodeList|End\n"
    rows = [line + "|n2|2024-01-01T00:05:00" for line in jobs.read_text().splitlines()[1:]]
    rows[5] = rows[5].replace("|2024-01-01T00:00:00|300|", "|2024-01-01T00:05:00|300|").replace(
        "|n2|2024-01-01T00:05:00", "|n1|2024-01-01T00:10:00")
    (tmp_path / "where.sacct").write_text(head + "\n".join(rows) + "\n")
    out = tmp_path / "out"
    assert cli.main(["replay", str(tmp_path / "where.sacct"), "--slurm-conf", str(conf), "--slurm-events", str(ev),
                     "--record-nodes", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert ("drains       1 moved earlier than the events dump says, to the second after the node's last job "
            "start in the trace (--drain-start recorded: the dump's times): n1 by 299 s") in text
    f = json.loads((out / "summary.json").read_text())["config"]["failures"]
    assert f["drain_start"] == "inferred" and f["read"]["drains_moved"][0]["inferred_s"] == 301
    assert cli.main(["replay", str(tmp_path / "where.sacct"), "--slurm-conf", str(conf), "--slurm-events", str(ev),
                     "--drain-start", "recorded", "--out", str(tmp_path / "rec")]) == 0
    assert "drains       " not in capsys.readouterr().out
    # a trace without node lists: the dump's times, said in summary.json
    assert cli.main(["replay", str(jobs), "--slurm-conf", str(conf), "--slurm-events", str(ev), "--quiet",
                     "--out", str(tmp_path / "plain")]) == 0
    plain = json.loads((tmp_path / "plain" / "summary.json").read_text())["config"]["failures"]["read"]
    assert plain["drain_start"].startswith("recorded (the trace has no NodeList")
