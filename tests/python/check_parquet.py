"""Interop checks for arrow-sparse Parquet archives, run by tests/parquet.rs.

    python tests/python/check_parquet.py CORPUS_DIR

CORPUS_DIR/manifest.json (written by the Rust test) lists:

* "archives": [{"parquet": file, "dump": file}] -- an archive and the tensor's
  `arrow-sparse dump` line (format/SPEC.md section 7), written from the original
  tensor (for a DM tensor: from its storage, whose entries are the rows). For each
  one, pyarrow.parquet reads the file; the rows are checked against the
  `arrow_sparse` metadata (columns, types, row count); the entries are rebuilt as
  coordinate arrays and compared with the dump; 2-D tensors are rebuilt as
  scipy.sparse matrices (CSR / CSC straight from the rows in storage order, with
  indptr from the runs of the major coordinate) and compared with the dump's.
  GCS archives (rows: N-D coordinates) are reduced with their `dimensions` and
  `partitioning` to the 2-D matrix, which must come in CSR / CSC storage order
  and equal the reduction of the dump's entries.
* "spmv": [{"matrix": file, "x": file, "y": file}] -- a matrix archive, a vector x
  and arrow-sparse's y = A x (dense 1-D archives). DuckDB computes A x as SQL over
  the archives (join with the vector table, GROUP BY row) and must match y.

Exit status 0 when every check passes; failures are listed on stderr.
"""

import json
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp

FAILURES = []


def fail(what, detail):
    FAILURES.append(f"{what}: {detail}")


def value_of(x, value_type):
    """A dump value (JSON) as a Python number comparable with the archive's."""
    if isinstance(x, str):
        return float({"NaN": "nan", "inf": "inf", "-inf": "-inf"}[x])
    if value_type == "float16":
        return float(np.float32(x))
    if value_type == "float32":
        return float(np.float32(x))
    return x


def column_values(table, name, value_type):
    col = table.column(name).to_numpy()
    if value_type in ("float16", "float32"):
        return [float(np.float32(v)) for v in col]
    if value_type == "float64":
        return [float(v) for v in col]
    return [int(v) for v in col]


def check_archive(path, dump_line):
    dump = json.loads(dump_line)
    meta_raw = pq.read_metadata(path).metadata[b"arrow_sparse"]
    meta = json.loads(meta_raw)
    table = pq.read_table(path)
    what = os.path.basename(path)
    vt = meta["value_type"]
    if meta["version"] != 1:
        return fail(what, f"version {meta['version']}")
    # a DM archive's rows are its storage's: shape, names, parameters
    fmt = meta["dm"]["storage"] if meta["format"] == "dm" else meta["format"]
    if meta["format"] == "dm" and not (isinstance(meta["dm"]["maps"], list) and meta["dm"]["maps"]):
        return fail(what, "dm archive without maps")
    if fmt != dump["format"]:
        return fail(what, f"metadata format {fmt!r} != dump {dump['format']!r}")
    for key in ("shape", "dim_names", "value_type"):
        if meta[key] != dump[key]:
            return fail(what, f"metadata {key} {meta[key]!r} != dump {dump[key]!r}")
    names = meta["columns"]
    if table.num_rows != meta["rows"]:
        return fail(what, f"{table.num_rows} rows, metadata says {meta['rows']}")
    if table.column_names[: len(names) + 1] != names + [meta["value_column"]]:
        return fail(what, f"columns {table.column_names} vs metadata {names}")
    expected_type = {
        "int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(),
        "uint8": pa.uint8(), "uint16": pa.uint16(), "uint32": pa.uint32(), "uint64": pa.uint64(),
        "float16": pa.float16(), "float32": pa.float32(), "float64": pa.float64(),
    }[vt]
    if table.schema.field(meta["value_column"]).type != expected_type:
        return fail(what, f"value column type {table.schema.field('value').type} != {vt}")
    for n, extent in zip(names, meta["shape"]):
        t = table.schema.field(n).type
        if not pa.types.is_signed_integer(t):
            return fail(what, f"column {n} has type {t}")
        limit = {8: 127, 16: 32767, 32: 2**31 - 1, 64: 2**63 - 1}[t.bit_width]
        if extent - 1 > limit:
            return fail(what, f"column {n} ({t}) cannot hold extent {extent}")
    coords = [table.column(n).to_numpy().astype(np.int64) for n in names]
    values = column_values(table, meta["value_column"], vt)
    rows = [tuple(int(c[k]) for c in coords) for k in range(table.num_rows)]
    for k, row in enumerate(rows):
        if any(x < 0 or x >= e for x, e in zip(row, meta["shape"])):
            return fail(what, f"row {k} {row} outside shape {meta['shape']}")
    entries = list(zip(rows, values))
    if fmt == "dense":
        entries = [e for e in entries if e[1] != 0]
    # the dump sorts stably by coordinates (duplicates keep storage order)
    entries.sort(key=lambda e: e[0])
    want = [(tuple(e[:-1]), value_of(e[-1], vt)) for e in dump["entries"]]
    if entries != want:
        return fail(what, f"entries differ: {entries[:5]}... vs {want[:5]}...")
    if fmt == "gcs" and vt != "float16":
        check_gcs(what, meta, coords, table, want)
    if len(meta["shape"]) == 2 and vt not in ("float16",):
        check_scipy(what, fmt, meta, coords, table, want)


def reduce_part(coords, shape, part):
    """Row-major linear index of the coordinates over the dimensions `part`
    (format/SPEC.md 8.1), and the part's extent."""
    extent = 1
    linear = np.zeros(len(coords[0]) if coords else 0, dtype=np.int64)
    for d in part:
        linear = linear * shape[d] + coords[d]
        extent *= shape[d]
    return linear, extent


def check_gcs(what, meta, coords, table, want):
    """A GCS archive's rows are N-D coordinates in the storage order of the
    reduced matrix: reduce them with the metadata's mapping, rebuild the CSR / CSC
    matrix with scipy, and compare it with the reduction of the original entries."""
    g = meta["gcs"]
    shape, dims, (p,) = meta["shape"], g["dimensions"], g["partitioning"]
    if sorted(dims) != list(range(len(shape))):
        return fail(what, f"gcs dimensions {dims} are not a permutation")
    rows, nrows = reduce_part(coords, shape, dims[:p])
    cols, ncols = reduce_part(coords, shape, dims[p:])
    data = table.column(meta["value_column"]).to_numpy()
    row_axis = g["compressed_axis"] == "row"
    major, minor = (rows, cols) if row_axis else (cols, rows)
    nmajor = nrows if row_axis else ncols
    if np.any(np.diff(major) < 0):
        return fail(what, "rows are not in the storage order of the reduced matrix")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(major, minlength=nmajor))])
    build = sp.csr_matrix if row_axis else sp.csc_matrix
    m = build((data, minor, indptr), shape=(nrows, ncols))
    m.check_format(full_check=True)
    if want:
        wc = [np.array(c, dtype=np.int64) for c in zip(*[e[0] for e in want])]
        v = np.array([e[1] for e in want], dtype=data.dtype)
    else:
        wc, v = [np.array([], dtype=np.int64) for _ in shape], np.array([], dtype=data.dtype)
    wr, _ = reduce_part(wc, shape, dims[:p])
    wk, _ = reduce_part(wc, shape, dims[p:])
    reference = sp.coo_matrix((v, (wr, wk)), shape=(nrows, ncols)).tocsr()
    diff = (m.tocsr() - reference).tocoo()
    if diff.nnz and np.any(diff.data != 0):
        fail(what, f"reduced GCS matrices differ in {diff.nnz} places")


def check_scipy(what, fmt, meta, coords, table, want):
    shape = tuple(meta["shape"])
    data = table.column(meta["value_column"]).to_numpy()
    if want:
        r, c = zip(*[e[0] for e in want])
        v = np.array([e[1] for e in want], dtype=data.dtype)
    else:
        r, c, v = (), (), np.array([], dtype=data.dtype)
    reference = sp.coo_matrix((v, (np.array(r, dtype=np.int64), np.array(c, dtype=np.int64))), shape=shape).tocsr()
    if fmt in ("csr", "csc"):
        major, minor = (0, 1) if fmt == "csr" else (1, 0)
        counts = np.bincount(coords[major], minlength=shape[major])
        indptr = np.concatenate([[0], np.cumsum(counts)])
        build = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
        m = build((data, coords[minor], indptr), shape=shape)
        m.check_format(full_check=True)
        # storage order: the rows must already be grouped by major coordinate
        if np.any(np.diff(coords[major]) < 0):
            return fail(what, "rows are not in CSR/CSC storage order")
    else:
        m = sp.coo_matrix((data, (coords[0], coords[1])), shape=shape)
        if fmt == "dense":
            m = sp.coo_matrix(m.toarray())
    diff = (m.tocsr() - reference).tocoo()
    if diff.nnz and np.any(diff.data != 0):
        fail(what, f"scipy matrices differ in {diff.nnz} places")


def check_spmv(item, corpus):
    try:
        import duckdb
    except ImportError:
        # scripts/test-all.sh sets ARROW_SPARSE_PYTHON to the venv that has duckdb
        if os.environ.get("CI") in ("true", "1") or os.environ.get("ARROW_SPARSE_PYTHON"):
            return fail("duckdb", "not installed in the venv (scripts/requirements-interop.txt)")
        print("SKIPPED: duckdb not installed", file=sys.stderr)
        return
    a = os.path.join(corpus, item["matrix"])
    x = os.path.join(corpus, item["x"])
    y = os.path.join(corpus, item["y"])
    meta = json.loads(pq.read_metadata(a).metadata[b"arrow_sparse"])
    xmeta = json.loads(pq.read_metadata(x).metadata[b"arrow_sparse"])
    row, col = meta["columns"]
    xi = xmeta["columns"][0]
    sql = f"""
        SELECT a."{row}" AS i, SUM(a.value * x.value) AS y
        FROM read_parquet('{a}') AS a
        JOIN read_parquet('{x}') AS x ON a."{col}" = x."{xi}"
        GROUP BY a."{row}"
        ORDER BY i
    """
    got = duckdb.sql(sql).fetchall()
    expected = pq.read_table(y).column("value").to_numpy()
    dense = np.zeros(meta["shape"][0], dtype=np.float64)
    for i, v in got:
        dense[i] = v
    what = f"duckdb spmv {item['matrix']}"
    if meta["value_type"].startswith("float"):
        scale = np.maximum(np.abs(expected), 1.0)
        if not np.all(np.abs(dense - expected) <= 1e-9 * scale):
            return fail(what, f"max error {np.max(np.abs(dense - expected) / scale)}")
    elif not np.array_equal(dense.astype(np.int64), expected.astype(np.int64)):
        return fail(what, "integer results differ")
    print(f"duckdb spmv {item['matrix']}: {len(got)} rows match arrow-sparse", file=sys.stderr)


def main():
    corpus = sys.argv[1]
    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = json.load(f)
    for item in manifest.get("archives", []):
        with open(os.path.join(corpus, item["dump"])) as f:
            line = f.read().strip()
        try:
            check_archive(os.path.join(corpus, item["parquet"]), line)
        except Exception as e:  # report and continue
            fail(item["parquet"], repr(e))
    for item in manifest.get("spmv", []):
        try:
            check_spmv(item, corpus)
        except Exception as e:
            fail(item["matrix"], repr(e))
    n = len(manifest.get("archives", []))
    if FAILURES:
        for f in FAILURES[:50]:
            print("FAIL", f, file=sys.stderr)
        print(f"{len(FAILURES)} failure(s) in {n} archives", file=sys.stderr)
        sys.exit(1)
    kinds = {}
    for item in manifest.get("archives", []):
        meta = json.loads(pq.read_metadata(os.path.join(corpus, item["parquet"])).metadata[b"arrow_sparse"])
        kinds[meta["format"]] = kinds.get(meta["format"], 0) + 1
    print(f"pyarrow {pa.__version__}: {n} archives read and checked {kinds}", file=sys.stderr)


if __name__ == "__main__":
    main()
