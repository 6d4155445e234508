"""Files written by libarrow 26 (format/golden/, README there) read from Python
with exactly the entries, types, shapes and names libarrow reports (NAME.jsonl)."""

import numpy as np
import pytest

import arrow_sparse
from conftest import GOLDEN, entries, same_entries

FILES = sorted(p.stem for p in GOLDEN.glob("*.arrow"))


def test_golden_files_are_all_here():
    # a renamed or removed golden file must not silently shrink the suite
    assert len(FILES) == 18, FILES


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("how", ["read", "open", "trusted"])
def test_golden_file_reads_as_libarrow_reports(name, how):
    path = GOLDEN / f"{name}.arrow"
    if how == "read":
        tensors = arrow_sparse.read(path)
    elif how == "open":
        tensors = list(arrow_sparse.open(path))
    else:
        tensors = arrow_sparse.read(str(path), validate=False)
    lines = (GOLDEN / f"{name}.jsonl").read_text().splitlines()
    assert len(tensors) == len(lines)
    for i, (t, line) in enumerate(zip(tensors, lines)):
        want = same_entries(entries(t), line, f"{name}[{i}]")
        assert t.format == want["format"]
        assert t.value_type == want["value_type"]
        assert t.index_type == want["index_type"]
        assert list(t.shape) == want["shape"]
        assert t.dim_names == want["dim_names"]
        # libarrow's dense -> CSR / CSC / CSF of a float tensor whose only non-zeros
        # are -0.0 stores index entries with no values (SPEC 3.4): we read the empty
        # tensor, whatever non_zero_length libarrow wrote (CSF: the leaves, CSR: 0)
        assert t.nnz == (0 if want.get("valueless_entries") else want["nnz"])
        if "axis_order" in want:
            assert t.axis_order == want["axis_order"]
        for a in t.buffers().values():
            assert not a.flags.writeable and a.dtype == np.dtype(a.dtype.name)


@pytest.mark.parametrize("name", [n for n in FILES if "hugeshape" not in n])
def test_golden_to_scipy_and_to_numpy_match_the_entries(name):
    for t in arrow_sparse.read(GOLDEN / f"{name}.arrow"):
        sums = {}
        for e in entries(t):
            sums[e[:-1]] = sums.get(e[:-1], 0) + (int(e[-1]) if t.dtype.kind in "iu" else float(e[-1]))
        if t.dtype.kind in "iu" and any(v > np.iinfo(t.dtype).max for v in sums.values()):
            # duplicates whose sum does not fit: a typed error, not a wrapped value
            with pytest.raises(arrow_sparse.NumericOverflowError):
                t.to_numpy()
            assert t.to_scipy().nnz == t.nnz
            continue
        dense = np.zeros(t.shape, dtype=np.float64)
        for k, v in sums.items():
            dense[k] = v
        assert np.array_equal(t.to_numpy().astype(np.float64), dense, equal_nan=True)
        m = t.to_scipy()
        got = m.toarray() if hasattr(m, "toarray") else m.todense()
        assert np.array_equal(np.asarray(got, dtype=np.float64), dense, equal_nan=True)
