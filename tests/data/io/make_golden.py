"""Regenerate the golden files of tests/io_formats.rs (run from the repository root):

    .venv/bin/python tests/data/io/make_golden.py

Matrix Market files are written by scipy.io.mmwrite, npz files by
scipy.sparse.save_npz and sparse.save_npz (pydata/sparse), .tns files by plain
Python formatting (there is no reference writer). expected.json lists, per file,
what arrow-sparse must read: format, shape, value and index dtypes, and every
stored entry (0-based coordinates, value) in storage order, symmetric files
expanded to both triangles.
"""
import io
import json
import os

import numpy as np
import scipy
import scipy.io
import scipy.sparse as sp
import sparse

HERE = os.path.dirname(os.path.abspath(__file__))
expected = {}


def entries_coo(coo):
    coo = sp.coo_array(coo)
    coords = np.vstack(coo.coords).T.tolist() if coo.nnz else []
    return [[c, v] for c, v in zip(coords, coo.data.tolist())]


def record(name, fmt, shape, value_type, index_type, entries, **extra):
    expected[name] = dict(format=fmt, shape=list(shape), value_type=value_type,
                          index_type=index_type, entries=entries, **extra)


def sorted_entries(ents):
    return sorted(ents, key=lambda e: e[0])


rng = np.random.default_rng(7)

# --- Matrix Market, written by scipy.io.mmwrite -----------------------------------
real = sp.coo_array((np.array([1.5, -2.25e-7, 3e300, 0.1, -4.0]),
                     (np.array([0, 4, 2, 1, 3]), np.array([3, 0, 1, 1, 2]))), shape=(5, 4))
scipy.io.mmwrite(os.path.join(HERE, "scipy_real_general.mtx"), real, comment="written by scipy")
record("scipy_real_general.mtx", "coo", real.shape, "float64", "int64",
       sorted_entries(entries_coo(real)), field="real", symmetry="general")

ints = sp.coo_array((np.array([7, -3, 12, 1], dtype=np.int64),
                     (np.array([0, 1, 2, 2]), np.array([0, 2, 1, 2]))), shape=(3, 3))
scipy.io.mmwrite(os.path.join(HERE, "scipy_integer_general.mtx"), ints)
record("scipy_integer_general.mtx", "coo", ints.shape, "int64", "int64",
       sorted_entries(entries_coo(ints)), field="integer", symmetry="general")

pat = sp.coo_array((np.ones(3), (np.array([0, 2, 3]), np.array([1, 0, 3]))), shape=(4, 5))
scipy.io.mmwrite(os.path.join(HERE, "scipy_pattern.mtx"), pat, field="pattern")
record("scipy_pattern.mtx", "coo", pat.shape, "float64", "int64",
       sorted_entries(entries_coo(pat)), field="pattern", symmetry="general")

lower = sp.coo_array((np.array([2.0, -1.0, 4.0, 0.5]),
                      (np.array([0, 2, 2, 3]), np.array([0, 0, 2, 1]))), shape=(4, 4))
symm = (lower + sp.triu(lower.T, k=1)).tocoo()
scipy.io.mmwrite(os.path.join(HERE, "scipy_real_symmetric.mtx"), symm, symmetry="symmetric")
record("scipy_real_symmetric.mtx", "coo", symm.shape, "float64", "int64",
       sorted_entries(entries_coo(symm)), field="real", symmetry="symmetric")

sl = sp.coo_array((np.array([5, -6, 9], dtype=np.int64),
                   (np.array([1, 3, 3]), np.array([0, 0, 2]))), shape=(4, 4))
skew = (sl - sl.T).tocoo()
scipy.io.mmwrite(os.path.join(HERE, "scipy_integer_skew.mtx"), skew, symmetry="skew-symmetric")
record("scipy_integer_skew.mtx", "coo", skew.shape, "int64", "int64",
       sorted_entries(entries_coo(skew)), field="integer", symmetry="skew-symmetric")

dense = np.array([[1.0, 0.0, -2.5], [0.0, 3.25, 0.0]])
scipy.io.mmwrite(os.path.join(HERE, "scipy_array_general.mtx"), dense)
record("scipy_array_general.mtx", "dense", dense.shape, "float64", None,
       [[[i, j], float(dense[i, j])] for i in range(2) for j in range(3)],
       field="real", symmetry="general")

dsym = np.array([[4, 1, -2], [1, 5, 0], [-2, 0, 6]], dtype=np.int64)
scipy.io.mmwrite(os.path.join(HERE, "scipy_array_symmetric.mtx"), dsym, symmetry="symmetric")
record("scipy_array_symmetric.mtx", "dense", dsym.shape, "int64", None,
       [[[i, j], int(dsym[i, j])] for i in range(3) for j in range(3)],
       field="integer", symmetry="symmetric")

# --- scipy.sparse.save_npz ------------------------------------------------------------
def save_scipy(name, m, compressed=True):
    sp.save_npz(os.path.join(HERE, name), m, compressed=compressed)
    fmt = m.format
    idx = (m.indices if fmt in ("csr", "csc") else m.coords[0]).dtype.name
    ents = entries_coo(m)
    if fmt == "csr":
        ents = sorted_entries(ents)  # storage order of a CSR with sorted indices
    elif fmt == "csc":
        ents = sorted(ents, key=lambda e: (e[0][1], e[0][0]))
    record(name, fmt, m.shape, m.dtype.name, idx, ents,
           is_array=isinstance(m, sp.sparray))

csr = sp.random_array((6, 7), density=0.3, format="csr", rng=rng)
csr.indices = csr.indices.astype(np.int32)
csr.indptr = csr.indptr.astype(np.int32)
save_scipy("scipy_csr_f64_i32.npz", csr)

csc = sp.csc_matrix(sp.random_array((5, 4), density=0.4, rng=rng, dtype=np.float32))
csc.indices = csc.indices.astype(np.int64)
csc.indptr = csc.indptr.astype(np.int64)
save_scipy("scipy_csc_f32_i64_matrix.npz", csc)

coo_i16 = sp.coo_array((np.array([3, -7, 11], dtype=np.int16),
                        (np.array([2, 0, 1], dtype=np.int32), np.array([1, 4, 0], dtype=np.int32))),
                       shape=(3, 5))
save_scipy("scipy_coo_i16.npz", coo_i16)
save_scipy("scipy_coo_i16_stored.npz", coo_i16, compressed=False)

coo3 = sp.coo_array((np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32),
                     (np.array([0, 1, 1, 2]), np.array([3, 0, 2, 1]), np.array([1, 1, 0, 4]))),
                    shape=(3, 4, 5))
save_scipy("scipy_coo_3d.npz", coo3)

# --- pydata/sparse save_npz -------------------------------------------------------------
def save_pydata(name, arr, fmt, **extra):
    sparse.save_npz(os.path.join(HERE, name), arr)
    c = arr.tocoo() if fmt == "gcs" else arr
    ents = [[list(map(int, c.coords[:, k])), c.data[k].item()] for k in range(c.nnz)]
    idx = (arr.indices if fmt == "gcs" else arr.coords).dtype.name
    record(name, fmt, arr.shape, arr.dtype.name, idx, sorted_entries(ents), **extra)

d3 = np.zeros((3, 4, 5))
for c, v in [((0, 1, 2), 1.5), ((2, 3, 4), -2.0), ((1, 0, 0), 7.25), ((2, 0, 3), 0.125)]:
    d3[c] = v
save_pydata("pydata_coo_3d.npz", sparse.COO.from_numpy(d3), "coo")
save_pydata("pydata_gcxs_3d.npz", sparse.GCXS.from_numpy(d3, compressed_axes=(0, 2)), "gcs",
            compressed_axes=[0, 2])
d2 = np.array([[0, 2, 0], [5, 0, 0], [0, 0, 9], [1, 0, 4]], dtype=np.int32)
save_pydata("pydata_gcxs_2d_cols.npz", sparse.GCXS.from_numpy(d2, compressed_axes=(1,)), "gcs",
            compressed_axes=[1])
d4 = np.zeros((2, 3, 2, 4), dtype=np.uint8)
for c, v in [((0, 0, 0, 1), 1), ((1, 2, 1, 3), 200), ((1, 0, 1, 0), 3)]:
    d4[c] = v
save_pydata("pydata_gcxs_4d_u8.npz", sparse.GCXS.from_numpy(d4, compressed_axes=(1, 3)), "gcs",
            compressed_axes=[1, 3])

# --- FROSTT .tns (no reference writer: plain formatting) ---------------------------------
t = [((1, 1, 2), 1.5), ((2, 3, 1), -4.0), ((1, 2, 2), 2.5e-3), ((3, 1, 4), 10.0)]
with open(os.path.join(HERE, "frostt_3d.tns"), "w") as f:
    f.write("# a FROSTT tensor: 1-based coordinates, then the value\n")
    for c, v in t:
        f.write(" ".join(map(str, c)) + " " + repr(v) + "\n")
record("frostt_3d.tns", "coo", [3, 3, 4], "float64", "int64",
       sorted_entries([[[x - 1 for x in c], v] for c, v in t]), header="none")
with open(os.path.join(HERE, "header_rank_shape_nnz.tns"), "w") as f:
    f.write("4\n2 3 4 5\n3\n")
    for c, v in [((1, 1, 1, 1), 1), ((2, 3, 4, 5), 2), ((1, 2, 3, 4), 3)]:
        f.write("\t".join(map(str, c)) + "\t" + str(v) + "\n")
record("header_rank_shape_nnz.tns", "coo", [2, 3, 4, 5], "float64", "int64",
       sorted_entries([[[0, 0, 0, 0], 1.0], [[1, 2, 3, 4], 2.0], [[0, 1, 2, 3], 3.0]]),
       header="rank-shape-nnz")

with open(os.path.join(HERE, "expected.json"), "w") as f:
    json.dump(dict(generator=f"numpy {np.__version__}, scipy {scipy.__version__}, sparse {sparse.__version__}",
                   files=expected), f, indent=1, sort_keys=True)
    f.write("\n")
print(f"wrote {len(expected)} golden files to {HERE}")
