"""The oracles' generic resources: a node's GPUs and other GRES (``nvme``, ``mps``, ...) and a job's
per-node ask of them, as a mapping kind -> count compared kind by kind.

Plain on purpose: the compiled planners pack the same counts as lanes of one word (``ext/counts.pxd``,
:mod:`pbf.gres`) and are held to this. A kind is planned only where some node has it: on a cluster
whose nodes have no generic resources besides GPUs a job's other asks are not planned (:func:`ask_of`).
"""
from __future__ import annotations

from collections.abc import Sequence

__all__ = ["Counts", "counts_of", "ask_of", "least"]


class Counts(dict):
    """Counts by kind (``{"gpu": 2, "nvme": 1}``); a missing kind counts 0. ``a >= b``: every kind of
    ``b`` at most ``a``'s (an int stands for GPUs alone, so a job's GPUs compare equal to its count);
    ``+`` and ``-`` kind by kind."""

    @staticmethod
    def of(value) -> Counts:
        return value if isinstance(value, Counts) else Counts(gpu=int(value))

    @property
    def gpus(self) -> int:
        return self.get("gpu", 0)

    def __ge__(self, other) -> bool:
        return all(self.get(k, 0) >= v for k, v in Counts.of(other).items())

    def __le__(self, other) -> bool:
        return Counts.of(other) >= self

    def __add__(self, other) -> Counts:
        o = Counts.of(other)
        return Counts({k: self.get(k, 0) + o.get(k, 0) for k in {**self, **o}})

    def __sub__(self, other) -> Counts:
        o = Counts.of(other)
        return Counts({k: self.get(k, 0) - o.get(k, 0) for k in {**self, **o}})

    __radd__ = __add__

    def __eq__(self, other) -> bool:
        if not isinstance(other, (int, dict)):
            return NotImplemented
        o = Counts.of(other) if isinstance(other, int) else other
        return all(self.get(k, 0) == o.get(k, 0) for k in {**self, **o})

    def __ne__(self, other) -> bool:
        same = self.__eq__(other)
        return same if same is NotImplemented else not same

    __hash__ = None

    def __rsub__(self, other) -> Counts:
        return Counts.of(other) - self


def counts_of(node) -> Counts:
    """A node's GPUs and other generic resources."""
    return Counts(gpu=node.gpus, **dict(node.gres))


def ask_of(req, nodes: Sequence) -> Counts:
    """What a job asks of each node it uses: its GPUs and, where some node of ``nodes`` has generic
    resources besides GPUs, its other kinds (a kind no node has: no node can meet it)."""
    if req.gres and any(n.gres for n in nodes):
        return Counts(gpu=req.gpus_per_node, **dict(req.gres))
    return Counts(gpu=req.gpus_per_node)


def least(a, b):
    """The lesser of a and b, kind by kind (ints: the lesser)."""
    if not isinstance(a, Counts) and not isinstance(b, Counts):
        return min(a, b)
    a, b = Counts.of(a), Counts.of(b)
    return Counts({k: min(a.get(k, 0), b.get(k, 0)) for k in {**a, **b}})
