"""Fair Tree (Slurm 22.05's fair-share algorithm): the oracle by hand, the compiled core held to it on
random trees and usages (ties included), the sacctmgr dump reader, and replays that use it."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pbf
from pbf import _core
from pbf.errors import ConfigError
from pbf.fairshare import Associations, fair_tree_factors
from pbf.plugins.multifactor import Multifactor


def _compiled(tree, usage):
    core = _core.Core(4)
    a = tree.arrays()
    core.set_associations(a["parent"], a["shares_norm"], a["is_user"], a["user_of"], a["user_assocs"])
    return core.fair_share_factors(np.asarray(usage, dtype=np.float64))


def test_no_usage_gives_every_user_one():
    tree = Associations.flat(3)
    assert list(fair_tree_factors(tree, [0.0, 0.0, 0.0])) == [1.0, 1.0, 1.0]


def test_flat_tree_by_hand():
    # root's children: root/root (no usage: infinite), a1 (S 1/3, U 1: 1/3), a2 (infinite). Sorted
    # root/root, a2, a1: root/root takes rank 3; u2 under a2 is tied with it (rank 3); u1 takes what
    # is left of the count, 1: factor 1/3
    tree = Associations.flat(2)
    assert list(fair_tree_factors(tree, [10.0, 0.0])) == [1 / 3, 1.0]
    # both used: a1 S 1/3 U 0.25 (4/3), a2 S 1/3 U 0.75 (4/9): u1 rank 2, u2 rank 1
    assert list(fair_tree_factors(tree, [1.0, 3.0])) == [2 / 3, 1 / 3]
    assert list(_compiled(tree, [1.0, 3.0])) == [2 / 3, 1 / 3]


def test_without_root_user_and_ties():
    tree = Associations.flat(3, root_user=False)
    # u1 and u2 tied (same usage): both take rank 3; u3 rank 1 (the count went down twice)
    f = fair_tree_factors(tree, [1.0, 1.0, 5.0])
    assert list(f) == [1.0, 1.0, 1 / 3]


def test_deeper_tree_ranks_accounts_before_their_siblings():
    # root: acct A (shares 3) with users x (1), y (1); acct B (shares 1) with user z
    tree = Associations(("root", "A", "A/x", "A/y", "B", "B/z"), (-1, 0, 1, 1, 0, 4), (1, 3, 1, 1, 1, 1),
                        (False, False, True, True, False, True), (2, 3, 5))
    # A used 50 of 100 (S .75 / U .5 = 1.5), B 50 (S .25 / .5 = .5): A's users rank above z;
    # within A, x used 10 of 50 (.5 / .2) above y (.5 / .8)
    f = fair_tree_factors(tree, [10.0, 40.0, 50.0])
    assert list(f) == [1.0, 2 / 3, 1 / 3]
    assert list(_compiled(tree, [10.0, 40.0, 50.0])) == list(f)


def test_zero_shares_rank_last():
    tree = Associations(("root", "A", "A/x", "B", "B/y"), (-1, 0, 1, 0, 3), (1, 0, 1, 1, 1),
                        (False, False, True, False, True), (2, 4))
    # A has no shares (level fair share 0) though it used nothing
    assert list(fair_tree_factors(tree, [0.0, 100.0])) == [0.5, 1.0]


@st.composite
def trees(draw):
    names, parent, shares, is_user = ["root"], [-1], [1], [False]
    accounts = [0]
    for i in range(draw(st.integers(1, 14))):
        p = draw(st.sampled_from(accounts))
        user = draw(st.booleans())
        names.append(f"n{i}")
        parent.append(p)
        shares.append(draw(st.sampled_from([0, 1, 1, 2, 5])))
        is_user.append(user)
        if not user:
            accounts.append(len(names) - 1)
    leaves = [i for i, u in enumerate(is_user) if u]
    if not leaves:
        names.append("leaf")
        parent.append(0)
        shares.append(1)
        is_user.append(True)
        leaves = [len(names) - 1]
    k = draw(st.integers(1, len(leaves)))
    user_of = draw(st.permutations(leaves))[:k]
    usage = draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0, 7.5, 1e6]), min_size=k, max_size=k))
    return Associations(tuple(names), tuple(parent), tuple(shares), tuple(is_user), tuple(user_of)), usage


@settings(max_examples=300, deadline=None)
@given(trees())
def test_compiled_fair_tree_equals_oracle(case):
    tree, usage = case
    want = fair_tree_factors(tree, usage)
    got = _compiled(tree, usage)
    assert np.array_equal(got, want)
    assert np.all(want <= 1.0) and np.all(want > 0.0)


def test_set_associations_refuses_bad_trees_and_changes_nothing():
    core = _core.Core(4)
    with pytest.raises(ValueError, match="parent"):
        core.set_associations(np.array([-1, 2, 0]), np.ones(3), np.array([0, 1, 1], np.int8), np.array([1]), 2)
    with pytest.raises(ValueError, match="not a user association"):
        core.set_associations(np.array([-1, 0]), np.ones(2), np.array([0, 1], np.int8), np.array([0]), 1)
    with pytest.raises(ValueError, match="no association tree"):
        core.fair_share_factors([1.0])


def test_associations_validation():
    with pytest.raises(ConfigError, match="parent must come before"):
        Associations(("root", "a"), (-1, 5), (1, 1), (False, True))
    with pytest.raises(ConfigError, match="FairShare"):
        Associations(("root", "a"), (-1, 0), (1, -1), (False, True))
    with pytest.raises(ConfigError, match="fairshare"):
        Multifactor(fairshare="tree")
    with pytest.raises(ConfigError, match="fair-tree"):
        Multifactor(associations=Associations.flat(1))


DUMP = """\
# To edit this file start with a cluster line for the new cluster
Cluster - 'site':Fairshare=1:QOS='normal'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Account - 'physics':Description='physics':Organization='sci':Fairshare=30
Account - 'chem':Description='chem':Organization='sci':Fairshare=10
Parent - 'physics'
User - 'alice':DefaultAccount='physics':Fairshare=1
User - 'bob':DefaultAccount='chem':Fairshare=2
Parent - 'chem'
User - 'bob':DefaultAccount='chem':Fairshare=1
User - 'carol':Fairshare=1
"""


def test_sacctmgr_dump(tmp_path):
    path = tmp_path / "site.cfg"
    path.write_text(DUMP)
    tree = Associations.from_sacctmgr_dump(path, ["alice", "bob", "carol"])
    assert tree.names == ("root", "root/root", "physics", "chem", "physics/alice", "physics/bob", "chem/bob",
                          "chem/carol")
    assert tree.shares == (1, 1, 30, 10, 1, 2, 1, 1)
    assert [tree.names[i] for i in tree.user_of] == ["physics/alice", "chem/bob", "chem/carol"]
    assert tree.user_assoc_count == 5
    f = fair_tree_factors(tree, [5.0, 5.0, 0.0])
    assert list(f) == list(_compiled(tree, [5.0, 5.0, 0.0]))
    with pytest.raises(ConfigError, match="site.cfg: trace user 'dave' has no association"):
        Associations.from_sacctmgr_dump(path, ["dave"])
    bad = tmp_path / "bad.cfg"
    bad.write_text("Parent - 'root'\nAccount - 'x':Fairshare=many\n")
    with pytest.raises(ConfigError, match=r"bad.cfg, line 2: FairShare='many'"):
        Associations.from_sacctmgr_dump(bad, [])


def test_replay_with_fair_tree_favours_the_user_who_used_less():
    # u1 runs first and alone; at the next calc both wait with equal age: u2 (no usage) goes first
    jobs = pbf.JobTable.from_arrays(
        job_id=np.arange(1, 5), submit=np.array([0, 10, 10, 10]), wait=np.full(4, -1),
        run=np.array([100, 50, 50, 50]), alloc_procs=np.array([4, 4, 4, 4]), req_procs=np.array([4, 4, 4, 4]),
        req_time=np.array([100, 50, 50, 50]), status=np.ones(4, np.int64), user=np.array([1, 1, 2, 1]))
    mf = Multifactor(weight_age=0, weight_fairshare=1000, weight_job_size=0, weight_partition=0, weight_qos=0,
                     calc_period=5, fairshare="fair-tree")
    res = pbf.replay(jobs, pbf.ReplayConfig(units=4, priority=mf))
    start = dict(zip(res.jobs["id"], res.jobs["start"]))
    assert start[3] == 100 and start[2] > 100


def test_cli_replay_with_a_sacctmgr_dump_matches_sacct_user_names(tmp_path, capsys):
    from pbf.cli import main
    from pbf.workload.jobs import user_names
    trace = "tests/data/slurm_harness/hetero8_jobs.sacct"
    names = sorted(set(user_names(pbf.read_swf(trace)).values()))
    dump = tmp_path / "site.cfg"
    half = len(names) // 2
    dump.write_text("Cluster - 'h8':Fairshare=1\nParent - 'root'\nUser - 'root':DefaultAccount='root':Fairshare=1\n"
                    "Account - 'big':Fairshare=9\nAccount - 'small':Fairshare=1\nParent - 'big'\n"
                    + "".join(f"User - '{u}':DefaultAccount='big':Fairshare=1\n" for u in names[:half])
                    + "Parent - 'small'\n"
                    + "".join(f"User - '{u}':DefaultAccount='small':Fairshare=1\n" for u in names[half:]))
    outs = {}
    for label, extra in (("tree", ["--mf-associations", str(dump)]), ("flat", ["--mf-fair-share", "fair-tree"])):
        out = tmp_path / label
        assert main(["replay", trace, "--units", "100", "--priority", "multifactor", "--mf-weight",
                     "fairshare=100000", "--mf-calc-period", "60", "--quiet", "--out", str(out), *extra]) == 0
        outs[label] = (out / "jobs.csv").read_text()
    assert outs["tree"] != outs["flat"]          # the accounts' shares change who goes first
    dump.write_text("Parent - 'root'\nAccount - 'x':Fairshare=1\nParent - 'x'\nUser - 'nobody':Fairshare=1\n")
    capsys.readouterr()
    assert main(["replay", trace, "--units", "100", "--priority", "multifactor", "--mf-associations", str(dump),
                 "--quiet", "--out", str(tmp_path / "x")]) != 0
    assert ("site.cfg: trace user 'u1' has no association (nor do 7 more of the trace's 8 users: 'u5', 'u6', "
            "'u8', ...)") in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_chain_deeper_than_any_stack_is_walked_without_recursion():
    # 300,000 nested accounts with users at the top and the bottom (the compiled walk recursed per
    # level and crashed at about 185,000 levels); the oracle's refusal of such dumps is in
    # tests/test_hostile_site_files.py
    n = 300_000
    # 0 the root, 1..n-1 a chain of accounts, n a user at its bottom, n + 1 a user under the root
    parent = np.concatenate([[-1], np.arange(0, n - 1), [n - 1, 0]]).astype(np.int64)
    is_user = np.zeros(n + 2, dtype=np.int8)
    is_user[n] = is_user[n + 1] = 1
    core = _core.Core(4)
    core.set_associations(parent, np.ones(n + 2), is_user, np.array([n, n + 1]), 2)
    got = core.fair_share_factors(np.array([5.0, 0.0]))
    assert list(got) == [0.5, 1.0]
