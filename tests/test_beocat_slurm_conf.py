"""The shipped Beocat slurm.conf (traces/beocat.slurm.conf): made by traces/beocat_slurm_conf.py from the
built-in cluster, the same nodes as ``--cluster beocat``, and a replay with ``--slurm-conf`` on it."""
import importlib.util
import json
from pathlib import Path

import pbf
from pbf.cli import main

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "traces" / "beocat.slurm.conf"


def _generator():
    spec = importlib.util.spec_from_file_location("beocat_slurm_conf", ROOT / "traces" / "beocat_slurm_conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_file_is_what_the_script_writes():
    assert CONF.read_text() == _generator().beocat_slurm_conf()


def test_the_file_holds_the_built_in_cluster():
    def key(cluster):
        return sorted((n.name, n.cores, n.memory_mb, n.gpus) for n in cluster.nodes)
    read = pbf.Cluster.from_slurm_conf(CONF)
    assert key(read) == key(pbf.Cluster.load("beocat")) and read.units == 9128 and len(read.nodes) == 299


def test_a_replay_on_it(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["replay", str(ROOT / "traces" / "beocat-2000-1d.swf.gz"), "--slurm-conf", str(CONF),
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "(partition normal): " in text and "settings mapped" in text and "299 nodes, 9,128 cores" in text
    s = json.loads((out / "summary.json").read_text())
    assert s["jobs"]["completed"] == 2000 and s["config"]["node_search"] == "slurm"
    assert s["config"]["priority"].startswith("multifactor")
