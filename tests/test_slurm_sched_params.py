"""SchedulerParameters read as slurmctld reads it (pbf.slurm_sched_params): options found by substring
anywhere in the value, the first occurrence winning, every word reported."""
import pytest

from pbf.errors import ConfigError
from pbf.slurm_sched_params import find_options
from pbf.slurm_settings import slurm_settings

NODES = "NodeName=n[1-2] CPUs=4 RealMemory=8000\nPartitionName=p Nodes=ALL Default=YES\n"


def _conf(tmp_path, text, name="slurm.conf"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_a_doubled_equals_sign_still_sets_every_option(tmp_path):
    # a real site's line: slurmctld finds "bf_max_job_user=" inside "=bf_max_job_user=20" and applies it
    found = find_options("=bf_max_job_user=20,bf_continue")
    assert found.values["bf_max_job_user"][0] == "20" and "bf_continue" in found.flags and not found.unknown
    s = slurm_settings(_conf(tmp_path, "SchedulerParameters==bf_max_job_user=20,bf_continue\n" + NODES))
    assert s.config.backfill.max_job_user == 20
    assert s.mapped["SchedulerParameters bf_max_job_user"] == "20 (site) -> SlurmBackfill.max_job_user"
    assert s.mapped["SchedulerParameters =bf_max_job_user=20"].startswith("read as bf_max_job_user (line 1;")
    assert any(u.startswith("SchedulerParameters bf_continue (line 1): not modelled by pbf") for u in s.unmodelled)


def test_options_are_found_without_regard_to_case_or_word_and_the_first_wins(tmp_path):
    found = find_options("BF_Interval=5, nobf_max_job_start=4,bf_interval=9,frobnicate,bf_max_job_user_part=2")
    assert found.values["bf_interval"][:2] == ("5", "BF_Interval")
    assert found.values["bf_max_job_start"][0] == "4"             # (inside "nobf_max_job_start")
    assert "bf_max_job_user" not in found.values       # ("bf_max_job_user_part=" holds no "bf_max_job_user=")
    assert found.values["bf_max_job_user_part"][0] == "2"
    assert found.read_past == [("bf_interval=9", "bf_interval")] and found.unknown == ["frobnicate"]
    s = slurm_settings(_conf(tmp_path, "SchedulerParameters=BF_Interval=5,bf_interval=9,frobnicate\n" + NODES))
    assert s.config.bf_interval == 5
    said = " | ".join(s.unmodelled)
    assert "SchedulerParameters bf_interval=9 (line 1): read past: slurmctld reads bf_interval from its first" in said
    assert "SchedulerParameters frobnicate (line 1): not modelled by pbf" in said


def test_limits_are_mapped_and_the_ones_pbf_leaves_out_say_why(tmp_path):
    s = slurm_settings(_conf(tmp_path, "SchedulerParameters=bf_max_job_user=2,bf_max_job_assoc=5,bf_max_job_part=9,"
                                       "bf_min_age_reserve=600,bf_job_part_count_reserve=3,bf_one_resv_per_job,"
                                       "bf_busy_nodes,bf_min_prio_reserve=100\n" + NODES))
    b = s.config.backfill
    assert (b.max_job_user, b.max_job_assoc, b.max_job_part, b.min_age_reserve, b.reservations) == (0, 5, 9, 600, 3)
    assert b.per_user() == 5 and b.min_prio_reserve == 0           # (priority/basic: not modelled)
    said = " | ".join(s.unmodelled)
    assert "bf_max_job_user=2: ignored, as slurmctld ignores it when bf_max_job_assoc is set" in said
    assert "bf_min_prio_reserve=100: not modelled by pbf under priority/basic" in said
    assert "bf_busy_nodes (line 1): not modelled by pbf: Slurm's select plugin prefers nodes already in use" in said
    assert "one_resv_per_job" in s.mapped["SchedulerParameters bf_one_resv_per_job"]
    assert s.config.backfill.one_resv_per_job
    assert s.mapped["SchedulerParameters bf_job_part_count_reserve"].startswith("3 (site) -> Backfill.reservations 3")
    assert b.job_part_count_reserve == 0                          # (one partition: the count over the cycle)
    mf = slurm_settings(_conf(tmp_path, "PriorityType=priority/multifactor\n"
                                        "SchedulerParameters=bf_min_prio_reserve=100\n" + NODES, "mf.conf"))
    assert mf.config.backfill.min_prio_reserve == 100


@pytest.mark.parametrize("text, said", [
    ("bf_max_job_start=10001", "bf_max_job_start='10001': expected a whole number from 0 to 10,000"),
    ("bf_min_age_reserve=-1", "bf_min_age_reserve='-1': expected a whole number from 0 to 2,592,000"),
    ("bf_min_prio_reserve=0", "bf_min_prio_reserve='0': expected a whole number from 1 to 4,294,967,295"),
    ("=bf_max_job_user=20x", "bf_max_job_user='20x': expected a whole number"),
    ("bf_max_job_user", "'bf_max_job_user': expected bf_max_job_user=NUMBER"),
])
def test_limits_slurm_would_not_take_are_refused_naming_file_line_and_option(tmp_path, text, said):
    p = _conf(tmp_path, f"SchedulerParameters={text}\n" + NODES)
    with pytest.raises(ConfigError, match="line 1: SchedulerParameters") as err:
        slurm_settings(p)
    assert said in str(err.value) and str(p) in str(err.value)
