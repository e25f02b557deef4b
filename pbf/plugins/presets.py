"""Named policy combinations (Gaussier et al.'s "heuristic triples" and the classics)."""
from .registry import Registry

__all__ = ["PRESETS", "preset"]

PRESETS = Registry("preset")
_TABLE = {
    "easy": (dict(priority="fcfs", predictor="requested", correction="incremental", order="queue"),
             "FCFS + requested times + queue order (EASY backfilling)"),
    "easy++": (dict(priority="fcfs", predictor="ave2", correction="incremental", order="sjbf"),
               "FCFS + ave2 + incremental corrections + SJBF (Tsafrir et al.'s EASY++)"),
    "easy-clairvoyant": (dict(priority="fcfs", predictor="clairvoyant", correction="incremental", order="queue"),
                         "FCFS + actual run times + queue order"),
    "easy-sjbf-clairvoyant": (dict(priority="fcfs", predictor="clairvoyant", correction="incremental", order="sjbf"),
                              "FCFS + actual run times + SJBF"),
    "gaussier": (dict(priority="fcfs", predictor="regression", correction="incremental", order="sjbf"),
                 "FCFS + E-Loss regression + incremental corrections + SJBF (Gaussier et al.'s selected triple)"),
}
for _name, (_settings, _summary) in _TABLE.items():
    PRESETS.register(_name, (lambda s=_settings: dict(s)), _summary)


def preset(name):
    """The settings of a preset: a dict of priority, predictor, correction and order."""
    return PRESETS.resolve(name)
