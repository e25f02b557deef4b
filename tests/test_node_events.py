"""A site's node events (``sacctmgr show events``) as a replay's outages (pbf.workload.node_events):
DOWN/FAIL states fail nodes, DRAIN states drain them, until TimeEnd (Unknown: to the end); what is
read and not modelled is counted; errors name the file, line, field and value."""
import dataclasses

import pytest

import pbf
from pbf.cluster import Cluster, Node
from pbf.errors import ConfigError, TraceFormatError
from pbf.outages import NodeLayout
from pbf.workload.node_events import looks_like_events, read_node_events
from pbf.workload.sacct import read_sacct

HEAD = "Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n"


def _layout():
    return NodeLayout((4, 4, 4), ("n1", "n2", "n3"))


def test_states_become_failures_and_drains_on_the_trace_clock(tmp_path):
    dump = tmp_path / "events.txt"
    dump.write_text(HEAD + "c|n1|2024-01-01T01:00:00|2024-01-01T03:00:00|DOWN*|Not responding|slurm\n"
                    "c|n[2-3]|2024-01-01T02:00:00|Unknown|IDLE+DRAIN|maintenance|root\n"
                    "c||2024-01-01T00:00:00|Unknown|| cluster cpu count changed|\n"
                    "c|n1|2024-01-01T04:00:00|2024-01-01T05:00:00|MAINT|bios|root\n"
                    "c|x9|2024-01-01T04:00:00|2024-01-01T05:00:00|DOWN|gone|root\n"
                    "c|n1|2023-12-31T00:00:00|2023-12-31T01:00:00|DOWN|old|root\n")
    assert looks_like_events(dump)
    origin = 1704067200                      # 2024-01-01T00:00:00
    report = {}
    out = read_node_events(dump, _layout(), origin, report)
    assert [(o.time, o.units, o.kind, o.until) for o in out] == [
        (3600, (0, 1, 2, 3), "fail", 3 * 3600), (7200, tuple(range(4, 12)), "drain", None)]
    assert report["outages"] == 2
    assert report["not_modelled"] == {"cluster events": 1, "state MAINT": 1,
                                      "events on nodes the cluster does not have": 1,
                                      "ended before the trace began": 1}


@pytest.mark.parametrize("row, field", [
    ("c|n1|2024-13-01T00:00:00|Unknown|DOWN|r|u", "TimeStart"),
    ("c|n1|2024-01-01T02:00:00|2024-01-01T01:00:00|DOWN|r|u", "TimeEnd"),
    ("c|n[1-|2024-01-01T02:00:00|Unknown|DOWN|r|u", "NodeName"),
    ("c|n1|2024-01-01T02:00:00", None)])
def test_bad_rows_are_named(tmp_path, row, field):
    dump = tmp_path / "events.txt"
    dump.write_text(HEAD + row + "\n")
    with pytest.raises(TraceFormatError) as exc:
        read_node_events(dump, _layout(), 1704067200)
    assert "line 2" in str(exc.value) and (field is None or field in str(exc.value))


def test_a_replay_of_a_sacct_dump_with_the_sites_events(tmp_path):
    jobs = tmp_path / "jobs.sacct"
    jobs.write_text("JobID|Submit|Start|End|Elapsed|Timelimit|ReqCPUS|ReqMem|State|User|Partition\n"
                    + "".join(f"{i}|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T02:00:00|02:00:00|02:00:00|4|"
                              f"1G|COMPLETED|u|p\n" for i in range(1, 4)))
    events = tmp_path / "events.txt"
    events.write_text(HEAD + "c|n2|2024-01-01T00:30:00|2024-01-01T10:00:00|DOWN|disk|root\n"
                      "c|n3|2024-01-01T00:00:00|Unknown|MAINT|bios|root\n")
    cluster = Cluster.of_nodes([Node(f"n{i}", 4, 8000) for i in (1, 2, 3)], name="c")
    table = read_sacct(str(jobs))
    got = pbf.replay(table, pbf.ReplayConfig(cluster=cluster, failures=pbf.Failures(path=str(events))))
    f = got.summary["failures"]
    assert f["events"]["fail"] == 1 and f["requeued"] == 1
    assert f["events_read"]["not_modelled"] == {"state MAINT": 1}
    # the job on n2 went back to the queue at 00:30 and ran again after n1's or n3's job ended
    assert sorted(got.jobs["start"].tolist()) == [0, 0, 7200]
    # a failure CSV still reads as before; an events dump needs the trace's start
    with pytest.raises(ConfigError, match="UnixStartTime"):
        pbf.Failures(path=str(events)).outages(12, 0, 1, cluster=cluster)
    assert dataclasses.replace(pbf.Failures(path=str(events))).path == str(events)
