"""The scoring plugins of one replay or engine, resolved and applied to a compiled core.

Built-ins configure the core and run without Python; a user's Python plugin makes the replay stop
at every instant with arrivals or queued jobs (``Core.hooks``) so that :meth:`Scoring.on_hook` can
call it with the GIL: completions are fed to the predictor's ``fit``, arrivals get their estimates,
and the queue (and the backfill order) get their keys.
"""
from dataclasses import dataclass

import numpy as np

from .choosers import CHOOSERS, PythonChooser
from .corrections import CORRECTIONS, code as correction_code
from .multifactor import Multifactor
from .predictors import PREDICTORS, PythonPredictor
from .priorities import PRIORITIES, PythonPriority
from .views import JobsView

__all__ = ["Scoring"]


@dataclass
class Scoring:
    priority: object
    predictor: object
    correction: str
    chooser: object      # "queue", "sjbf" or a PythonChooser

    @classmethod
    def resolve(cls, priority="fcfs", predictor="requested", correction="incremental", order="queue"):
        """Look every part up (names, 'package.module:attr' strings or objects)."""
        return cls(PRIORITIES.resolve(priority), PREDICTORS.resolve(predictor),
                   CORRECTIONS.resolve(correction), CHOOSERS.resolve(order))

    @property
    def needs_hooks(self):
        return isinstance(self.priority, PythonPriority) or isinstance(self.predictor, PythonPredictor) \
            or isinstance(self.chooser, PythonChooser)

    def describe(self):
        return {"priority": self.priority.describe(), "predictor": self.predictor.describe(),
                "correction": self.correction,
                "order": self.chooser if isinstance(self.chooser, str) else self.chooser.describe()}

    def apply(self, core):
        self.priority.apply(core)
        self.predictor.apply(core)
        core.correction = correction_code(self.correction)
        core.sjbf = int(self.chooser != "queue")
        core.bf_keyed = int(isinstance(self.chooser, PythonChooser))
        core.hooks = int(self.needs_hooks)

    def job_factors(self, partition, queue):
        """(part, qos) columns for the core (multifactor), or (None, None)."""
        if isinstance(self.priority, Multifactor):
            return self.priority.factors(partition, queue)
        return None, None

    # ------------------------------------------------------------ Python plugins
    def on_hook(self, core, columns, now, arrivals, pending):
        """Call the Python plugins at instant ``now``: ``arrivals`` (job indices about to be
        submitted) and ``pending`` (queued job indices). ``columns``: dict of per-job arrays (id,
        submit, units, requested, user)."""
        if isinstance(self.predictor, PythonPredictor):
            self.flush(core, columns, now)
            if len(arrivals):
                est = self.predictor.predict(JobsView.of(columns, arrivals), now)
                core.set_estimates(np.asarray(arrivals, dtype=np.int64), est)
        if isinstance(self.priority, PythonPriority) or isinstance(self.chooser, PythonChooser):
            jobs = np.concatenate([np.asarray(pending, dtype=np.int64), np.asarray(arrivals, dtype=np.int64)])
            view = JobsView.of(columns, jobs, estimate=core.values_of("est", jobs))
            if isinstance(self.priority, PythonPriority):
                core.set_keys(jobs, self.priority.keys(view, now))
            if isinstance(self.chooser, PythonChooser):
                core.set_bf_keys(jobs, self.chooser.ranks(view, now))

    def flush(self, core, columns, now):
        """Feed the completions not yet seen to a Python predictor's ``fit`` (also called once the
        replay is over, so that a plugin sees every completion)."""
        if not isinstance(self.predictor, PythonPredictor):
            return
        done = core.take_finished()
        if len(done):
            start, end = core.values_of("start", done), core.values_of("end", done)
            self.predictor.fit(JobsView.of(columns, done, start=start, run=end - start), now)
