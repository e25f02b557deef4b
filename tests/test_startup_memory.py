"""What a replay's process makes and reads only when used: the cleaned columns of a log kept in the
reader's own arrays, the per-pass columns read from the core on first use, the garbage collector held
off while the ``pbf`` process starts, the plugins imported by name. The results are the same.
(How long start-up takes is measured in docs/benchmarks.md, never asserted here.)"""
import copy
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pbf
from pbf.workload import Cleaning, JobTable, clean
from pbf.workload.jobs import FLOAT_FIELDS, SWF_FIELDS

ROOT = str(Path(pbf.__file__).resolve().parents[1])


def _raw_table(n, seed):
    rng = np.random.default_rng(seed)
    cols = {}
    for name in SWF_FIELDS:
        if name in FLOAT_FIELDS:
            cols[name] = rng.normal(0, 1e6, n)
        else:
            cols[name] = rng.integers(-3, 500, n)
    cols["submit"] = np.sort(rng.integers(-1, 10_000, n))
    cols["line"] = np.arange(1, n + 1)
    return JobTable(cols)


def _same(a, b):
    assert list(a.columns) == list(b.columns)
    for name in a.columns:
        x, y = a.columns[name], b.columns[name]
        assert x.dtype == y.dtype and np.array_equal(x.view(np.int64), y.view(np.int64)), name


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("cleaning", [Cleaning(), Cleaning(oversize="drop", cluster_units=300),
                                      Cleaning(fill_missing_request=True, units_from="requested"),
                                      Cleaning.none()])
def test_cleaning_in_place_keeps_the_same_rows(seed, cleaning):
    """A reader's own table is compacted in place: the same columns, bit for bit, as the copies."""
    n = [0, 1, 7, 1000, 4096, 20_000][seed]
    raw = _raw_table(n, seed)
    copied, report = clean(raw, cleaning)
    kept = {k: v.copy() for k, v in raw.columns.items()}
    again = JobTable(kept)
    reused, report2 = clean(again, cleaning, _reuse=True)
    _same(copied, reused)
    assert report.as_dict() == report2.as_dict()
    # without _reuse the input is left as it was
    _same(raw, _raw_table(n, seed))


def test_cleaning_in_place_copies_columns_it_does_not_own_alone():
    raw = _raw_table(500, 1)
    shared = dict(raw.columns)
    shared["queue"] = shared["partition"]       # (two names for one array)
    table = JobTable(shared)
    want, _ = clean(JobTable(dict(shared)), Cleaning())
    before = shared["partition"].copy()
    got, _ = clean(table, Cleaning(), _reuse=True)
    _same(want, got)
    assert np.array_equal(shared["partition"], before)


def test_read_swf_cleans_the_same_rows_as_a_copy(tmp_path):
    from pbf.workload.swf import SwfReader, read_swf
    rng = np.random.default_rng(5)
    lines = ["; MaxProcs: 64"]
    for i in range(3000):
        run = int(rng.integers(-1, 400))
        units = int(rng.integers(-1, 80))
        lines.append(f"{i + 1} {i * 3} 5 {run} {units} -1 -1 {units} {int(rng.integers(-1, 900))} -1 1 "
                     f"{int(rng.integers(1, 9))} 1 -1 1 -1 -1 -1")
    path = tmp_path / "t.swf"
    path.write_text("\n".join(lines) + "\n")
    got = read_swf(path)
    reader = SwfReader(path)
    (block,) = list(reader)
    want, _ = clean(block, Cleaning())
    _same(want, got)
    assert 0 < len(got) < 3000


def test_the_passes_are_read_from_the_core_when_first_used():
    from pbf.workload.lublin import generate_lublin
    table = generate_lublin(300, seed=3)
    a = pbf.replay(table)
    assert "_passes" in a.__dict__ and not isinstance(a.__dict__["_passes"], dict)
    passes = a.passes
    assert isinstance(a.__dict__["_passes"], dict) and a.passes is passes
    assert len(passes["time"]) == a.summary["passes"]["count"]
    assert int((passes["kind"] == 0).sum()) == a.summary["passes"]["full"]
    assert {"wall_us", "charged_us"} <= set(passes) and not {"wall_ns", "model_us"} & set(passes)
    # a copy and a pickle hold the columns, whether read already or not
    b = pbf.replay(table)
    for c in (pickle.loads(pickle.dumps(b)), copy.deepcopy(b), copy.copy(pbf.replay(table))):
        assert set(c.passes) == set(passes)
        for k in passes:
            if k != "wall_us":
                assert np.array_equal(c.passes[k], passes[k]), k
    # settable, as a dataclass field
    b.passes = {"x": np.zeros(1)}
    assert list(b.passes) == ["x"]
    # no per-pass records: the empty columns, at once
    c = pbf.replay(table, pbf.ReplayConfig(pass_records=False))
    assert isinstance(c.__dict__["_passes"], dict) and len(c.passes["depth"]) == 0


def _probe(code, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_the_collector_is_held_off_only_while_the_command_starts(tmp_path):
    """(In a process of its own: releasing the collector freezes what the process holds.)"""
    code = ("import gc, sys\nfrom pbf.cli import process\nout = []\n"
            "process.hold_collector(); out.append(gc.isenabled())\n"
            "process.release_collector(); out.append((gc.isenabled(), gc.get_freeze_count() > 0))\n"
            "gc.unfreeze(); process.release_collector(); out.append(gc.get_freeze_count())\n"
            "gc.disable(); process.hold_collector(); process.release_collector(); out.append(gc.isenabled())\n"
            "print(out, file=sys.stderr)")
    # held: off; released: on, the start-up frozen; a second release: nothing; a program that turned
    # the collector off keeps it off
    assert "[False, (True, True), 0, False]" in _probe(code, tmp_path)


def test_the_command_replays_with_the_collector_on(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 4\n1 0 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    probe = ("import gc, sys\nimport pbf.replayer as r\nseen = []\nreplay = r.replay\n"
             "def spy(*a, **k):\n    seen.append(gc.isenabled())\n    return replay(*a, **k)\n"
             "r.replay = spy\nfrom pbf.cli import main\n"
             f"sys.argv = ['pbf', 'replay', {str(path)!r}, '--quiet']\nstatus = main()\n"
             "print('seen', seen, gc.isenabled(), status, file=sys.stderr)")
    assert "seen [True] True 0" in _probe(probe, tmp_path)


def test_the_plugins_load_by_name(tmp_path):
    probe = ("import sys, pbf.plugins\n"
             "print(sorted(m for m in sys.modules if m.startswith('pbf.plugins.')), file=sys.stderr)")
    assert _probe(probe, tmp_path).strip() == "[]"
    import importlib

    import pbf.plugins as plugins
    for name in plugins.__all__:
        home = importlib.import_module(f"pbf.plugins.{plugins._HOME[name]}")
        assert getattr(plugins, name) is getattr(home, name)
    assert set(plugins.__all__) <= set(dir(plugins))
    with pytest.raises(AttributeError):
        plugins.nothing_of_that_name  # noqa: B018


def _mo(pairs):
    """A gettext catalog (.mo) of ``pairs`` (message, translation)."""
    import struct
    keys = [k.encode() for k, _ in sorted(pairs)]
    values = [v.encode() for _, v in sorted(pairs)]
    n = len(keys)
    data = 7 * 4 + 16 * n                   # (the header, then the two tables, then the strings)
    tables, offset = [], data
    for texts in (keys, values):
        for text in texts:
            tables += [len(text), offset]
            offset += len(text) + 1
    head = struct.pack("7I", 0x950412DE, 0, n, 7 * 4, 7 * 4 + 8 * n, 0, 0)
    return head + struct.pack(f"{4 * n}I", *tables) + b"".join(t + b"\0" for t in keys + values)


def test_argparse_is_left_to_a_catalog_that_translates_it(tmp_path):
    """The ``pbf`` process gives argparse its messages untranslated only when no catalog would
    translate them; with one (LANGUAGE=fr and a catalog for it), argparse still looks them up."""
    plain = _probe("import argparse, sys\nfrom pbf.cli import process\nprocess.untranslated_argparse()\n"
                   "print(argparse._ is str, argparse.ngettext('a', 'b', 2), file=sys.stderr)", tmp_path)
    folder = tmp_path / "locale" / "fr" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "messages.mo").write_bytes(_mo([("usage: ", "utilisation : ")]))
    code = (f"import argparse, gettext, os, sys\nos.environ['LANGUAGE'] = 'fr'\n"
            f"gettext.bindtextdomain('messages', {str(tmp_path / 'locale')!r})\n"
            "from pbf.cli import process\nprocess.untranslated_argparse()\n"
            "print(argparse._ is gettext.gettext, argparse._('usage: '), file=sys.stderr)")
    translated = _probe(code, tmp_path)
    if "True b" in plain:
        assert "True utilisation :" in translated, translated
    else:       # (this machine's own locale has a catalog: argparse is left alone there too)
        assert "False" in plain
