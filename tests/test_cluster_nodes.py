"""Clusters of nodes: built-in Beocat clusters, TOML files, Slurm's node-range syntax, and clear errors."""
import pytest

import pbf
from pbf.cluster import Cluster, Node, expand_hostlist
from pbf.errors import ConfigError


def test_builtin_beocat_is_the_normal_partition_with_memory():
    b = Cluster.builtin("beocat")
    t = b.totals()
    assert (t["nodes"], t["cores"], t["gpus"]) == (299, 9128, 0)
    assert t["classes"] == {"dwarf": 60, "elf": 29, "hero": 32, "mage": 4, "mole": 119, "warlock": 17, "wizard": 38}
    moles = [n for n in b.nodes if n.klass == "mole"]
    assert all(n.cores == 20 and n.memory_mb == 27 * 1024 for n in moles)       # ~1.35 GB a core
    assert 44 < t["memory_mb"] / 1024 ** 2 < 49                                     # TiB
    assert b.has_resources
    # the same nodes, names and core order as the unit-only Beocat cluster replays have always used
    plain = pbf.beocat_cluster()
    assert [(n.name, n.cores) for n in plain.nodes] == [(n.name, n.cores) for n in b.nodes]
    assert not plain.has_resources


def test_builtin_beocat_gpu():
    g = Cluster.builtin("beocat-gpu")
    assert g.totals()["gpus"] == 157
    assert sum(1 for n in g.nodes if n.gpus) == 46
    assert g.nodes[g.node_index("wizard10")].gpus == 3
    assert all("gpu" in n.features for n in g.nodes if n.gpus)


def test_pairs_still_make_a_cluster():
    c = Cluster(units=8, nodes=(("a", 4), ("b", 4)))
    assert c.nodes == (Node("a", 4), Node("b", 4)) and not c.has_resources
    assert c.first_units() == [0, 4]
    with pytest.raises(ConfigError, match="nodes add up to 8 cores, but units=9"):
        Cluster(units=9, nodes=(("a", 4), ("b", 4)))
    with pytest.raises(ConfigError, match="listed twice"):
        Cluster(units=8, nodes=(("a", 4), ("a", 4)))


@pytest.mark.parametrize("expr, names", [
    ("n1", ["n1"]),
    ("dwarf[01-03]", ["dwarf01", "dwarf02", "dwarf03"]),
    ("dwarf[08-10,12],elf3", ["dwarf08", "dwarf09", "dwarf10", "dwarf12", "elf3"]),
    ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
    ("a[9-11]", ["a9", "a10", "a11"]),
])
def test_hostlists(expr, names):
    assert expand_hostlist(expr) == names


@pytest.mark.parametrize("expr", ["a[3-1]", "a[1-2", "a]", "a,,b", "a[x]", ""])
def test_bad_hostlists(expr):
    with pytest.raises(ValueError):
        expand_hostlist(expr)


def test_toml_cluster(tmp_path):
    p = tmp_path / "site.toml"
    p.write_text('name = "site"\n'
                 '[[nodes]]\nnames = "cpu[01-03]"\ncores = 16\nmemory = "64G"\n'
                 '[[nodes]]\nname = "gpu1"\ncores = 32\nmemory_mb = 256000\ngpus = 4\nfeatures = ["a100", "ib"]\n'
                 'class = "gpu"\n')
    c = Cluster.load(str(p))
    assert c.name == "site" and c.units == 80 and len(c.nodes) == 4
    assert c.nodes[0] == Node("cpu01", 16, 65536, 0, (), "cpu")
    assert c.nodes[3] == Node("gpu1", 32, 256000, 4, ("a100", "ib"), "gpu")


@pytest.mark.parametrize("body, message", [
    ('[[nodes]]\nnames = "a[1-2]"\n', r"entry 1: field cores: got None, expected a whole number from 1 to 1,048,576"),
    ('[[nodes]]\nname = "a"\ncores = 4\nmemory = "lots"\n', r"field memory: got 'lots', expected a size such as"),
    ('[[nodes]]\nname = "a"\ncores = 4\ncolour = 1\n', r"unknown field\(s\) colour"),
    ('[[nodes]]\nnames = "a[2-1]"\ncores = 4\n', r"field names: got 'a\[2-1\]', expected a range a-b"),
    ('[[nodes]]\nname = "a"\ncores = 4\n[[nodes]]\nname = "a"\ncores = 2\n', "listed twice"),
    ('[[nodes]]\nname = "a"\ncores = 4\ngpus = -1\n', r"field gpus: got -1, expected a whole number from 0 to 65,536"),
    ('nodes = 3\n', r"no \[\[nodes\]\] entries"),
    ('[[nodes]\n', "not valid TOML"),
])
def test_toml_errors_name_the_entry_and_field(tmp_path, body, message):
    p = tmp_path / "bad.toml"
    p.write_text(body)
    with pytest.raises(ConfigError, match=message) as err:
        Cluster.from_toml(str(p))
    assert str(p) in str(err.value) or "listed twice" in message


def test_load_names_what_it_takes(tmp_path):
    with pytest.raises(ConfigError, match="not a built-in cluster"):
        Cluster.load(str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="unknown built-in cluster"):
        Cluster.builtin("nope")
