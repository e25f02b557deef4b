"""The public API is small, explicit and documented."""
import pbf

DOCUMENTED = {"Engine", "Backfill", "Job", "Submit", "Finish", "Start", "Reserve", "Rejected", "BatchDecisions",
              "replay", "SlurmBackfill",
              "ReplayConfig", "ReplayResult", "SlurmSim", "ProtocolError", "Cluster", "Node", "Placement",
              "beocat_cluster",
              "JobTable",
              "Cleaning",
              "CleaningReport", "read_swf",
              "write_swf", "Metrics", "schedule_metrics", "PbfError", "ConfigError", "TraceFormatError",
              "InternalError",
              "plugins", "rl", "sweep", "Drain", "Fail", "Resume", "Stopped", "Failures", "CoAllocation", "Lend"}


def test_all_is_the_documented_list():
    assert set(pbf.__all__) == DOCUMENTED
    for name in pbf.__all__:
        assert getattr(pbf, name).__doc__, name


def test_errors_specialise_builtins():
    assert issubclass(pbf.TraceFormatError, ValueError) and issubclass(pbf.TraceFormatError, pbf.PbfError)
    assert issubclass(pbf.ConfigError, ValueError) and issubclass(pbf.ProtocolError, pbf.PbfError)
    assert issubclass(pbf.InternalError, RuntimeError) and issubclass(pbf.InternalError, pbf.PbfError)


def test_public_names_stay_callable_after_their_modules_are_imported():
    import pbf
    import pbf.replayer  # noqa: F401  (a submodule import must not shadow the function)
    assert callable(pbf.replay) and pbf.replay is pbf.replayer.replay
    import pbf.sweeps  # noqa: F401
    assert callable(pbf.sweep) and pbf.sweep is pbf.sweeps.sweep


def test_the_public_api_is_annotated():
    import inspect
    for name in ("replay", "read_swf", "write_swf", "schedule_metrics", "beocat_cluster"):
        sig = inspect.signature(getattr(pbf, name))
        assert sig.return_annotation is not inspect.Signature.empty, name
    for method in ("advance", "pending", "running", "reservations", "stats", "close", "down", "estimates"):
        assert inspect.signature(getattr(pbf.Engine, method)).return_annotation is not inspect.Signature.empty, method


def test_one_version_string():
    from importlib.metadata import version
    assert pbf.__version__ == version("pbf")
