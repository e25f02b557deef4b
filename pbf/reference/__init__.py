"""Pure-Python references: the oracle of the compiled core (and of its slurm-sim clock), and a count-based
EASY (pyss semantics)."""
from .count_easy import count_easy_replay
from .engine_ref import ReferenceCore, reference_replay
from .slurm_sim_ref import SlurmSimReference

__all__ = ["ReferenceCore", "reference_replay", "count_easy_replay", "SlurmSimReference"]
