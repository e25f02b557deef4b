"""Every code the Python side uses is the compiled core's (pbf/_codes.pxd is the one definition)."""
import pytest

from pbf import _codes, _core, codes
from pbf.plugins.corrections import CORRECTIONS
from pbf.plugins.corrections import code as correction_code
from pbf.plugins.predictors import PREDICTORS
from pbf.plugins.priorities import PRIORITIES
from pbf.plugins.regression import WEIGHTS

PRIORITY_CODES = {"fcfs": "PR_FCFS", "sjf": "PR_SJF", "smallest": "PR_SMALLEST", "f1": "PR_F1", "f2": "PR_F2",
                  "f3": "PR_F3", "f4": "PR_F4", "wfp3": "PR_WFP3", "unicep": "PR_UNICEP",
                  "multifactor": "PR_MULTIFACTOR"}


def test_codes_are_the_compiled_enums():
    for name in ("Priority", "Predictor", "Correction", "Clock", "Trigger", "JobState", "RejectReason",
                 "How", "PassKind", "ExitReason", "RegressionWeight", "Status", "OutageKind", "CoallocPolicy"):
        assert getattr(codes, name) is getattr(_codes, name)


@pytest.mark.parametrize("name, member", sorted(PRIORITY_CODES.items()))
def test_priorities_carry_their_compiled_code(name, member):
    plugin = PRIORITIES.resolve(name)
    assert plugin.code == getattr(codes.Priority, member)
    assert plugin.core_settings()["prio"] == getattr(codes.Priority, member)


def test_predictors_corrections_and_weights_carry_their_compiled_codes():
    assert PREDICTORS.resolve("requested").code == codes.Predictor.PD_GIVEN
    assert PREDICTORS.resolve("clairvoyant").code == codes.Predictor.PD_GIVEN
    assert PREDICTORS.resolve("ave2").code == codes.Predictor.PD_AVE2
    assert PREDICTORS.resolve("regression").code == codes.Predictor.PD_REGRESSION
    assert {n: correction_code(n) for n in CORRECTIONS.names()} == {
        "incremental": codes.Correction.CR_INCREMENTAL, "requested": codes.Correction.CR_REQUESTED,
        "recursive-doubling": codes.Correction.CR_DOUBLING}
    assert [codes.RegressionWeight[f"RW_{w.upper().replace('-', '_')}"] for w in WEIGHTS] == list(range(len(WEIGHTS)))
    assert [codes.Clock[f"CK_{c.upper().replace('-', '_')}"] for c in codes.CLOCKS] == list(range(len(codes.CLOCKS)))
    assert [codes.Trigger[f"TR_{t.upper()}"] for t in codes.TRIGGERS] == list(range(len(codes.TRIGGERS)))


def test_every_label_table_covers_its_enum():
    for column, enum in codes.ENUM_OF.items():
        table = codes.LABELS.get(column) or {"clocks": codes.CLOCKS, "triggers": codes.TRIGGERS,
                                             "corrections": codes.CORRECTIONS, "outages": codes.OUTAGES,
                                             "coalloc": codes.COALLOC_POLICIES}[column]
        assert len(table) == len(enum), column
        assert sorted(int(m) for m in enum) == list(range(len(enum))), column


def test_the_core_writes_the_codes_the_labels_describe():
    """A core run through the codes: a rejected job, a started one, their how and the pass exit."""
    core = _core.Core(4)
    core.add_jobs([0, 0, 0], [8, 2, 4], [10, 10, 10], [-1, -1, -1])
    assert core.submit(0) == codes.JobState.JS_REJECTED
    assert core.submit(1) == codes.JobState.JS_PENDING
    core.submit(2)
    core.configure(record_passes=1)
    started, _ = core.run_pass(0)
    state, _, _, how, reason, _, _ = core.job_arrays()
    assert list(started) == [1]
    assert codes.label("state", state[1]) == "running" and codes.label("how", how[1]) == "main"
    assert codes.label("reject_reason", reason[0]) == "larger than the cluster"
    assert core.last_pass()["exit"] == "end of queue" and core.last_pass()["kind"] == "full"


def test_unknown_settings_are_refused_and_change_nothing():
    core = _core.Core(4)
    with pytest.raises(ValueError, match="unknown core settings: nope"):
        core.configure(resv_max=5, nope=1)
    with pytest.raises(ValueError, match="unknown testing switches: nope"):
        core.set_testing(nope=1)


def test_time_dependence_is_a_property_of_each_priority():
    """The compiled table says which keys read the time; every built-in priority agrees with it."""
    assert codes.TIME_DEPENDENT == {codes.Priority.PR_WFP3, codes.Priority.PR_UNICEP,
                                    codes.Priority.PR_MULTIFACTOR, codes.Priority.PR_KEYED}
    for name in PRIORITY_CODES:
        plugin = PRIORITIES.resolve(name)
        assert plugin.dynamic == codes.time_dependent(plugin.code), name
