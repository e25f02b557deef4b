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
