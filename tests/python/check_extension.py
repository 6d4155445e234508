"""Sparse tensor columns through pyarrow (driven by tests/extension_column.rs).

For every file of the manifest (Arrow IPC files and Parquet tables written by
arrow-sparse, one sparse column "tensor" next to an "id" column):
  * the column comes back typed (python/arrow_sparse_ext.py's extension types);
  * every row, to dense through numpy, through scipy.sparse and through pyarrow's
    own sparse tensors (libarrow's to_tensor), equals the dense rows Rust wrote;
  * the rows go to pyarrow sparse tensor objects (GCS: row dicts) and back to a
    column, written as "py_<file>" for Rust to compare exactly with what it wrote.
"""

import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import arrow_sparse_ext as ase  # noqa: E402


def read(path):
    if path.suffix == ".parquet":
        return pq.read_table(path)
    with pa.ipc.open_file(path) as f:
        return f.read_all()


def write(path, table):
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    else:
        with pa.ipc.new_file(path, table.schema) as w:
            w.write_table(table)


def check_case(d, case):
    table = read(d / case["file"])
    col = table.column("tensor")
    assert isinstance(col.type, ase.SparseTensorType), col.type
    chunk = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    assert isinstance(chunk, ase.SparseTensorArray), type(chunk)
    fmt, meta = chunk.fmt, chunk.meta
    expected = case["rows"]
    assert len(chunk) == len(expected)
    objs = []
    for i, exp in enumerate(expected):
        want = np.zeros(exp["shape"], dtype=np.float64)
        for e in exp["entries"]:
            want[tuple(int(c) for c in e[:-1])] += float(e[-1])
        # float32 / float16 values are dumped in their shortest decimal form
        vt = np.dtype(meta["value_type"])
        if vt.kind == "f":
            want = want.astype(vt).astype(np.float64)
        row = chunk.row(i)
        assert tuple(row["shape"]) == tuple(exp["shape"])
        assert np.array_equal(chunk.to_dense(i).astype(np.float64), want), (case["file"], i)
        sci = chunk.to_scipy(i)
        assert np.array_equal(np.asarray(sci.toarray()).astype(vt).astype(np.float64), want), (case["file"], i)
        if fmt == "gcs":
            red = chunk.to_pyarrow(i)  # the reduced matrix, as libarrow sees it
            assert red.non_zero_length == len(row["values"])
            objs.append(row)
        else:
            obj = chunk.to_pyarrow(i)
            dense = obj.to_tensor().to_numpy().astype(vt).astype(np.float64)
            assert np.array_equal(dense, want), (case["file"], i)
            objs.append(obj)
    if fmt == "gcs":
        rebuilt = ase.from_rows("gcs", [dict(r) for r in objs])
    else:
        order = [chunk.row(i)["axis_order"] for i in range(len(chunk))] if fmt == "csf" else None
        rebuilt = ase.from_pyarrow(objs, index_type=meta["index_type"],
                                   indptr_type=meta.get("indptr_type"), axis_order=order)
    assert rebuilt.type.metadata == meta, (rebuilt.type.metadata, meta)
    out = pa.table({"id": table.column("id"), "tensor": rebuilt})
    write(d / case["out"], out)


def check_scipy_and_nulls(d):
    import scipy.sparse as sp

    m = [sp.random(5, 7, density=0.3, format="csr", random_state=k, dtype=np.float32) for k in range(3)]
    col = ase.from_scipy([m[0], None, m[1], m[2]], fmt="csc", index_type="int32", indptr_type="int64")
    assert col.null_count == 1 and col.row(1) is None
    for k, i in enumerate([0, 2, 3]):
        assert np.array_equal(col.to_scipy(i).toarray(), m[k].toarray())
    coo = ase.from_scipy(m, fmt="coo", index_type="int16")
    for k in range(3):
        assert np.array_equal(coo.to_dense(k), m[k].toarray())
    # a bad metadata string is refused when the type is rebuilt
    try:
        ase.CsrType.__arrow_ext_deserialize__(col.storage.type, b"{not json")
    except ase.ExtensionMetadataError:
        pass
    else:
        raise AssertionError("bad metadata accepted")


def main():
    d = Path(sys.argv[1])
    manifest = json.loads((d / "manifest.json").read_text())
    for case in manifest["cases"]:
        check_case(d, case)
    check_scipy_and_nulls(d)
    print(f"check_extension.py: {len(manifest['cases'])} files OK", file=sys.stderr)


if __name__ == "__main__":
    main()
