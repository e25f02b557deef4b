"""Real schedulers as the oracle: run a workload through a real Slurm and through pbf, and compare job
by job (docs/slurm-harness.md).

* :func:`validate_slurm` -- the whole harness (``pbf validate slurm CONF WORKLOAD``).
* :func:`write_private_conf` -- a site's slurm.conf as a private configuration for daemons in a private
  network namespace; :func:`replay_settings` -- the pbf settings that stand for the site's scheduler,
  with every setting pbf does not model.
* :func:`run_slurm` -- one run through a real Slurm; :func:`check_requirements` says what is missing.
* :func:`read_jobcomp`, :func:`read_sdiag` -- Slurm's records read back.
* :func:`agreement` -- how two sets of start times agree.

Names are loaded on first use (``import pbf.validate`` is cheap).
"""
import importlib

_WHERE = {"validate_slurm": "compare", "agreement": "compare", "WINDOW_S": "compare",
          "write_private_conf": "slurm_config", "replay_settings": "slurm_config", "PrivateConf": "slurm_config",
          "ReplaySettings": "slurm_config",
          "run_slurm": "slurm_run", "check_requirements": "slurm_run", "SlurmUnavailable": "slurm_run",
          "SlurmRunError": "slurm_run", "SlurmRun": "slurm_run",
          "HarnessJob": "jobs", "load_workload": "jobs", "scale_jobs": "jobs",
          "read_jobcomp": "records", "read_sdiag": "records", "JobRecord": "records"}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pbf.validate' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
