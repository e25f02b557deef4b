"""The on-line regression model of Gaussier et al. (SC'15) in plain Python: the oracle's twin of
``ext/regression.pxi`` (same features, same floating-point operations in the same order).

Features (Table 2) of job j of user k at its submission, from k's completed and running jobs:
requested time; the last three run times (0 when absent); the mean of the last two and of the last
three (of those there are); the mean of all; units; the user's mean units and units / that mean;
the mean units of the user's running jobs; how many are running; the longest and the summed elapsed
time of those; the units they hold; the time since the user's last completion; cos and sin of the
time of day and of the time of week of the submission. The model is linear in
``phi = (1, x_1..x_n, x_1^2..x_n^2, x_1 x_2, ..., x_{n-1} x_n)`` (231 terms).

Training at each completion: Normalized Adaptive Gradient (Ross, Mineiro & Langford, UAI'13) on
``gamma_j * L(f(x_j), p_j) + lam/2 |w|^2`` where L is squared or linear separately for over- and
under-prediction and gamma_j one of Table 3's weightings (floored at 0).
"""
from __future__ import annotations

import math

__all__ = ["WEIGHTS", "BRANCHES", "N_FEATURES", "DIM", "features", "weight", "RegressionModel"]

#: Table 3's job weightings, by name (q = units, p = run time in seconds, at least 1)
WEIGHTS = ("constant", "short-wide", "long-narrow", "small-area", "large-area")
BRANCHES = ("squared", "linear")
N_FEATURES = 20
DIM = 1 + 2 * N_FEATURES + N_FEATURES * (N_FEATURES - 1) // 2


def weight(kind: int, q: float, p: float) -> float:
    """gamma_j of Table 3 (``kind`` an index into :data:`WEIGHTS`), floored at 0."""
    q, p = float(q), float(p)
    if kind == 0:
        g = 1.0
    elif kind == 1:
        g = 5.0 + math.log(q / p)
    elif kind == 2:
        g = 5.0 + math.log(p / q)
    elif kind == 3:
        g = 11.0 + math.log(1.0 / (q * p))
    else:
        g = math.log(q * p)
    return g if g > 0.0 else 0.0


def features(req: int, units: int, submit: int, now: int, hist: tuple, running_starts: list[int],
             running_units: list[int]) -> list[float]:
    """Table 2's features. ``hist``: (n_done, [p1, p2, p3] latest first, sum_run, sum_units,
    last_end or -1); ``running_starts`` / ``running_units``: the user's running jobs."""
    n_done, last, sum_run, sum_units, last_end = hist
    x = [0.0] * N_FEATURES
    q = float(units)
    x[0] = float(req)
    x[1] = float(last[0]) if n_done >= 1 else 0.0
    x[2] = float(last[1]) if n_done >= 2 else 0.0
    x[3] = float(last[2]) if n_done >= 3 else 0.0
    x[4] = (x[1] + x[2]) / 2.0 if n_done >= 2 else x[1]
    x[5] = (x[1] + x[2] + x[3]) / 3.0 if n_done >= 3 else x[4]
    x[6] = float(sum_run) / float(n_done) if n_done > 0 else 0.0
    x[7] = q
    x[8] = float(sum_units) / float(n_done) if n_done > 0 else 0.0
    x[9] = q / x[8] if n_done > 0 else 0.0
    n_run = len(running_starts)
    run_units = sum(running_units)
    x[10] = float(run_units) / float(n_run) if n_run > 0 else 0.0
    x[11] = float(n_run)
    x[12] = float(now - min(running_starts)) if n_run > 0 else 0.0
    x[13] = float(n_run * now - sum(running_starts))
    x[14] = float(run_units)
    x[15] = float(now - last_end) if last_end >= 0 else 0.0
    a = 2.0 * math.pi * float(submit % 86400) / 86400.0
    x[16], x[17] = math.cos(a), math.sin(a)
    a = 2.0 * math.pi * float(submit % 604800) / 604800.0
    x[18], x[19] = math.cos(a), math.sin(a)
    return x


class RegressionModel:
    """NAG-trained degree-2 polynomial regression (the oracle's copy of the compiled model)."""

    def __init__(self, eta: float, lam: float, over_sq: int, under_sq: int, weight_kind: int, over_slope: float = 1.0,
                 under_slope: float = 1.0):
        self.eta, self.lam = float(eta), float(lam)
        self.over_slope, self.under_slope = float(over_slope), float(under_slope)
        self.over_sq, self.under_sq, self.weight_kind = over_sq, under_sq, weight_kind
        self.w = [0.0] * DIM
        self.s = [0.0] * DIM
        self.G = [0.0] * DIM
        self.N, self.n = 0.0, 1.0

    @staticmethod
    def phi(x: list[float]) -> list[float]:
        """The model's terms of features ``x``: 1, each feature, each square, each product of two."""
        out = [1.0] + list(x) + [v * v for v in x]
        for i in range(N_FEATURES):
            for j in range(i + 1, N_FEATURES):
                out.append(x[i] * x[j])
        return out

    def value(self, phi: list[float]) -> float:
        """The model's value at terms ``phi``."""
        f = 0.0
        for wi, pi in zip(self.w, phi):
            f += wi * pi
        return f

    def predict(self, x: list[float], req: int) -> int:
        """The prediction in whole seconds, clipped to [1, req]."""
        f = self.value(self.phi(x))
        if not f >= 1.0:
            return 1
        if f >= float(req):
            return int(req)
        return int(f)

    def fit(self, x: list[float], y: float, gamma: float) -> None:
        """One NAG step towards run time ``y`` with weight ``gamma``."""
        phi = self.phi(x)
        w, s, G = self.w, self.s, self.G
        for i, p in enumerate(phi):
            a = abs(p)
            if a > s[i]:
                if s[i] > 0.0:
                    w[i] = w[i] * (s[i] / a)
                s[i] = a
        norm = 0.0
        for i, p in enumerate(phi):
            if s[i] > 0.0:
                norm += (p * p) / (s[i] * s[i])
        self.N += norm
        e = self.value(phi) - float(y)
        if e > 0.0:
            dl = gamma * self.over_slope * (2.0 * e if self.over_sq else 1.0)
        elif e < 0.0:
            dl = gamma * self.under_slope * (2.0 * e if self.under_sq else -1.0)
        else:
            dl = 0.0
        for i, p in enumerate(phi):
            g = dl * p + self.lam * w[i]
            G[i] += g * g
            if G[i] > 0.0 and s[i] > 0.0:
                w[i] = w[i] - self.eta * g / (math.sqrt(self.N * G[i] / self.n) * s[i])
        self.n += 1.0
