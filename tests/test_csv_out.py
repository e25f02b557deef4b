"""The compiled CSV writer writes the csv module's bytes, whatever the columns hold."""
import csv
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pbf.csv_out as csv_out
from pbf.codes import LABELS
from pbf.csv_out import write_csv


def _csv_module(path, columns, labels):
    names = list(columns)
    cols = []
    for n in names:
        c = np.asarray(columns[n])
        cols.append(np.asarray(labels[n], dtype=object)[c].tolist() if n in labels else c.tolist())
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(names)
        w.writerows(zip(*cols))
    with open(path, "rb") as fh:
        return fh.read()


def _written(tmp_path, columns, labels=None):
    path = tmp_path / "out.csv"
    write_csv(path, columns, labels)
    assert not os.path.exists(str(path) + ".part")
    return path.read_bytes()


texts = st.text(alphabet=st.sampled_from(list('ab ,"\r\nxé;\t0')), max_size=6)
column = st.one_of(
    st.lists(st.integers(-2**63, 2**63 - 1)).map(lambda v: np.array(v, dtype=np.int64)),
    st.lists(st.integers(0, 2**16 - 1)).map(lambda v: np.array(v, dtype=np.uint16)),
    st.lists(st.integers(-128, 127)).map(lambda v: np.array(v, dtype=np.int8)),
    st.lists(st.floats(allow_nan=True, allow_infinity=True)).map(lambda v: np.array(v, dtype=np.float64)),
    st.lists(st.booleans()).map(lambda v: np.array(v, dtype=bool)),
    st.lists(st.one_of(texts, st.none(), st.integers(-5, 5), st.floats(-1e3, 1e3),
                        st.floats(-1e3, 1e3).map(np.float64), st.integers(-5, 5).map(np.int64))).map(
        lambda v: np.array(v + [None], dtype=object)[:-1]),
)


@settings(max_examples=200, deadline=None)
@given(cols=st.lists(column, min_size=1, max_size=5), rows=st.integers(0, 40), block=st.integers(1, 300))
def test_the_bytes_are_the_csv_modules(tmp_path_factory, cols, rows, block):
    tmp_path = tmp_path_factory.mktemp("csv")
    n = min([rows] + [len(c) for c in cols])
    columns = {f"c{k}": c[:n] for k, c in enumerate(cols)}
    old = csv_out._BLOCK_BYTES
    csv_out._BLOCK_BYTES = block          # blocks of a few rows, even of one: the seams must not show
    try:
        assert _written(tmp_path, columns) == _csv_module(tmp_path / "ref.csv", columns, {})
    finally:
        csv_out._BLOCK_BYTES = old


def test_label_columns_are_written_as_their_labels(tmp_path):
    rng = np.random.default_rng(3)
    n = 1000
    columns = {"time": rng.integers(0, 10**9, n), "kind": rng.integers(0, len(LABELS["kind"]), n),
               "exit": rng.integers(0, len(LABELS["exit"]), n), "wall_us": np.round(rng.random(n) * 50, 3)}
    labels = {"kind": LABELS["kind"], "exit": LABELS["exit"]}
    assert _written(tmp_path, columns, labels) == _csv_module(tmp_path / "ref.csv", columns, labels)


def test_a_lone_column_quotes_its_empty_fields_as_the_csv_module_does(tmp_path):
    columns = {"nodes": np.array(["", "a,b", "c"], dtype=object)}
    assert _written(tmp_path, columns) == b'nodes\r\n""\r\n"a,b"\r\nc\r\n'


def test_a_code_outside_its_labels_is_refused_and_nothing_is_written(tmp_path):
    with pytest.raises(ValueError, match="outside"):
        write_csv(tmp_path / "x.csv", {"a": [1, 2], "kind": [0, 99]}, {"kind": LABELS["kind"]})
    assert os.listdir(tmp_path) == []


def test_columns_of_different_lengths_are_refused(tmp_path):
    with pytest.raises(ValueError, match="different lengths"):
        write_csv(tmp_path / "x.csv", {"a": [1, 2], "b": [1]})
    assert os.listdir(tmp_path) == []


def test_a_failed_write_leaves_neither_the_file_nor_its_part(tmp_path, monkeypatch):
    def broken(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(csv_out, "format_block", broken)
    with pytest.raises(OSError):
        write_csv(tmp_path / "x.csv", {"a": [1, 2], "b": [3, 4]})
    assert os.listdir(tmp_path) == []


def test_columns_that_are_not_one_value_a_row_or_codes_that_are_not_integers_are_refused(tmp_path):
    with pytest.raises(ValueError, match="one value per row"):
        write_csv(tmp_path / "x.csv", {"a": [1, 2], "b": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="integers"):
        write_csv(tmp_path / "x.csv", {"a": [1, 2], "kind": [0.0, 1.0]}, {"kind": LABELS["kind"]})
    assert os.listdir(tmp_path) == []


def test_long_double_floats_are_written_as_the_csv_module_writes_them(tmp_path):
    columns = {"a": np.arange(3), "x": np.array([0.1, 1 / 3, 2.5], dtype=np.longdouble)}
    assert _written(tmp_path, columns) == _csv_module(tmp_path / "ref.csv", columns, {})


def test_the_formatter_refuses_a_table_index_outside_its_table():
    from pbf._csvout import format_block
    buf = np.empty(100, np.uint8)
    blob, offs = np.frombuffer(b"ab", np.uint8), np.array([0, 1, 2], np.int64)
    assert format_block([1, 0], [np.array([1, 0]), np.array([5, 6])], [blob, np.zeros(0, np.uint8)],
                        [offs, np.zeros(1, np.int64)], 0, 2, buf) == len(b"b,5\r\na,6\r\n")
    for bad in (np.array([2, 0]), np.array([-1, 0])):
        with pytest.raises(ValueError, match="outside the table"):
            format_block([1, 0], [bad, np.array([5, 6])], [blob, np.zeros(0, np.uint8)],
                         [offs, np.zeros(1, np.int64)], 0, 2, buf)
    with pytest.raises(ValueError, match="kind"):
        format_block([2], [np.array([1])], [blob], [offs], 0, 1, buf)
