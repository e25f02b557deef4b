"""A site's scheduler read from its slurm.conf (pbf.slurm_settings): SchedulerParameters, SchedulerType
and the Priority* lines mapped to pbf's replay settings, Slurm 22.05's defaults where the file is
silent, every setting pbf does not model listed, bad values named by file, line, key and value; and
``pbf replay --slurm-conf``, where explicit flags win."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbf import cli
from pbf.errors import ConfigError
from pbf.slurm_settings import ALWAYS_UNMODELLED, SLURM_DEFAULTS, slurm_duration, slurm_settings

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
SWF = DATA / "small4_jobs.sacct"


def _conf(tmp_path, text, name="site.conf"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_scheduler_parameters_map_to_pbf_settings(tmp_path):
    site = _conf(tmp_path, "SchedulerType=sched/backfill\n"
                           "SchedulerParameters=bf_interval=5,bf_window=120,bf_resolution=30,bf_max_job_test=50,"
                           "default_queue_depth=20,sched_interval=15,batch_sched_delay=1,bf_yield_interval=3000000,"
                           "bf_max_time=10,max_sched_time=1,bf_continue,bf_max_job_user=4,bf_max_job_part=9,"
                           "bf_max_job_start=7,bf_busy_nodes\n"
                           "NodeName=n[1-2] CPUs=4 RealMemory=8000\nPartitionName=p Nodes=ALL Default=YES\n")
    s = slurm_settings(site)
    c = s.config
    assert (c.bf_interval, c.bf_max_time, c.trigger, c.clock, c.predictor) == (5, 10, "interval", "slurm-sim",
                                                                              "requested")
    assert (c.backfill.window, c.backfill.resolution, c.backfill.max_job_test, c.backfill.reservations,
            c.backfill.enabled, c.backfill.order) == (7200, 30, 50, None, True, "queue")
    sim = c.slurm_sim
    assert (sim.default_queue_depth, sim.sched_interval, sim.batch_sched_delay, sim.bf_yield_interval,
            sim.max_sched_time) == (20, 15, 1, 3.0, 1.0)
    assert c.priority == "fcfs" and c.mem_from == "requested"
    said = " | ".join(s.unmodelled)
    for needle in ("SchedulerParameters bf_continue (line 2): not modelled by pbf: pbf ends a backfill cycle",
                   "SchedulerParameters bf_busy_nodes (line 2): not modelled by pbf: Slurm's select plugin prefers"):
        assert needle in said, needle
    # Slurm's own backfill limits are modelled (pbf.bf_limits)
    assert (c.backfill.max_job_user, c.backfill.max_job_part, c.backfill.max_job_start) == (4, 9, 7)
    assert s.mapped["SchedulerParameters bf_max_job_user"] == "4 (site) -> SlurmBackfill.max_job_user"
    assert "bf_max_job_user" not in said
    assert s.mapped["SchedulerParameters bf_max_job_test"] == "50 (site)"
    assert s.cluster.units == 8 and s.partition == "p" and s.path == str(site)


def test_max_job_bf_is_read_as_bf_max_job_test_and_said(tmp_path):
    s = slurm_settings(_conf(tmp_path, "SchedulerParameters=max_job_bf=50\nNodeName=n1 CPUs=4\n"))
    assert s.config.backfill.max_job_test == 50
    assert any("max_job_bf=50 (line 1): read as bf_max_job_test; Slurm 22.05" in u for u in s.unmodelled)


def test_settings_a_site_leaves_out_take_slurm_2205_defaults(tmp_path):
    s = slurm_settings(_conf(tmp_path, "SelectType=select/cons_tres\nNodeName=n1 CPUs=4\n"))
    c = s.config
    assert (c.bf_interval, c.bf_max_time, c.backfill.window, c.backfill.resolution, c.backfill.max_job_test) == \
        (30, None, 86400, 60, 500)
    assert (c.slurm_sim.default_queue_depth, c.slurm_sim.sched_interval, c.slurm_sim.batch_sched_delay,
            c.slurm_sim.max_sched_time, c.slurm_sim.bf_yield_interval) == (100, 60, 3, 2.0, 2.0)
    assert c.priority == "fcfs" and c.backfill.enabled and c.mem_from == "requested"     # CR_Core_Memory
    assert "Slurm 22.05 default" in s.mapped["SchedulerParameters bf_window"]
    assert "(Slurm default)" in s.mapped["SchedulerType"] and "(Slurm default)" in s.mapped["PriorityType"]
    assert SLURM_DEFAULTS["bf_max_job_test"] == 500
    assert list(ALWAYS_UNMODELLED) == s.unmodelled[-len(ALWAYS_UNMODELLED):]
    # a budget shorter than the yield interval: the interval is cut (pbf refuses a longer one), and said
    s1 = slurm_settings(_conf(tmp_path, "SchedulerParameters=bf_interval=1\nNodeName=n1 CPUs=4\n", "b.conf"))
    assert s1.config.slurm_sim.bf_yield_interval == 1.0
    assert "cut to the cycle's budget 1 s" in s1.mapped["SchedulerParameters bf_yield_interval"]
    # MessageTimeout sets max_sched_time's default
    s2 = slurm_settings(_conf(tmp_path, "MessageTimeout=2\nNodeName=n1 CPUs=4\n", "c.conf"))
    assert s2.config.slurm_sim.max_sched_time == 1.0


def test_no_backfill_from_sched_builtin_or_bf_interval_minus_one(tmp_path):
    for i, text in enumerate(("SchedulerType=sched/builtin\n", "SchedulerParameters=bf_interval=-1\n")):
        s = slurm_settings(_conf(tmp_path, text + "NodeName=n1 CPUs=4\n", f"{i}.conf"))
        assert s.config.backfill.enabled is False and "no backfill" in s.mapped["SchedulerType"]


def test_multifactor_priority_maps_weights_and_ages(tmp_path):
    site = _conf(tmp_path, "PriorityType=priority/multifactor\nPriorityWeightAge=1000\nPriorityWeightJobSize=500\n"
                           "PriorityWeightFairshare=2000\nPriorityMaxAge=1-0\nPriorityDecayHalfLife=2:00:00\n"
                           "PriorityCalcPeriod=2\nPriorityFavorSmall=YES\nPriorityWeightTRES=CPU=100\n"
                           "PriorityFlags=SMALL_RELATIVE_TO_TIME\nNodeName=n1 CPUs=4\n")
    s = slurm_settings(site)
    mf = s.config.priority
    assert (mf.weight_age, mf.weight_job_size, mf.weight_fairshare, mf.weight_partition, mf.weight_qos) == \
        (1000, 500, 2000, 0, 0)
    assert (mf.max_age, mf.half_life, mf.calc_period, mf.favor_small) == (86400, 7200, 120, True)
    said = " | ".join(s.unmodelled)
    assert mf.fairshare == "fair-tree"
    for needle in ("priorityweighttres=CPU=100 (line 9)", "PriorityWeightFairshare: Fair Tree over the trace's users"):
        assert needle in said, needle
    assert "SMALL_RELATIVE_TO_TIME" not in said and "PriorityWeightJobSize" not in said
    assert mf.size_relative and (mf.size_nodes, mf.size_cpus) == (0, 0)
    # the job-size factor counts every node of the file, not only the partition's
    part = slurm_settings(_conf(tmp_path, "PriorityType=priority/multifactor\nPriorityWeightJobSize=10\n"
                                          "NodeName=a[1-3] CPUs=4\nNodeName=b1 CPUs=16\n"
                                          "PartitionName=p Nodes=a[1-3] Default=YES\n", "p.conf"))
    assert (part.config.priority.size_nodes, part.config.priority.size_cpus) == (4, 28)
    classic = slurm_settings(_conf(tmp_path, "PriorityType=priority/multifactor\nPriorityFlags=NO_FAIR_TREE\n"
                                          "PriorityWeightFairshare=10\nFairShareDampeningFactor=4\n"
                                          "NodeName=n1 CPUs=4\n", "c.conf"))
    assert classic.config.priority.fairshare == "classic" and classic.config.priority.dampening == 4
    with pytest.raises(ConfigError, match="line 2: FairShareDampeningFactor"):
        slurm_settings(_conf(tmp_path, "PriorityType=priority/multifactor\nFairShareDampeningFactor=0\n"
                                       "NodeName=n1 CPUs=4\n", "d0.conf"))
    assert "classic fair share" in " | ".join(classic.unmodelled)
    # unset: Slurm's defaults (7 days, 5 minutes, weights 0)
    d = slurm_settings(_conf(tmp_path, "PriorityType=priority/multifactor\nNodeName=n1 CPUs=4\n", "d.conf"))
    mf = d.config.priority
    assert (mf.weight_age, mf.weight_fairshare, mf.max_age, mf.half_life, mf.calc_period, mf.favor_small) == \
        (0, 0, 7 * 86400, 7 * 86400, 300, False)


def test_every_setting_pbf_does_not_model_is_listed(tmp_path):
    site = _conf(tmp_path,
                 "SlurmctldHost=h1\nAuthType=auth/munge\nProctrackType=proctrack/cgroup\n"   # plumbing: read past
                 "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core,CR_LLN\nPreemptType=preempt/qos\n"
                 "PreemptMode=REQUEUE\nTopologyPlugin=topology/tree\nWeirdKey=1\nSchedulerType=sched/builtin\n"
                 "DefMemPerGPU=1000\nOverTimeLimit=5\nPriorityType=priority/basic\nPriorityWeightAge=10\n"
                 "KillWait=60\nEpilog=/etc/slurm/epilog\n"
                 "NodeName=a1 CPUs=8 ThreadsPerCore=2 Weight=10 CoreSpecCount=1\nNodeName=a2 CPUs=8 Weight=20\n"
                 "NodeName=g1 CPUs=4 Gres=gpu:a100:2 Boot=fast\n"
                 "PartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:2 MaxNodes=2 MaxTime=60 LLN=YES\n")
    s = slurm_settings(site)
    said = " | ".join(s.unmodelled)
    for needle in ("CR_LLN", "preempttype=preempt/qos", "preemptmode=REQUEUE", "topologyplugin=topology/tree",
                   "weirdkey=1 (line 9)", "defmempergpu=1000", "overtimelimit=5",
                   "priorityweightage (line 14): has no effect", "killwait=60", "epilog=/etc/slurm/epilog",
                   "ThreadsPerCore=2", "corespeccount=1", "Weight (1, 10, 20)",
                   "boot=fast", "oversubscribe=FORCE:2", "maxnodes=2", "maxtime=60", "lln=YES"):
        assert needle in said, needle
    for plumbing in ("slurmctldhost", "authtype", "proctracktype"):
        assert plumbing not in said.lower()
        assert any(r.startswith(plumbing + " (line ") for r in s.read_past), plumbing
    assert s.config.mem_from == "none" and s.config.backfill.enabled is False   # CR_Core; sched/builtin
    assert s.as_dict()["read_past"] == s.read_past and s.as_dict()["unmodelled"] == s.unmodelled


def test_nodes_come_in_slurms_order_and_no_order_note_is_needed():
    s = slurm_settings(DATA / "hetero8.conf")
    assert [n.name for n in s.cluster.nodes] == ["c01", "c02", "c03", "g01", "g02", "m01", "m02", "s01"]
    assert not [u for u in s.unmodelled if "order" in u.split(":")[0]]
    assert "numbered by name" in s.mapped["nodes"]


def test_jobs_without_memory_on_a_partition_without_a_default_are_listed(tmp_path):
    from pbf.validate.jobs import load_workload
    site = _conf(tmp_path, "SelectType=select/cons_tres\nNodeName=n1 CPUs=4 RealMemory=4000\n")
    table, req = load_workload(DATA / "small4_jobs.sacct")
    req0 = type(req)(req.mem_core_mb * 0, req.mem_node_mb * 0, req.gpus, req.nodes_min, req.nodes_max, req.features)
    said = " | ".join(slurm_settings(site, requests=req0).unmodelled)
    assert "20 jobs ask no memory and the partition has no DefMemPerCPU" in said
    assert "ask no memory" not in " | ".join(slurm_settings(site, requests=req).unmodelled)


@pytest.mark.parametrize("text, seconds", [("30", 1800), ("5:30", 330), ("1:02:03", 3723), ("2-0", 172800),
                                           ("1-2:03", 93780), ("1-00:00:05", 86405), ("INFINITE", None)])
def test_slurm_durations(text, seconds):
    assert slurm_duration(text, "x") == seconds


@pytest.mark.parametrize("text, expected", [
    ("SchedulerParameters=bf_interval=often\n", "line 2: SchedulerParameters bf_interval='often': expected a whole "
                                                "number from 1 to 10,800 or -1"),
    ("SchedulerParameters=bf_resolution=0\n", "line 2: SchedulerParameters bf_resolution='0': expected a whole "
                                              "number from 1 to 3,600"),
    ("SchedulerParameters=bf_window=50000\n", "bf_window='50000': expected a whole number from 1 to 43,200"),
    ("SchedulerParameters=bf_max_job_test=0\n", "bf_max_job_test='0': expected a whole number from 1 to 1,000,000"),
    ("SchedulerParameters=bf_max_job_user=x\n", "bf_max_job_user='x': expected a whole number from 0 to 2,147,483,647"),
    ("SchedulerParameters=bf_interval\n", "'bf_interval': expected bf_interval=NUMBER"),
    ("SchedulerParameters=sched_interval=0\n", "sched_interval='0': expected a whole number from 1 to 2,147,483,647"),
    ("SchedulerType=sched/wiki\n", "line 2: SchedulerType='sched/wiki': expected sched/backfill or sched/builtin"),
    ("PriorityType=priority/fair\n", "line 2: PriorityType='priority/fair': expected priority/basic or"),
    ("PriorityType=priority/multifactor\nPriorityMaxAge=soon\n", "line 3: PriorityMaxAge='soon': expected a Slurm "
                                                                 "time"),
    ("PriorityType=priority/multifactor\nPriorityWeightAge=-5\n", "line 3: PriorityWeightAge='-5': expected a "
                                                                  "whole number"),
    ("PriorityType=priority/multifactor\nPriorityFavorSmall=maybe\n", "line 3: PriorityFavorSmall='maybe': "
                                                                      "expected YES or NO"),
    ("MessageTimeout=x\n", "line 2: MessageTimeout='x': expected a whole number from 1 to 65,535"),
])
def test_a_bad_setting_names_the_file_line_key_and_value(tmp_path, text, expected):
    site = _conf(tmp_path, "NodeName=n1 CPUs=4\n" + text)
    with pytest.raises(ConfigError) as err:
        slurm_settings(site)
    assert str(site) in str(err.value) and expected in str(err.value)


def test_the_harness_replays_with_the_same_settings():
    from pbf.validate import replay_settings
    from pbf.validate.slurm_config import natural_key
    a, b = replay_settings(DATA / "hetero8.conf"), slurm_settings(DATA / "hetero8.conf")
    assert a.config == b.config and a.unmodelled == b.unmodelled and a.mapped == b.mapped
    assert sorted(["n10", "n2", "b1", "a1"], key=natural_key) == ["a1", "b1", "n2", "n10"]


# ---------------------------------------------------------------- pbf replay --slurm-conf

def _replay(tmp_path, *args):
    out = tmp_path / "out"
    rc = cli.main(["replay", str(SWF), "--quiet", "--out", str(out), *map(str, args)])
    return rc, json.loads((out / "summary.json").read_text())


def test_replay_with_a_slurm_conf_records_what_it_used(tmp_path, capsys):
    site = _conf(tmp_path, (DATA / "hetero8.conf").read_text().replace(
        "bf_window=60", "bf_window=60,bf_max_job_user=3"))
    rc, s = _replay(tmp_path, "--slurm-conf", site)
    assert rc == 0
    cfg, sc = s["config"], s["slurm_conf"]
    assert sc["path"] == str(site) and sc["partition"] == "batch"
    assert sc["mapped"]["SchedulerParameters bf_max_job_user"] == "3 (site) -> SlurmBackfill.max_job_user"
    assert cfg["backfill"]["max_job_user"] == 3 and "slurmctldhost (line 4)" in sc["read_past"]
    assert sc["overridden_by_flags"] == []
    assert cfg["clock"] == "slurm-sim" and cfg["trigger"] == "interval" and cfg["bf_interval"] == 1
    capsys.readouterr()
    assert cli.main(["replay", str(SWF), "--slurm-conf", str(site)]) == 0
    text = capsys.readouterr().out
    assert f"slurm-conf   {site} (partition batch)" in text and "bf_max_job_user=3" not in text


def test_explicit_flags_win_over_the_file(tmp_path):
    site = _conf(tmp_path, "SchedulerParameters=bf_interval=5,bf_resolution=30,bf_window=10,sched_interval=20\n"
                           "PriorityType=priority/multifactor\nPriorityWeightAge=1000\n"
                           "NodeName=n[1-4] CPUs=8 RealMemory=64000\n")
    rc, s = _replay(tmp_path, "--slurm-conf", site, "--bf-interval", 7, "--bf-resolution", 0, "--reservations", 1,
                    "--sched-interval", 9, "--mf-weight", "job-size=10", "--bf-window", "1h")
    assert rc == 0
    sc = s["slurm_conf"]
    assert set(sc["overridden_by_flags"]) >= {"--bf-interval", "--bf-resolution", "--reservations", "--sched-interval",
                                              "--mf-weight", "--bf-window"}
    cfg = s["config"]
    assert cfg["bf_interval"] == 7 and cfg["backfill"]["resolution"] == 0 and cfg["backfill"]["reservations"] == 1
    assert cfg["backfill"]["window"] == 3600 and cfg["slurm_sim"]["sched_interval"] == 9
    assert "age 1000," in cfg["priority"] and "size 10," in cfg["priority"]


def test_slurm_conf_errors_exit_2_naming_the_line(tmp_path, capsys):
    site = _conf(tmp_path, "NodeName=n1 CPUs=4\nSchedulerParameters=bf_resolution=fine\n")
    assert cli.main(["replay", str(SWF), "--quiet", "--slurm-conf", str(site)]) == 2
    err = capsys.readouterr().err
    assert f"{site}, line 2: SchedulerParameters bf_resolution='fine': expected a whole number" in err
    assert cli.main(["replay", str(SWF), "--quiet", "--slurm-conf", str(tmp_path / "none.conf")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert cli.main(["replay", str(SWF), "--quiet", "--slurm-conf", str(DATA / "small4.conf"),
                     "--preset", "slurm"]) == 2
    assert "--preset" in capsys.readouterr().err


def test_json_output_stays_json_and_the_list_goes_to_stderr(tmp_path, capsys):
    site = _conf(tmp_path, "SchedulerParameters=bf_continue\nNodeName=n[1-4] CPUs=8 RealMemory=64000 Gres=gpu:2\n"
                           "PartitionName=a Nodes=n[1-2]\nPartitionName=b Nodes=n[3-4]\n")
    assert cli.main(["replay", str(SWF), "--slurm-conf", f"{site}:b", "--json"]) == 0
    out = capsys.readouterr()
    s = json.loads(out.out)
    assert s["slurm_conf"]["partition"] == "b" and "not modelled: SchedulerParameters bf_continue" in out.err
    assert cli.main(["replay", str(SWF), "--quiet", "--slurm-conf", str(site)]) == 2
    assert "2 partitions and none has Default=YES: name one (FILE:PARTITION" in capsys.readouterr().err
