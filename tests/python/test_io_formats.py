#!/usr/bin/env python3
"""Interop check of arrow_sparse::io with scipy and pydata/sparse.

    .venv/bin/python tests/python/test_io_formats.py RUST_DIR ROUNDTRIP_CMD...

1. RUST_DIR holds files written by `cargo run --example io_roundtrip -- write RUST_DIR`
   and their manifest.jsonl: scipy.io.mmread, scipy.sparse.load_npz and
   sparse.load_npz must read them with exactly the entries, dtypes and shapes the
   manifest lists (.tns files are parsed here: no Python library reads them).
2. Files written here by scipy.io.mmwrite, scipy.sparse.save_npz and
   sparse.save_npz go through `ROUNDTRIP_CMD roundtrip IN OUT` (read by
   arrow-sparse, written as .arrow, read back, written in the same format); the
   libraries must read back exactly what they wrote: same header (Matrix Market),
   same class, dtypes and arrays (npz).

Exits non-zero on any failure. scripts/test-all.sh runs it.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.io
import scipy.sparse as sp
import sparse

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print(f"FAIL: {what}")
    return cond


def value(v):
    if isinstance(v, str):
        return {"NaN": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
    return v


def same(a, b, dtype):
    """Equal as values of `dtype` (NaN equals NaN; -0.0 equals 0.0)."""
    x, y = np.array([a]).astype(dtype)[0], np.array([b]).astype(dtype)[0]
    if np.issubdtype(np.dtype(dtype), np.floating) and np.isnan(x) and np.isnan(y):
        return True
    return x == y


def entries_of(obj):
    """Sorted [(coords, value)] of a dense array, scipy sparse or pydata/sparse array."""
    if isinstance(obj, np.ndarray):
        nz = np.nonzero(obj)
        coords = list(zip(*[c.tolist() for c in nz]))
        vals = obj[nz].tolist()
    elif sp.issparse(obj):
        c = obj.tocoo()
        coords = list(zip(*[x.tolist() for x in c.coords]))
        vals = c.data.tolist()
    else:
        c = obj.tocoo() if isinstance(obj, sparse.GCXS) else obj
        coords = [tuple(int(x) for x in c.coords[:, k]) for k in range(c.nnz)]
        vals = c.data.tolist()
    return sorted(zip(coords, vals), key=lambda e: e[0])


def compare_entries(name, got, want, dtype, values=True):
    if not check(len(got) == len(want), f"{name}: {len(got)} entries, expected {len(want)}"):
        return
    for (gc, gv), (wc, wv) in zip(got, want):
        ok = tuple(gc) == tuple(wc) and (not values or same(gv, wv, dtype))
        if not check(ok, f"{name}: entry {gc}={gv!r}, expected {wc}={wv!r}"):
            return


def parse_tns(path):
    """(shape or None, sorted entries) of a .tns file in any header style."""
    lines = [l.split() for l in open(path) if l.strip() and l[0] not in "#%"]
    shape, i = None, 0
    if lines and lines[0] == ["sptensor"]:
        shape, i = [int(x) for x in lines[2]], 4
    elif lines and len(lines[0]) == 1:
        shape, i = [int(x) for x in lines[1]], 2
        if i < len(lines) and len(lines[i]) == 1:
            i += 1
    ents = [(tuple(int(x) - 1 for x in l[:-1]), float(l[-1])) for l in lines[i:]]
    return shape, sorted(ents, key=lambda e: e[0])


def check_rust_files(d):
    manifest = [json.loads(l) for l in open(os.path.join(d, "manifest.jsonl"))]
    check(len(manifest) >= 20, f"manifest lists {len(manifest)} files")
    for m in manifest:
        name, loader, t = m["name"], m["loader"], m["tensor"]
        path = os.path.join(d, name)
        vt, shape = t["value_type"], tuple(t["shape"])
        want = sorted([(tuple(e[:-1]), value(e[-1])) for e in t["entries"]], key=lambda e: e[0])
        if loader == "mmread":
            obj = scipy.io.mmread(path)
            info = scipy.io.mminfo(path)
            check(obj.shape == shape, f"{name}: shape {obj.shape} != {shape}")
            kind = "i" if vt.startswith(("int", "uint")) else "f"
            check(obj.dtype.kind == kind, f"{name}: mmread dtype {obj.dtype}, expected kind {kind}")
            sym = "skew-symmetric" if "skew" in name else "symmetric" if "symmetric" in name else "general"
            check(info[5] == sym, f"{name}: symmetry {info[5]}, expected {sym}")
            pattern = "pattern" in name
            check((info[4] == "pattern") == pattern, f"{name}: field {info[4]}")
            if isinstance(obj, np.ndarray):
                check(info[3] == "array", f"{name}: format {info[3]}")
            compare_entries(name, entries_of(obj), want, vt, values=not pattern)
        elif loader == "load_npz":
            obj = sp.load_npz(path)
            fmt = m["written_format"]
            check(obj.format == fmt, f"{name}: scipy format {obj.format}, expected {fmt}")
            check(obj.dtype.name == vt, f"{name}: dtype {obj.dtype}, expected {vt}")
            check(obj.shape == shape, f"{name}: shape {obj.shape} != {shape}")
            is_matrix = "matrix" in name
            check(isinstance(obj, sp.sparray) != is_matrix, f"{name}: {type(obj).__name__}")
            idx = obj.indices.dtype if fmt in ("csr", "csc") else obj.coords[0].dtype
            it = t["index_type"] or "int64"
            want_idx = it if it in ("int32", "int64") else "int64" if it in ("uint32", "uint64") else "int32"
            check(idx.name == want_idx, f"{name}: index dtype {idx}, expected {want_idx}")
            compare_entries(name, entries_of(obj), want, vt)
        elif loader == "sparse.load_npz":
            obj = sparse.load_npz(path)
            cls = "COO" if t["format"] in ("coo", "dense") else "GCXS"
            check(type(obj).__name__ == cls, f"{name}: {type(obj).__name__}, expected {cls}")
            check(obj.dtype.name == vt, f"{name}: dtype {obj.dtype}, expected {vt}")
            check(obj.shape == shape, f"{name}: shape {obj.shape} != {shape}")
            check(obj.fill_value == 0, f"{name}: fill value {obj.fill_value}")
            if cls == "COO":
                # sparse.load_npz trusts the file to be sorted without duplicates
                lin = np.ravel_multi_index(obj.coords, obj.shape) if obj.nnz else np.array([])
                check(bool(np.all(np.diff(lin) > 0)), f"{name}: COO coords not canonical")
            else:
                dense_ok = np.array_equal(obj.todense(), obj.tocoo().todense(), equal_nan=True)
                check(dense_ok, f"{name}: GCXS dense view differs from its COO view")
            compare_entries(name, entries_of(obj), want, vt)
        elif loader == "tns":
            tshape, got = parse_tns(path)
            if tshape is not None:
                check(tuple(tshape) == shape, f"{name}: header shape {tshape} != {shape}")
            compare_entries(name, got, want, vt)
        else:
            check(False, f"{name}: unknown loader {loader}")
        print(f"ok: {name} ({loader})")


def write_python_files(d):
    rng = np.random.default_rng(11)
    real = sp.coo_array((np.array([1.5, -2.25e-7, 3e300, 0.1, np.inf, np.nan]),
                         (np.array([0, 4, 2, 1, 3, 4]), np.array([3, 0, 1, 1, 2, 2]))), shape=(5, 4))
    scipy.io.mmwrite(os.path.join(d, "real.mtx"), real, comment="from scipy\nsecond line")
    ints = sp.random_array((6, 5), density=0.4, rng=rng, format="coo",
                           data_sampler=lambda size: rng.integers(-1000, 1000, size))
    scipy.io.mmwrite(os.path.join(d, "integer.mtx"), ints.astype(np.int64))
    scipy.io.mmwrite(os.path.join(d, "pattern.mtx"), ints, field="pattern")
    low = sp.tril(sp.random_array((7, 7), density=0.3, rng=rng), format="coo")
    scipy.io.mmwrite(os.path.join(d, "symmetric.mtx"), low + sp.triu(low.T, k=1), symmetry="symmetric")
    sl = sp.tril(sp.random_array((6, 6), density=0.4, rng=rng,
                                 data_sampler=lambda size: rng.integers(1, 50, size)), k=-1).astype(np.int64)
    scipy.io.mmwrite(os.path.join(d, "skew.mtx"), (sl - sl.T).tocoo(), symmetry="skew-symmetric")
    scipy.io.mmwrite(os.path.join(d, "array.mtx"), rng.standard_normal((3, 4)))
    s = rng.integers(-9, 9, (4, 4))
    scipy.io.mmwrite(os.path.join(d, "array_symmetric.mtx"), s + s.T, symmetry="symmetric")

    csr = sp.random_array((40, 30), density=0.1, rng=rng, format="csr")
    csr.indices, csr.indptr = csr.indices.astype(np.int32), csr.indptr.astype(np.int32)
    sp.save_npz(os.path.join(d, "csr_array.npz"), csr)
    csc = sp.csc_matrix(sp.random_array((20, 25), density=0.2, rng=rng, dtype=np.float32))
    csc.indices, csc.indptr = csc.indices.astype(np.int64), csc.indptr.astype(np.int64)
    sp.save_npz(os.path.join(d, "csc_matrix.npz"), csc)
    coo = sp.coo_array((np.array([3, -7, 11], dtype=np.int16),
                        (np.array([2, 0, 1], dtype=np.int32), np.array([1, 4, 0], dtype=np.int32))),
                       shape=(3, 5))
    sp.save_npz(os.path.join(d, "coo_i16.npz"), coo, compressed=False)
    coo3 = sp.coo_array((np.arange(1, 6, dtype=np.uint32),
                         (np.array([0, 1, 1, 2, 2]), np.array([3, 0, 2, 1, 1]), np.array([1, 1, 0, 4, 0]))),
                        shape=(3, 4, 5))
    sp.save_npz(os.path.join(d, "coo_3d.npz"), coo3)

    d4 = sparse.random((3, 4, 5, 6), density=0.1, random_state=3)
    sparse.save_npz(os.path.join(d, "pydata_coo_4d.npz"), d4)
    sparse.save_npz(os.path.join(d, "pydata_gcxs_02.npz"), sparse.GCXS(d4, compressed_axes=(0, 2)))
    g2 = sparse.GCXS(sparse.random((30, 20), density=0.2, random_state=4).astype(np.float32),
                     compressed_axes=(1,))
    sparse.save_npz(os.path.join(d, "pydata_gcxs_2d.npz"), g2)
    i3 = sparse.COO.from_numpy(rng.integers(0, 3, (4, 3, 5)).astype(np.int8))
    sparse.save_npz(os.path.join(d, "pydata_gcxs_i8.npz"), sparse.GCXS(i3, compressed_axes=(1,)))

    with open(os.path.join(d, "frostt.tns"), "w") as f:
        for c, v in [((1, 2, 3), 0.5), ((4, 1, 1), -2.0), ((2, 2, 7), 1e-9)]:
            f.write(" ".join(map(str, c)) + f" {v!r}\n")


def compare_round_trip(name, a, b):
    ext = os.path.splitext(name)[1]
    if ext == ".mtx":
        ia, ib = scipy.io.mminfo(a), scipy.io.mminfo(b)
        check(ia == ib, f"{name}: mminfo {ib} != scipy's {ia}")
        x, y = scipy.io.mmread(a), scipy.io.mmread(b)
        check(type(x) is type(y) and x.dtype == y.dtype, f"{name}: {type(y)} {y.dtype} != {type(x)} {x.dtype}")
        compare_entries(name, entries_of(y), entries_of(x), x.dtype)
    elif ext == ".npz":
        with np.load(a) as fa, np.load(b) as fb:
            check(sorted(fa.files) == sorted(fb.files), f"{name}: arrays {fb.files} != {fa.files}")
            for k in fa.files:
                if k in fb.files:
                    ok = fa[k].dtype == fb[k].dtype and fa[k].shape == fb[k].shape
                    ok = ok and np.array_equal(fa[k], fb[k], equal_nan=fa[k].dtype.kind == "f")
                    check(ok, f"{name}: array {k} differs: {fb[k]!r} vs {fa[k]!r}")
        if name.startswith("pydata"):
            x, y = sparse.load_npz(a), sparse.load_npz(b)
        else:
            x, y = sp.load_npz(a), sp.load_npz(b)
        check(type(x) is type(y), f"{name}: {type(y)} != {type(x)}")
        compare_entries(name, entries_of(y), entries_of(x), x.dtype)
    elif ext == ".tns":
        check(parse_tns(a) == parse_tns(b), f"{name}: entries differ")
    print(f"ok: {name} round trip")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    rust_dir, cmd = sys.argv[1], sys.argv[2:]
    check_rust_files(rust_dir)
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.makedirs(src)
        write_python_files(src)
        r = subprocess.run(cmd + ["roundtrip", src, out], capture_output=True, text=True)
        check(r.returncode == 0, f"round trip command failed: {r.stderr}")
        for name in sorted(os.listdir(src)):
            if os.path.exists(os.path.join(out, name)):
                compare_round_trip(name, os.path.join(src, name), os.path.join(out, name))
            else:
                check(False, f"{name}: not written back")
    if FAILURES:
        print(f"\n{len(FAILURES)} failure(s)")
        return 1
    print("\nall io interop checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
