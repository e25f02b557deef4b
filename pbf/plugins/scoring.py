"""The scoring plugins of one replay or engine, resolved and applied to a compiled core.

Built-ins configure the core (:meth:`Scoring.core_settings`, applied by :mod:`pbf.core_config`) and
run without Python; a user's Python plugin makes the replay stop at every instant with arrivals or
queued jobs (the core's ``hooks`` setting) so that :meth:`Scoring.on_hook` can call it with the GIL:
completions are fed to the predictor's ``fit``, arrivals get their estimates, and the queue (and the
backfill order) get their keys. The engine calls the same glue (:meth:`Scoring.set_keys`) at each of
its passes.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .._core import Core
from .choosers import CHOOSERS, PythonChooser
from .corrections import CORRECTIONS
from .corrections import code as correction_code
from .predictors import PREDICTORS, PythonPredictor, Regression
from .priorities import PRIORITIES, PythonPriority
from .registry import is_multifactor

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    import numpy as np

    from .views import JobsView

__all__ = ["Scoring"]


@dataclass
class Scoring:
    """The priority, predictor, correction and backfill chooser of one replay or engine, resolved."""
    priority: object
    predictor: object
    correction: str
    chooser: object      # "queue", "sjbf" or a PythonChooser

    @classmethod
    def resolve(cls, priority: object = "fcfs", predictor: object = "requested", correction: str = "incremental",
                order: object = "queue") -> Scoring:
        """Look every part up (names, 'package.module:attr' strings or objects)."""
        return cls(PRIORITIES.resolve(priority), PREDICTORS.resolve(predictor),
                   CORRECTIONS.resolve(correction), CHOOSERS.resolve(order))

    @property
    def needs_hooks(self) -> bool:
        """Whether a plugin is Python code the replay must stop for."""
        return isinstance(self.priority, PythonPriority) or isinstance(self.predictor, PythonPredictor) \
            or isinstance(self.chooser, PythonChooser)

    def describe(self) -> dict:
        """The name of each part (priority, predictor, correction, order)."""
        return {"priority": self.priority.describe(), "predictor": self.predictor.describe(),
                "correction": self.correction,
                "order": self.chooser if isinstance(self.chooser, str) else self.chooser.describe()}

    def core_settings(self) -> dict:
        """The compiled core's settings for these plugins (the regression model is set apart:
        :meth:`regression`)."""
        return {**self.priority.core_settings(), **self.predictor.core_settings(),
                "correction": correction_code(self.correction), "sjbf": int(self.chooser != "queue"),
                "bf_keyed": int(isinstance(self.chooser, PythonChooser)), "hooks": int(self.needs_hooks)}

    def regression(self) -> tuple | None:
        """The regression predictor's settings for ``Core.set_regression``, or None."""
        return self.predictor.settings() if isinstance(self.predictor, Regression) else None

    def job_factors(self, partition: np.ndarray,
                    queue: np.ndarray) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
        """(part, qos) columns for the core (multifactor), or (None, None)."""
        if is_multifactor(self.priority):
            return self.priority.factors(partition, queue)
        return None, None

    # ------------------------------------------------------------ Python plugins
    def attach_users(self, core: Core, n_users: int, names: Callable[[], list] | None = None) -> None:
        """Give the core what a priority needs to know of the users: Fair Tree's association tree
        for ``n_users`` dense users, named by ``names()`` (called only for a multifactor priority with
        ``fairshare="fair-tree"``)."""
        if is_multifactor(self.priority) and self.priority.fairshare == "fair-tree":
            tree = self.priority.tree_for(n_users, names() if names is not None else None)
            if tree is not None:
                a = tree.arrays()
                core.set_associations(a["parent"], a["shares_norm"], a["is_user"], a["user_of"], a["user_assocs"])

    def on_hook(self, core: Core, columns: dict, now: int, arrivals: np.ndarray, pending: np.ndarray) -> None:
        """Call the Python plugins at instant ``now``: ``arrivals`` (job indices about to be
        submitted) and ``pending`` (queued job indices). ``columns``: dict of per-job arrays (id,
        submit, units, requested, user)."""
        import numpy as np

        from .views import JobsView  # (Python plugins only: a replay without them does without it)
        if isinstance(self.predictor, PythonPredictor):
            self.flush(core, columns, now)
            if len(arrivals):
                est = self.predictor.predict(JobsView.of(columns, arrivals), now)
                core.set_estimates(np.asarray(arrivals, dtype=np.int64), est)
        jobs = np.concatenate([np.asarray(pending, dtype=np.int64), np.asarray(arrivals, dtype=np.int64)])
        self.set_keys(core, lambda rows, **kw: JobsView.of(columns, rows, **kw), jobs, now)

    def set_keys(self, core: Core, view_of: Callable[..., JobsView], jobs: np.ndarray, now: int) -> None:
        """Give ``jobs`` (core indices) their keys from a Python priority and ranks from a Python
        chooser, if there are such plugins. ``view_of(rows, estimate=...)`` makes the
        :class:`JobsView` the plugins read."""
        if not len(jobs) or not (isinstance(self.priority, PythonPriority) or isinstance(self.chooser, PythonChooser)):
            return
        running = None
        if isinstance(self.chooser, PythonChooser) and getattr(self.chooser.fn, "wants_running", False):
            rows = core.running()
            running = view_of(rows, estimate=core.values_of("est", rows), start=core.values_of("start", rows))
        view = view_of(jobs, estimate=core.values_of("est", jobs), free_units=core.free_count, running=running)
        if isinstance(self.priority, PythonPriority):
            core.set_keys(jobs, self.priority.keys(view, now))
        if isinstance(self.chooser, PythonChooser):
            core.set_bf_keys(jobs, self.chooser.ranks(view, now))

    def prepare(self, table_in_order: Callable[[], object], units: int) -> None:
        """Before a replay: hand the jobs in replay order (``table_in_order()`` makes them, only if
        a plugin wants them) and the cluster's units to plugins with a ``prepare`` method (a
        learned policy takes its feature normalisers from them)."""
        wanting = [fn for fn in (getattr(p, "fn", None) for p in (self.priority, self.chooser))
                   if hasattr(fn, "prepare")]
        if wanting:
            table = table_in_order()
            for fn in wanting:
                fn.prepare(table, units)

    def flush(self, core: Core, columns: dict, now: int) -> None:
        """Feed the completions not yet seen to a Python predictor's ``fit`` (also called once the
        replay is over, so that a plugin sees every completion)."""
        if not isinstance(self.predictor, PythonPredictor):
            return
        done = core.take_finished()
        if len(done):
            from .views import JobsView
            start, end = core.values_of("start", done), core.values_of("end", done)
            self.predictor.fit(JobsView.of(columns, done, start=start, run=end - start), now)
