"""Slurm's association tree and its Fair Tree fair-share factor (Slurm 22.05's default algorithm).

An :class:`Associations` is the tree ``sacctmgr`` keeps: the root account, accounts below it (to any
depth) and user associations as leaves, each with its raw ``FairShare``. Each of the trace's users
charges its usage to one leaf. :meth:`Associations.flat` is the tree pbf assumes when none is given:
every trace user in an account of its own, every account and user with ``FairShare=1``, and beside
them the root account's own user ``root`` (which ``sacctmgr add cluster`` creates on every Slurm
cluster; it never runs a job here, but it counts among the user associations, as in Slurm).

:func:`fair_tree_factors` is the oracle's Fair Tree, ported from Slurm 22.05's
``src/plugins/priority/multifactor/fair_tree.c`` (``_apply_priority_fs``, ``_calc_tree_fs``,
``_calc_assoc_fs``, ``_cmp_level_fs``, ``_merge_accounts``) and ``src/common/assoc_mgr.c``
(``_normalize_assoc_shares_fair_tree``):

* an association's usage is its own plus its subtree's (usage is charged to every ancestor);
* level fair share ``S / U``: ``S`` its raw shares over its siblings' (itself included), ``U`` its
  usage over its parent's (0 when the parent has none); ``S = 0`` gives 0, ``U = 0`` infinity;
* siblings are sorted by level fair share, highest first, users before accounts where equal;
  an account's children are ranked next, before its next sibling (22.05's ``_count_tied_accounts``
  stops at the first account after a tied account, so tied accounts are never merged: each is
  walked on its own, its first child counted as tied);
* walking the tree in that order, each user association takes the next rank, counted down from the
  number of user associations; a user tied with the one before keeps its rank; its factor is
  ``rank / user associations``.

The compiled core (``ext/fair_tree.pxd``) computes the same factors in the same order of operations;
``tests/test_fairshare.py`` holds it to this module. This module walks the tree without recursion; the
core walks it level by level on its stack, so a tree may be at most :data:`MAX_DEPTH` levels deep, and a
``FairShare`` at most :data:`MAX_SHARES` (Slurm's 32-bit shares, below the value that stands for
``parent``).
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .bounded import parse_whole, where
from .errors import ConfigError

__all__ = ["Associations", "fair_tree_factors", "MAX_SHARES", "MAX_DEPTH"]

#: the largest raw ``FairShare`` (Slurm keeps shares in 32 bits; 2**31 - 1 stands for ``parent``)
MAX_SHARES = (1 << 31) - 2
#: the deepest an association may sit below the root (the compiled core walks the tree level by level
#: on its stack, as Slurm's ``_calc_tree_fs`` does; sites nest a handful of levels)
MAX_DEPTH = 1000


@dataclass(frozen=True)
class Associations:
    """An association tree. ``names[i]``: an account's name, or ``account/user`` for a user association;
    ``parent[i]``: the index of its account (-1 for the root, which is index 0; a parent always comes
    before its children); ``shares[i]``: its raw ``FairShare`` (>= 0); ``is_user[i]``: a user association
    (a leaf). ``user_of[k]`` is the leaf that the trace's k-th user (in pbf's dense user order, the
    sorted user ids) charges; ``by_name`` (pairs of user name and leaf) the leaf a user of that name
    charges, from which :meth:`for_users` makes ``user_of``."""
    names: tuple
    parent: tuple
    shares: tuple
    is_user: tuple
    user_of: tuple = ()
    by_name: tuple = ()
    source: str = ""

    def __post_init__(self):
        n = len(self.names)
        if not (len(self.parent) == len(self.shares) == len(self.is_user) == n) or n == 0:
            raise ConfigError("associations: names, parent, shares and is_user must have the same length >= 1")
        if self.parent[0] != -1 or self.is_user[0]:
            raise ConfigError("associations: the first association must be the root account (parent -1)")
        depth = [0] * n
        for i in range(1, n):
            p = self.parent[i]
            if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or not 0 <= p < i:
                raise ConfigError(f"associations: {self.names[i]!r} has parent {p!r}: a parent must come before "
                                  "its children")
            if self.is_user[p]:
                raise ConfigError(f"associations: {self.names[i]!r} sits below user association "
                                  f"{self.names[p]!r}; only accounts have children")
            depth[i] = depth[p] + 1
            if depth[i] > MAX_DEPTH:
                raise ConfigError(f"associations{' of ' + self.source if self.source else ''}: {self.names[i]!r} "
                                  f"sits {depth[i]:,} levels below the root; pbf takes trees at most {MAX_DEPTH:,} "
                                  "levels deep")
        for i, s in enumerate(self.shares):
            if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or not 0 <= s <= MAX_SHARES:
                raise ConfigError(f"associations: {self.names[i]!r} FairShare={s!r}: expected a whole number "
                                  f"from 0 to {MAX_SHARES:,}")
        for k, leaf in enumerate(self.user_of):
            if not (isinstance(leaf, (int, np.integer)) and not isinstance(leaf, bool) and 0 <= leaf < n
                    and self.is_user[leaf]):
                raise ConfigError(f"associations: trace user {k} is mapped to {leaf}, which is not a user "
                                  "association")

    @classmethod
    def flat(cls, n_users: int, root_user: bool = True) -> Associations:
        """Every one of ``n_users`` trace users in an account of its own (``a1`` .. ``aN``, user ``uK``),
        all with ``FairShare=1``; with ``root_user``, the root account's user ``root`` beside them, as
        ``sacctmgr add cluster`` makes it."""
        names, parent, shares, is_user, user_of = ["root"], [-1], [1], [False], []
        if root_user:
            names.append("root/root")
            parent.append(0)
            shares.append(1)
            is_user.append(True)
        for k in range(n_users):
            acct = len(names)
            names += [f"a{k + 1}", f"a{k + 1}/u{k + 1}"]
            parent += [0, acct]
            shares += [1, 1]
            is_user += [False, True]
            user_of.append(acct + 1)
        return cls(tuple(names), tuple(parent), tuple(shares), tuple(is_user), tuple(user_of))

    @classmethod
    def from_sacctmgr_dump(cls, path: str | os.PathLike, users: Sequence[str] | None = None) -> Associations:
        """The tree of a ``sacctmgr dump CLUSTER file=PATH`` file. Each user charges its association in
        its ``DefaultAccount`` (the account Slurm gives a job that names none), else its first one.
        ``users[k]`` (optional) names the trace's k-th user in pbf's order; without it the users are
        matched by name when a replay starts (:meth:`for_users`)."""
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8", errors="replace", newline=None) as fh:
                text = fh.read().split("\n")
        except OSError as exc:
            raise ConfigError(f"sacctmgr dump {path!r}: cannot read it ({exc.strerror or exc})") from None
        except ValueError as exc:                  # (a path with a NUL byte)
            raise ConfigError(f"sacctmgr dump {path!r}: cannot read it ({exc})") from None
        if text and text[0].startswith("\ufeff"):
            text[0] = text[0][1:]
        names, parent, shares, is_user, depth = ["root"], [-1], [1], [False], [0]
        index = {"root": 0}
        default_acct, leaves = {}, {}
        current = None
        for number, raw in enumerate(text, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if "\x00" in line:
                raise ConfigError(f"{path}, line {number}: binary data (a NUL byte): expected the text "
                                  "'sacctmgr dump CLUSTER file=...' writes")
            kind, _, rest = line.partition(" - ")
            kind = kind.strip()
            if not rest:
                raise ConfigError(f"{path}, line {number}: {_cut(line)!r}: expected 'Kind - 'name':Key=value...'"
                                  + _NOT_TEXT * ("\ufffd" in line))
            name, fields = _dump_fields(path, number, rest)
            if kind == "Cluster":
                if "fairshare" in fields:
                    shares[0] = _dump_shares(path, number, fields["fairshare"])
                continue
            if kind == "Parent":
                if name not in index:
                    raise ConfigError(f"{path}, line {number}: Parent - {_cut(name)!r}: no such account above this "
                                      "line")
                current = index[name]
                continue
            if kind not in ("Account", "User"):
                raise ConfigError(f"{path}, line {number}: {_cut(kind)!r}: expected Cluster, Parent, Account or User"
                                  + _NOT_TEXT * ("\ufffd" in line))
            if current is None:
                raise ConfigError(f"{path}, line {number}: {kind} - {_cut(name)!r} comes before any 'Parent - ' line")
            fs = _dump_shares(path, number, fields.get("fairshare", "1"))
            if depth[current] + 1 > MAX_DEPTH:
                raise ConfigError(f"{path}, line {number}: {kind} - {_cut(name)!r} would sit {depth[current] + 1:,} "
                                  f"levels below the root; pbf takes association trees at most {MAX_DEPTH:,} "
                                  "levels deep")
            if kind == "Account":
                if name in index:
                    raise ConfigError(f"{path}, line {number}: account {_cut(name)!r} appears twice")
                index[name] = len(names)
                names.append(name)
            else:
                acct = names[current]
                names.append(f"{acct}/{name}")
                leaves.setdefault(name, []).append((acct, len(names) - 1))
                if "defaultaccount" in fields:
                    default_acct[name] = fields["defaultaccount"]
            parent.append(current)
            shares.append(fs)
            is_user.append(kind == "User")
            depth.append(depth[current] + 1)
        by_name = []
        for user, cand in leaves.items():
            pick = [leaf for acct, leaf in cand if acct == default_acct.get(user)]
            by_name.append((user, (pick or [cand[0][1]])[0]))
        tree = cls(tuple(names), tuple(parent), tuple(shares), tuple(is_user), (), tuple(by_name), path)
        return tree.for_users(users) if users is not None else tree

    def for_users(self, users: Sequence[str]) -> Associations:
        """The same tree with ``user_of`` for these trace users (by name, :attr:`by_name`); a user with no
        association is an error, as in Slurm with ``AccountingStorageEnforce=associations``."""
        leaf = dict(self.by_name)
        missing = [u for u in users if u not in leaf]
        if missing:
            more = ""
            if len(missing) > 1:
                others = ", ".join(repr(_cut(u, 20)) for u in missing[1:4]) + (", ..." if len(missing) > 4 else "")
                more = f" (nor do {len(missing) - 1:,} more of the trace's {len(users):,} users: {others})"
            where = self.source or "associations"
            if not self.by_name:
                raise ConfigError(f"{where}: no user associations ('User - ' lines), so none of the trace's "
                                  f"{len(users):,} users has one (e.g. {_cut(missing[0])!r})")
            raise ConfigError(f"{where}: trace user {_cut(missing[0])!r} has no association" + more)
        return Associations(self.names, self.parent, self.shares, self.is_user, tuple(leaf[u] for u in users),
                            self.by_name, self.source)

    def with_users(self, user_of: Sequence[int]) -> Associations:
        """The same tree with the trace's users charging ``user_of`` (leaf per dense user)."""
        return Associations(self.names, self.parent, self.shares, self.is_user, tuple(int(x) for x in user_of),
                            self.by_name, self.source)

    @property
    def user_assoc_count(self) -> int:
        """The number of user associations (Slurm's ``g_user_assoc_count``)."""
        return int(sum(self.is_user))

    def shares_norm(self) -> np.ndarray:
        """Each association's raw shares over its siblings' (itself included); the root 1."""
        n = len(self.names)
        level = np.zeros(n)
        for i in range(1, n):
            level[self.parent[i]] += self.shares[i]
        out = np.ones(n)
        for i in range(1, n):
            ls = level[self.parent[i]]
            out[i] = float(self.shares[i]) / float(ls) if ls else 0.0
        return out

    def arrays(self) -> dict:
        """The tree as the compiled core takes it (``Core.set_associations``)."""
        return {"parent": np.asarray(self.parent, dtype=np.int64), "shares_norm": self.shares_norm(),
                "is_user": np.asarray(self.is_user, dtype=np.int8),
                "user_of": np.asarray(self.user_of, dtype=np.int64), "user_assocs": self.user_assoc_count}

    def describe(self) -> str:
        accts = sum(1 for u in self.is_user if not u) - 1
        return f"{accts} accounts, {self.user_assoc_count} user associations"


_NOT_TEXT = " (the line holds bytes that are not UTF-8 text: a binary or compressed file?)"


def _cut(text, most=60):
    text = str(text)
    return text if len(text) <= most else text[:most - 3] + "..."


def _dump_fields(path, number, rest):
    """The name and the ``:Key=value`` fields (keys lower-cased, quotes taken off) after ``Kind - ``;
    linear in the line's length (a hostile line makes no regular expression backtrack)."""
    rest = rest.strip()
    end = rest.find("'", 1) if rest.startswith("'") else -1
    if end < 0:
        raise ConfigError(f"{path}, line {number}: {_cut(rest)!r}: expected a quoted name ('name')")
    name, tail, fields = rest[1:end], rest[end + 1:], {}
    i, eq = tail.find(":"), -1
    while 0 <= i < len(tail):
        if eq <= i:
            eq = tail.find("=", i + 1)
            if eq < 0:
                break
        colon = tail.find(":", i + 1, eq)
        if colon >= 0:
            i = colon                                   # (a part without '=': passed over)
            continue
        key = tail[i + 1:eq].strip()
        if tail[eq + 1:eq + 2] == "'":
            close = tail.find("'", eq + 2)
            close = len(tail) if close < 0 else close
            value, i = tail[eq + 2:close], close + 1
        else:
            stop = tail.find(":", eq + 1)
            stop = len(tail) if stop < 0 else stop
            value, i = tail[eq + 1:stop].strip().strip("'"), stop
        if key and (key.replace("_", "").isalnum()):
            fields[key.lower()] = value
        i = tail.find(":", i)
    return name, fields


def _dump_shares(path, number, value):
    v = value.strip()
    if v.lower() == "parent":
        raise ConfigError(f"{path}, line {number}: FairShare=parent is not modelled by pbf")
    try:
        return parse_whole(v, 0, MAX_SHARES)
    except ValueError as exc:
        raise ConfigError(where(path, number, "FairShare", value, str(exc))) from None


def fair_tree_factors(tree: Associations, user_usage: Sequence[float]) -> np.ndarray:
    """Fair Tree's factor of every trace user (``tree.user_of``) given each one's decayed usage
    (module docstring): an array of ``len(user_usage)`` values in (0, 1]."""
    n = len(tree.names)
    usage = [0.0] * n
    for k, u in enumerate(user_usage):
        usage[tree.user_of[k]] += float(u)
    for i in range(n - 1, 0, -1):
        usage[tree.parent[i]] += usage[i]
    shares_norm = tree.shares_norm()
    children = [[] for _ in range(n)]
    for i in range(1, n):
        children[tree.parent[i]].append(i)
    level_fs = [0.0] * n
    factor = [0.0] * n
    total = tree.user_assoc_count
    rank = rnt = total

    def level(siblings):
        # _calc_tree_fs's first half: the siblings' level fair shares, and their order
        for a in siblings:
            pu = usage[tree.parent[a]]
            u = usage[a] / pu if pu != 0.0 else 0.0
            s = float(shares_norm[a])
            level_fs[a] = 0.0 if s == 0.0 else (math.inf if u == 0.0 else s / u)
        return sorted(siblings, key=lambda a: (-level_fs[a], 0 if tree.is_user[a] else 1, a))

    # the walk in rank order, without recursion (a tree may be deep): a stack of the levels being walked,
    # each [its siblings in order, the next one's place, the level fair share before it, account tied]
    stack = [[level(children[0]), 0, None, False]]
    while stack:
        frame = stack[-1]
        order, i, prev, account_tied = frame
        if i == len(order):
            stack.pop()
            continue
        a = order[i]
        tied = True if (i == 0 and account_tied) else (prev is not None and prev == level_fs[a])
        frame[1], frame[2] = i + 1, level_fs[a]
        if tree.is_user[a]:
            if not tied:
                rank = rnt
            factor[a] = rank / float(total)
            rnt -= 1
        elif children[a]:
            stack.append([level(children[a]), 0, None, tied])
    return np.array([factor[tree.user_of[k]] for k in range(len(user_usage))])
