"""The Slurm versions pbf replays a site's scheduler as (``--slurm-version``;
:func:`pbf.slurm_settings.slurm_settings`'s ``slurm_version``), and the rules pbf models that differ
between them, each from Slurm's own source (github.com/SchedMD/slurm, tags ``slurm-20-11-9-1``,
``slurm-22-05-8-1``, ``slurm-23-11-10-1``).

Slurm does not write its version into ``slurm.conf``: the version is the user's to say (default 22.05,
the version pbf's Slurm rules were ported from and checked against).
"""
from __future__ import annotations

from .errors import ConfigError

__all__ = ["SLURM_VERSIONS", "DEFAULT_SLURM_VERSION", "SELECT_TYPES", "check_version", "bf_max_job_test_default",
           "node_marks", "VERSION_RULES"]

SLURM_VERSIONS = ("20.11", "22.05", "23.11")
DEFAULT_SLURM_VERSION = "22.05"
#: the select plugins whose node weights pbf models (select/linear is placed as cons_res)
SELECT_TYPES = ("cons_tres", "cons_res")

#: the rules that differ, as docs/inputs.md lists them: (rule, {version: what it is}, where in Slurm)
VERSION_RULES = (
    ("bf_max_job_test's default", {"20.11": "100", "22.05": "500", "23.11": "500"},
     "src/plugins/sched/backfill/backfill.c, _load_config (DEF_BF_MAX_JOB_TEST from 22.05)"),
    ("bf_interval=-1 (no backfill cycle)", {"20.11": "refused (logged; 30 s used)", "22.05": "taken",
                                            "23.11": "taken"},
     "src/plugins/sched/backfill/backfill.c, _load_config"),
    ("SelectTypeParameters unset with select/cons_res or cons_tres",
     {"20.11": "fatal at start", "22.05": "CR_Core_Memory", "23.11": "CR_Core_Memory"},
     "src/plugins/select/cons_common/cons_common.c, select_p_node_init (23.11: "
     "src/plugins/select/cons_tres/select_cons_tres.c)"),
    ("select/cons_res", {"20.11": "available", "22.05": "available", "23.11": "removed (slurmctld cannot load it)"},
     "src/plugins/select/ (NEWS 23.11: 'Removed select/cons_res')"),
    ("a GPU job's marks on the nodes' scheduling weights",
     {"20.11": "cons_tres: kept until a start attempt; cons_res: none",
      "22.05": "cons_tres: kept until a start attempt; cons_res: none",
      "23.11": "reset on the offered nodes at each will-run test"},
     "src/plugins/select/cons_tres/job_test.c, _can_job_run_on_node ('Favor nodes with more co-located "
     "GPUs') and (23.11) _will_run_test calling _set_sched_weight; src/slurmctld/node_scheduler.c, "
     "_sync_node_weight"),
)


def check_version(version: object) -> str:
    """``version`` if it is one of :data:`SLURM_VERSIONS`, else a :class:`pbf.ConfigError`."""
    if version not in SLURM_VERSIONS:
        raise ConfigError(f"slurm_version must be one of {', '.join(SLURM_VERSIONS)}, got {version!r}")
    return version


def bf_max_job_test_default(version: str) -> int:
    """Slurm's bf_max_job_test where the site sets none (backfill.c ``_load_config``)."""
    return 100 if version == "20.11" else 500


def node_marks(version: str, select_type: str) -> str:
    """How a GPU job's tests mark the nodes' scheduling weights: ``carry`` (cons_tres of 20.11 and
    22.05), ``none`` (cons_res), ``per-test`` (cons_tres of 23.11); see :data:`VERSION_RULES`."""
    if select_type == "cons_res":
        return "none"
    return "per-test" if version == "23.11" else "carry"
