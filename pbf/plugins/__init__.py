"""Scoring plugins (DESIGN §6): priority functions, runtime predictors, corrections, backfill
choosers, presets. Look one up by name or by ``"package.module:attr"``; ``pbf list`` prints them."""
from .choosers import CHOOSERS
from .corrections import CORRECTIONS
from .multifactor import Multifactor
from .predictors import PREDICTORS, Ave2, Clairvoyant, Regression, Requested
from .presets import PRESETS, preset
from .priorities import PRIORITIES
from .scoring import Scoring
from .views import JobsView

__all__ = ["PRIORITIES", "PREDICTORS", "CORRECTIONS", "CHOOSERS", "PRESETS", "preset", "Multifactor",
           "Regression", "Ave2", "Requested", "Clairvoyant", "Scoring", "JobsView"]
