"""The learned-policy layer: job-selection environment steps and kernel decisions."""
import numpy as np
import pytest

pytest.importorskip("gymnasium", reason="the rl extra (gymnasium) is not installed")

from pbf.rl.env import JobSelectionEnv, VecJobSelection  # noqa: E402
from pbf.rl.kernel import KernelPolicy  # noqa: E402


def _steps(env, rng, n):
    done_windows = 0
    for _ in range(n):
        _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if done:
            done_windows += 1
            env.reset()
    return done_windows


@pytest.mark.benchmark(group="rl")
def test_env_steps(benchmark, shared_trace):
    """1,024 random valid steps on 256-job windows of Lublin-1 (SJF and F1 run at every reset)."""
    env = JobSelectionEnv(shared_trace("rlsched_lublin_256.swf.gz"), window=256, baselines=("sjf", "f1"))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    windows = benchmark(_steps, env, rng, 1024)
    assert windows >= 3
    benchmark.extra_info["steps_per_s"] = 1024 / benchmark.stats.stats.median


@pytest.mark.benchmark(group="rl")
def test_reference_env_steps(benchmark, shared_trace):
    """The peer of test_env_steps: pbf.reference.rlscheduler (RLScheduler's loop in plain Python) on
    256-job windows of the same trace and mode, SJF and F1 scheduled at every reset, 256 random steps."""
    from pbf.reference.rlscheduler import ReferenceJobSelectionEnv
    env = JobSelectionEnv(shared_trace("rlsched_lublin_256.swf.gz"), window=256)
    ref = ReferenceJobSelectionEnv(env.trace, compat=False)
    rng = np.random.default_rng(0)

    def window():
        steps, obs = 0, ref.reset(int(rng.integers(env.start_lo, env.start_hi)), 256)
        while obs is not None:
            obs = ref.step(int(rng.choice(np.flatnonzero(ref.action_masks()))))
            steps += 1
        return steps
    assert benchmark(window) == 256
    benchmark.extra_info["steps_per_s"] = 256 / benchmark.stats.stats.median


@pytest.mark.benchmark(group="rl")
def test_vector_env_steps(benchmark, shared_trace):
    vec = VecJobSelection(shared_trace("rlsched_lublin_256.swf.gz"), 16, seed=0, baselines=("sjf", "f1"))
    vec.reset()
    rng = np.random.default_rng(0)

    def run():
        for _ in range(64):
            m = vec.action_masks()
            vec.step(np.argmax(rng.random(m.shape) * m, axis=1))
    benchmark(run)
    assert vec.invalid_actions == 0
    benchmark.extra_info["steps_per_s"] = 64 * 16 / benchmark.stats.stats.median


@pytest.mark.benchmark(group="rl")
def test_kernel_decision(benchmark):
    k = KernelPolicy.random(0)
    obs = np.random.default_rng(0).random(1024).astype(np.float32)
    mask = np.ones(128, dtype=bool)
    row = benchmark(k.act, obs, mask)
    assert 0 <= row < 128


@pytest.mark.benchmark(group="rl")
def test_backfill_env_steps(benchmark, shared_trace):
    """1,024 random valid steps on 256-job windows of SDSC-SP2 in compat mode (the three EASY
    baselines RLBackfilling schedules run at every reset)."""
    from pbf.rl.backfill_env import BackfillEnv
    env = BackfillEnv(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"), window=256, compat="rlbackfilling",
                      baselines=("easy", "easy-largest"))
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    windows = benchmark(_steps, env, rng, 1024)
    assert windows >= 3
    benchmark.extra_info["steps_per_s"] = 1024 / benchmark.stats.stats.median
