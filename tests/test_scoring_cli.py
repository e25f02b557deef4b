"""The scoring flags of pbf replay, pbf list, and their errors."""
import json
from pathlib import Path

import pytest

from pbf.cli import main

LUBLIN = Path(__file__).resolve().parents[1] / "traces" / "lublin1-1000.swf.gz"


def run_json(capsys, *args):
    assert main(["replay", str(LUBLIN), "--fill-missing-request", "--json", "--quiet", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_presets_and_overrides(capsys):
    s = run_json(capsys, "--preset", "easy++")
    assert (s["config"]["predictor"], s["config"]["correction"], s["config"]["backfill"]["order"]) == (
        "ave2", "incremental", "sjbf")
    assert s["prediction"]["corrections"] > 0
    s = run_json(capsys, "--preset", "easy++", "--correction", "requested", "--order", "queue")
    assert (s["config"]["correction"], s["config"]["backfill"]["order"]) == ("requested", "queue")


def test_regression_and_multifactor_flags(capsys):
    s = run_json(capsys, "--predictor", "regression", "--loss-over", "linear", "--loss-weight", "constant",
                 "--eta", "10")
    assert s["config"]["predictor"] == "regression(over=linear, under=linear, weight=constant, eta=10, lam=4e+09)"
    s = run_json(capsys, "--predictor", "regression", "--loss-under-slope", "100")
    assert s["config"]["predictor"].endswith("over_slope=1, under_slope=100)")
    s = run_json(capsys, "--priority", "multifactor", "--mf-weight", "age=1000", "--mf-half-life", "1d",
                 "--mf-qos", "1=10", "--mf-favor-small")
    assert "age 1000" in s["config"]["priority"] and "half_life 86400 s" in s["config"]["priority"]
    s = run_json(capsys, "--priority", "wfp3", "--no-backfill")
    assert s["config"]["priority"] == "wfp3" and s["jobs"]["backfilled"] == 0


@pytest.mark.parametrize("args, message", [
    (["--loss-weight", "constant"], "apply to --predictor regression"),
    (["--mf-weight", "age=1"], "apply to --priority multifactor"),
    (["--priority", "multifactor", "--mf-weight", "height=1"], "KEY must be one of age, fairshare"),
    (["--priority", "multifactor", "--mf-weight", "age"], "expected KEY=VALUE"),
    (["--predictor", "psychic"], "unknown predictor 'psychic'; known: requested, clairvoyant, ave2, regression"),
    (["--order", "random"], "unknown chooser 'random'; known: queue, sjbf"),
    (["--preset", "best"], "unknown preset 'best'; known: easy, easy++"),
])
def test_scoring_errors(capsys, args, message):
    assert main(["replay", str(LUBLIN), "--quiet", *args]) == 2
    assert message in capsys.readouterr().err


def test_list_prints_every_registry(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("fcfs", "sjf", "smallest", "wfp3", "unicep", "f1", "f4", "multifactor", "requested",
                 "clairvoyant", "ave2", "regression", "incremental", "recursive-doubling", "queue", "sjbf",
                 "easy++", "gaussier", "easy-sjbf-clairvoyant"):
        assert f"  {name} " in out
