"""What a Python plugin is shown: a struct of numpy arrays over some jobs (array in, array out)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["JobsView"]


@dataclass(frozen=True)
class JobsView:
    """Jobs handed to a plugin, one entry per job (all columns are numpy arrays of equal length).

    ``index``: the job's position in the replay or engine (stable; use it to keep per-job state);
    ``id``: the trace's job id; ``submit``, ``units``, ``requested`` (seconds), ``estimate`` (the
    engine's current estimate: the prediction once made, else the requested time); ``user``: the
    trace's user id; ``start`` and ``run``: for finished jobs (else -1). ``free_units``: the units
    free when the plugin is called before a pass (-1 where that is not known). ``running``: for a
    chooser with ``wants_running = True``, a view of the running jobs (``start``, ``estimate``).
    """
    index: np.ndarray
    id: np.ndarray
    submit: np.ndarray
    units: np.ndarray
    requested: np.ndarray
    estimate: np.ndarray
    user: np.ndarray
    start: np.ndarray
    run: np.ndarray
    free_units: int = -1
    running: object = None

    def __len__(self) -> int:
        return len(self.index)

    @classmethod
    def of(cls, columns: dict, index: ArrayLike, estimate: ArrayLike | None = None, start: ArrayLike | None = None,
           run: ArrayLike | None = None, free_units: int = -1,
           running: JobsView | None = None) -> JobsView:
        """A view of rows ``index`` of ``columns`` (a dict with id, submit, units, requested, user)."""
        index = np.asarray(index, dtype=np.int64)
        none = np.full(len(index), -1, dtype=np.int64)
        return cls(index=index, id=columns["id"][index], submit=columns["submit"][index],
                   units=columns["units"][index], requested=columns["requested"][index],
                   estimate=columns["requested"][index] if estimate is None else np.asarray(estimate),
                   user=columns["user"][index], start=none if start is None else np.asarray(start),
                   run=none if run is None else np.asarray(run), free_units=int(free_units), running=running)
