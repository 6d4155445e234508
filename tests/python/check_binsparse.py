#!/usr/bin/env python3
"""Binsparse interop of arrow_sparse::io with the PyPI reference (`binsparse`).

    python tests/python/check_binsparse.py write DIR [CONTAINERS]
        CONTAINERS: comma-separated, `npz` (default) and / or `h5`.
        The reference writes one file per case and container into DIR (every predefined format,
        several value and index types, iso values, structure, fill, extra
        descriptor keys, custom level formats) and DIR/manifest.json: for each file
        its dense contents (row-major list, dtype, shape). tests/binsparse.rs reads
        them with arrow-sparse and compares. With `h5`, each case is also written
        as .h5 (h5py: a variable-length string attribute, contiguous datasets), and
        a few as `_cstyle.h5`: the C reference's layout (a fixed-length UTF-8
        attribute, chunked datasets) with gzip and a big-endian dataset.

    python tests/python/check_binsparse.py check DIR
        DIR/manifest.json lists .npz / .h5 files arrow-sparse wrote, each with its dense
        contents and the descriptor fields it must carry; the reference must load
        every one (binsparse.load_binsparse) with exactly those entries, and the
        descriptor must have those fields.

Exits non-zero on any failure. tests/binsparse.rs runs it (cargo test ... --include-ignored).
"""
import json
import os
import sys

import numpy as np
import binsparse as bs

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print(f"FAIL: {what}")
    return cond


def matrix(shape, dtype, seed, symmetric=None):
    """A small dense array with about 40% non-zeros, none of them zero-valued."""
    rng = np.random.default_rng(seed)
    a = np.zeros(shape, dtype=dtype)
    mask = rng.random(shape) < 0.4
    vals = rng.integers(1, 9, size=shape)
    if np.dtype(dtype).kind == "b":
        a[mask] = True
    else:
        a[mask] = vals[mask].astype(dtype)
        if np.dtype(dtype).kind in "fi":
            neg = mask & (rng.random(shape) < 0.3)
            a[neg] = (-a[neg].astype(np.int64)).astype(dtype)
    if symmetric == "symmetric":
        a = np.tril(a) + np.tril(a, -1).T
    elif symmetric == "skew":
        a = np.tril(a, -1) - np.tril(a, -1).T
    return a


def levels_of(a, fmt, itype):
    """The named arrays of the predefined format `fmt` for the dense matrix/vector `a`."""
    it = np.dtype(itype)
    if fmt in ("DVEC", "DMAT", "DMATR"):
        return {"values": np.ascontiguousarray(a).reshape(-1)}
    if fmt == "DMATC":
        return {"values": np.asfortranarray(a).reshape(-1, order="F")}
    if fmt == "CVEC":
        (i,) = np.nonzero(a)
        return {"indices_0": i.astype(it), "values": a[i]}
    t = a.T if fmt in ("CSC", "DCSC", "COOC") else a
    r, c = np.nonzero(t)  # row-major order of t
    vals = t[r, c]
    if fmt in ("COO", "COOR", "COOC"):
        return {"indices_0": r.astype(it), "indices_1": c.astype(it), "values": vals}
    counts = np.bincount(r, minlength=t.shape[0])
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(it)
    if fmt in ("CSR", "CSC"):
        return {"pointers_to_1": ptr, "indices_1": c.astype(it), "values": vals}
    rows = np.nonzero(counts)[0]
    dptr = np.concatenate([[0], np.cumsum(counts[rows])]).astype(it)
    return {"indices_0": rows.astype(it), "pointers_to_1": dptr, "indices_1": c.astype(it), "values": vals}


CLASSES = {
    "DVEC": bs.DVECVector, "DMAT": bs.DMATRMatrix, "DMATR": bs.DMATRMatrix,
    "DMATC": bs.DMATCMatrix, "CVEC": bs.CVECVector, "CSR": bs.CSRMatrix,
    "CSC": bs.CSCMatrix, "DCSR": bs.DCSRMatrix, "DCSC": bs.DCSCMatrix,
    "COO": bs.COORMatrix, "COOR": bs.COORMatrix, "COOC": bs.COOCMatrix,
}


def make(a, fmt, itype, iso=False, fill=False):
    arrays = levels_of(a, fmt, itype)
    vals = arrays.pop("values")
    if iso:
        vals = np.broadcast_to(vals[:1], vals.shape)
    kw = {"fill": True, "fill_value": a.dtype.type(0)} if fill else {}
    return CLASSES[fmt](a.shape, int(vals.size), values=vals, **arrays, **kw)


def dense_of(t):
    """The dense contents of a reference tensor (its own class layouts)."""
    shape = tuple(t.shape)
    if isinstance(t, (bs.DVECVector, bs.DMATRMatrix)):
        return np.asarray(t.values).reshape(shape)
    if isinstance(t, bs.DMATCMatrix):
        return np.asarray(t.values).reshape(shape, order="F")
    if isinstance(t, bs.CustomTensor):
        return custom_dense(t)
    vals = np.asarray(t.values)
    out = np.zeros(shape, dtype=vals.dtype)
    if isinstance(t, bs.CVECVector):
        out[np.asarray(t.indices_0)] = vals
        return out
    swap = isinstance(t, (bs.CSCMatrix, bs.DCSCMatrix, bs.COOCMatrix))
    if isinstance(t, bs.COORMatrix):
        r, c = np.asarray(t.indices_0), np.asarray(t.indices_1)
    else:
        ptr = np.asarray(t.pointers_to_1).astype(np.int64)
        outer = np.asarray(t.indices_0) if isinstance(t, bs.DCSRMatrix) else np.arange(len(ptr) - 1)
        r = np.repeat(outer, np.diff(ptr))
        c = np.asarray(t.indices_1)
    if swap:
        r, c = c, r
    out[r, c] = vals
    return out


def custom_dense(t):
    """Dense / sparse level chains of a CustomTensor, transposed."""
    shape = tuple(t.shape)
    n = len(shape)
    perm = list(t.transpose) if t.transpose is not None else list(range(n))
    lshape = [shape[p] for p in perm]
    coords = []
    npos = 1
    level = t.level
    dim = 0
    while not isinstance(level, bs.ElementLevel):
        r = level.rank
        if isinstance(level, bs.DenseLevel):
            ext = int(np.prod(lshape[dim:dim + r]))
            coords = [np.repeat(c, ext) for c in coords]
            grid = np.indices(lshape[dim:dim + r]).reshape(r, -1)
            coords += [np.tile(g, npos) for g in grid]
            npos *= ext
        else:
            idx = [np.asarray(i).astype(np.int64) for i in level.indices]
            if level.pointers_to_next is not None:
                ptr = np.asarray(level.pointers_to_next).astype(np.int64)
                coords = [np.repeat(c, np.diff(ptr)) for c in coords]
            coords += idx
            npos = len(idx[0])
        dim += r
        level = level.level
    vals = np.asarray(level.values)
    out = np.zeros(lshape, dtype=vals.dtype)
    out[tuple(coords)] = vals
    return np.transpose(out, np.argsort(perm)) if perm != list(range(n)) else out


def dense_json(a):
    a = np.asarray(a)
    kind = "bool" if a.dtype.kind == "b" else str(a.dtype)
    return {"shape": list(a.shape), "dtype": kind, "values": a.reshape(-1).astype(float).tolist()}


def cstyle(src, dst):
    """Rewrite the reference's .h5 file `src` in the C reference's layout: the
    descriptor as a scalar fixed-length UTF-8 string, every dataset chunked and
    gzip-compressed, `values` big-endian."""
    import h5py
    with h5py.File(src, "r") as f:
        text = f.attrs["binsparse"]
        arrays = {k: f[k][()] for k in f}
    raw = text.encode() if isinstance(text, str) else bytes(text)
    with h5py.File(dst, "w") as g:
        tid = h5py.h5t.C_S1.copy()
        tid.set_size(len(raw))
        tid.set_cset(h5py.h5t.CSET_UTF8)
        attr = h5py.h5a.create(g.id, b"binsparse", tid, h5py.h5s.create(h5py.h5s.SCALAR))
        attr.write(np.array(raw, dtype=f"S{len(raw)}"), mtype=tid)
        for k, v in arrays.items():
            v = np.asarray(v)
            if k == "values" and v.dtype.itemsize > 1:
                v = v.astype(v.dtype.newbyteorder(">"))
            if v.size:
                g.create_dataset(k, data=v, chunks=(max(1, min(v.size, 3)),), compression="gzip")
            else:
                g.create_dataset(k, data=v)


def header_of(path):
    """The descriptor of a Binsparse .npz or .h5 file, as a dict."""
    if path.endswith(".npz"):
        with np.load(path) as z:
            return json.loads(str(z["binsparse"].item()))
    import h5py
    with h5py.File(path, "r") as f:
        text = f.attrs["binsparse"]
    return json.loads(text if isinstance(text, str) else bytes(text).decode())


def write(d, containers=("npz",)):
    os.makedirs(d, exist_ok=True)
    manifest = {}
    n_cstyle = [0]

    def save(name, tensor, dense, header=None, alias=None):
        for ext in containers:
            path = os.path.join(d, f"{name}.{ext}")
            bs.save_binsparse(tensor, path, header=header, alias=alias)
            manifest[f"{name}.{ext}"] = dense_json(dense)
            # every third case also in the C reference's layout (chunked, gzip)
            if ext == "h5" and n_cstyle[0] % 3 == 0:
                cstyle(path, os.path.join(d, f"{name}_cstyle.h5"))
                manifest[f"{name}_cstyle.h5"] = dense_json(dense)
        n_cstyle[0] += 1

    formats2 = ["CSR", "CSC", "DCSR", "DCSC", "COO", "COOR", "COOC", "DMAT", "DMATR", "DMATC"]
    cases = [("float64", "int64"), ("float32", "int32"), ("int32", "uint16"), ("uint8", "uint64"), ("int8", "int8")]
    seed = 1
    for fmt in formats2:
        for vt, it in cases:
            seed += 1
            a = matrix((5, 7), vt, seed)
            save(f"ref_{fmt}_{vt}_{it}", make(a, fmt, it), a)
    for fmt in ["CVEC", "DVEC"]:
        for vt, it in cases:
            seed += 1
            a = matrix((9,), vt, seed)
            save(f"ref_{fmt}_{vt}_{it}", make(a, fmt, it), a)
    # iso values, fill, bint8
    for fmt in ["CSR", "COO", "DCSC", "CVEC"]:
        a = matrix((6, 6) if fmt != "CVEC" else (8,), "float64", 100)
        a[a != 0] = 2.5
        save(f"ref_{fmt}_iso", make(a, fmt, "int64", iso=True), a)
        save(f"ref_{fmt}_fill", make(a, fmt, "int32", fill=True), a)
    b = matrix((4, 5), "bool", 7)
    save("ref_CSR_bint8", make(b, "CSR", "int64"), b)
    # structure: the reference keeps it as a descriptor key; one triangle is stored
    for st, kind in [("symmetric_lower", "symmetric"), ("symmetric_upper", "symmetric"),
                     ("skew_symmetric_lower", "skew"), ("skew_symmetric_upper", "skew")]:
        full = matrix((6, 6), "float64", 11, symmetric=kind)
        tri = np.tril(full) if st.endswith("lower") else np.triu(full)
        save(f"ref_CSR_{st}", make(tri, "CSR", "int32"), full, header={"structure": st})
        save(f"ref_COO_{st}", make(tri, "COO", "int64"), full, header={"structure": st})
    # extra descriptor keys
    a = matrix((5, 5), "float64", 33)
    save("ref_CSR_extra", make(a, "CSR", "int64"), a,
         header={"comment": "made by check_binsparse.py", "provenance": {"n": 1}})
    # custom formats: predefined ones spelled as levels, N-D COO (pydata) and N-D dense (numpy)
    for fmt in ["CSR", "CSC", "DCSR", "DCSC", "COOC", "DMATC"]:
        a = matrix((5, 6), "float64", 40 + len(fmt))
        save(f"ref_custom_{fmt}", make(a, fmt, "int64"), a, alias=False)
    import sparse as pydata
    from binsparse.conversions.sparse import from_sparse
    from binsparse.conversions.numpy import from_numpy
    a3 = matrix((3, 4, 5), "float32", 50)
    save("ref_custom_coo3", from_sparse(pydata.COO.from_numpy(a3)), a3)
    save("ref_custom_dense3", from_numpy(a3.astype(np.int16)), a3.astype(np.int16))
    # dense level over a sparse level over a sparse level, transposed: CSF-like
    a3t = np.transpose(a3, (2, 0, 1))  # level order
    lv1_idx, lv1_ptr, lv2_idx, lv2_ptr, vals = [], [0], [], [0], []
    for i in range(a3t.shape[0]):
        for j in range(a3t.shape[1]):
            row = a3t[i, j]
            ks = np.nonzero(row)[0]
            if len(ks):
                lv1_idx.append(j)
                lv2_idx.extend(ks.tolist())
                vals.extend(row[ks].tolist())
                lv2_ptr.append(len(lv2_idx))
        lv1_ptr.append(len(lv1_idx))
    t = bs.CustomTensor(
        (3, 4, 5), len(vals),
        level=bs.DenseLevel(1, bs.SparseLevel(
            1,
            bs.SparseLevel(1, bs.ElementLevel(np.array(vals, np.float32)), (np.array(lv2_idx, np.int64),), np.array(lv2_ptr, np.int64)),
            (np.array(lv1_idx, np.int64),), np.array(lv1_ptr, np.int64))),
        transpose=(2, 0, 1),
    )
    check(np.array_equal(custom_dense(t), a3), "the custom dense-sparse-sparse case builds a3")
    save("ref_custom_dss_transposed", t, a3)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"wrote {len(manifest)} reference files")


def check_dir(d):
    with open(os.path.join(d, "manifest.json")) as f:
        manifest = json.load(f)
    for name, want in manifest.items():
        path = os.path.join(d, name)
        try:
            t = bs.load_binsparse(path)
        except Exception as e:  # noqa: BLE001
            check(False, f"{name}: the reference cannot load it: {e!r}")
            continue
        got = dense_of(t)
        header = header_of(path)
        ns = header["binsparse"]
        st = ns.get("structure")
        if st is not None:
            # the reference leaves structure to the reader: fill in the other triangle
            off = np.tril(got, -1) + np.triu(got, 1)
            sign = -1 if st.startswith("skew") else 1
            got = got + sign * off.T
        check(list(got.shape) == want["shape"], f"{name}: shape {got.shape} != {want['shape']}")
        kind = "bool" if got.dtype.kind == "b" else str(got.dtype)
        if "dtype" in want:
            check(kind == want["dtype"], f"{name}: dtype {kind} != {want['dtype']}")
        check(got.reshape(-1).astype(float).tolist() == want["values"], f"{name}: entries differ")
        for key, value in want.get("descriptor", {}).items():
            got_v = ns.get(key)
            if key == "values_type":
                got_v = ns["data_types"]["values"]
            check(got_v == value, f"{name}: descriptor {key} = {got_v!r}, expected {value!r}")
        for key, value in want.get("outside", {}).items():
            check(header.get(key) == value, f"{name}: key {key} outside the namespace = {header.get(key)!r}")
    print(f"checked {len(manifest)} files written by arrow-sparse")


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("write", "check"):
        print(__doc__)
        return 2
    if sys.argv[1] == "write":
        containers = sys.argv[3].split(",") if len(sys.argv) == 4 else ["npz"]
        if not set(containers) <= {"npz", "h5"}:
            print(__doc__)
            return 2
        write(sys.argv[2], containers)
    else:
        check_dir(sys.argv[2])
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
