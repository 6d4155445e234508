#!/usr/bin/env python3
"""scipy side of `benches/compare_kernels.sh`, driven by `examples/bench_kernels.rs`.

    kernels_scipy.py DATASET.json MAX_ITERS BUDGET_S          # every op, both widths
    kernels_scipy.py --serve DATASET.json MAX_ITERS BUDGET_S  # ops on request (stdin)

DATASET.json (written by the Rust side) names little-endian binary files next to
it: per data set ("m", "m2", "mn", "t3", "d2") `shape`, `nnz`, the row-major
coordinates (`coords`: nnz x ndim int64) and the values (`values`: float64);
`perm` is the entry order of the shuffled COO (int64). The operands follow the
formulas of `benches/compare/kernel_data.rs` (`operand(n)[i] = 1 + (i % 17) / 16`).

Objects are built per index width ("i32" / "i64"), lazily, with that width:
scipy's constructors downcast int64 arrays whose contents fit int32, so the int64
arrays are put back in place afterwards (the sparsetools kernels take both).
Each op is timed as the best of up to MAX_ITERS runs, stopping once BUDGET_S
seconds have passed (at least two runs, unless MAX_ITERS is 1), with the garbage
collector off during a run and the result freed outside the timed region.
scipy.sparse is single-threaded.

Server protocol (one line in, one JSON line out):
  "idx i32" | "idx i64"  -> {"ok": true}            (switch width, free the other)
  "time OP"              -> {"op", "s", "desc", "out_idx"} or {"op", "skip": reason}
  "check"                -> {"m_nnz", "spmv_sum"}  (for the current width)
  "version"              -> {"scipy", "numpy"}
  "quit"
The batch mode prints {"kind": "time", "op", "idx", "sparsity", "size", "s", ...}
lines for every op.
"""

import functools
import gc
import json
import math
import os
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp

try:  # pydata/sparse (optional: its ops answer "skip" when it is missing)
    import sparse as pyd
except ImportError:  # pragma: no cover - the pinned venv has it
    pyd = None


def operand(n):
    return 1.0 + (np.arange(n, dtype=np.int64) % 17) / 16.0


def load(base, d):
    shape = tuple(d["shape"])
    nnz = d["nnz"]
    coords = np.fromfile(os.path.join(base, d["coords"]), dtype="<i8")
    coords = coords.reshape(nnz, len(shape))
    values = np.fromfile(os.path.join(base, d["values"]), dtype="<f8")
    assert values.shape == (nnz,)
    return shape, coords, values


def best_of(f, max_iters, budget, setup=None):
    best = math.inf
    runs = 0
    start = time.perf_counter()
    while runs < max_iters and (runs < 2 or time.perf_counter() - start < budget):
        arg = setup() if setup is not None else None
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            out = f(arg) if setup is not None else f()
            t1 = time.perf_counter()
        finally:
            gc.enable()
        del out
        best = min(best, t1 - t0)
        runs += 1
    return best


def coo_of(shape, coords, values, it, canonical):
    a = sp.coo_array((values, tuple(coords[:, d].astype(it) for d in range(len(shape)))),
                     shape=shape)
    a.coords = tuple(c.astype(it, copy=False) for c in a.coords)
    a.has_canonical_format = canonical
    return a


def force_cs(a, it):
    a.indices = a.indices.astype(it, copy=False)
    a.indptr = a.indptr.astype(it, copy=False)
    return a


def csr_of(shape, coords, values, it):
    indptr = np.zeros(shape[0] + 1, dtype=it)
    np.cumsum(np.bincount(coords[:, 0], minlength=shape[0]), out=indptr[1:])
    a = sp.csr_array((values, coords[:, 1].astype(it), indptr), shape=shape)
    a = force_cs(a, it)
    a.has_sorted_indices = True
    a.has_canonical_format = True
    return a


def out_idx(r):
    for attr in ("indices", "coords"):
        v = getattr(r, attr, None)
        if v is not None:
            v = v[0] if isinstance(v, tuple) else v
            return str(v.dtype).replace("int", "i")
    return "-"


class Raw:
    """The files of one data set, loaded once."""

    def __init__(self, path):
        base = os.path.dirname(os.path.abspath(path))
        with open(path) as f:
            self.ds = json.load(f)
        self.base = base
        self.m = load(base, self.ds["m"])
        self.m2 = load(base, self.ds["m2"])
        self.mn = load(base, self.ds["mn"])
        self.xn = operand(self.mn[0][1])
        self.perm = np.fromfile(os.path.join(base, self.ds["perm"]), dtype="<i8")
        self.t3 = load(base, self.ds["t3"])
        self.d2 = load(base, self.ds["d2"])
        shape = self.m[0]
        self.x = operand(shape[1])
        n = self.ds["spmm_n"]
        self.b = operand(shape[1] * n).reshape(shape[1], n)


class Objects:
    """scipy objects for one index width, built on first use."""

    def __init__(self, raw, idx):
        self.raw = raw
        self.idx = idx
        self.it = {"i32": np.int32, "i64": np.int64}[idx]

    @functools.cached_property
    def coo(self):
        return coo_of(*self.raw.m, self.it, True)

    @functools.cached_property
    def shuffled(self):
        shape, coords, values = self.raw.m
        return shape, coords[self.raw.perm], values[self.raw.perm]

    @functools.cached_property
    def coo_s(self):
        return coo_of(*self.shuffled, self.it, False)

    @functools.cached_property
    def coo_s_forced(self):
        return coo_of(*self.shuffled, self.it, True)

    @functools.cached_property
    def a(self):
        return csr_of(*self.raw.m, self.it)

    @functools.cached_property
    def a2(self):
        return csr_of(*self.raw.m2, self.it)

    @functools.cached_property
    def an(self):
        return csr_of(*self.raw.mn, self.it)

    @functools.cached_property
    def ac(self):
        return force_cs(self.a.tocsc(), self.it)

    @functools.cached_property
    def coo3(self):
        return coo_of(*self.raw.t3, self.it, True)

    @functools.cached_property
    def ared(self):
        (d0, d1, d2), coords, values = self.raw.t3
        red = np.stack([coords[:, 0], coords[:, 1] * d2 + coords[:, 2]], axis=1)
        return csr_of((d0, d1 * d2), red, values, self.it)

    @functools.cached_property
    def x3(self):
        (_, d1, d2), _, _ = self.raw.t3
        return operand(d1 * d2)

    @functools.cached_property
    def ttv_vec(self):
        (d0, d1, d2), _, _ = self.raw.t3
        return operand(max(d0, d1, d2))

    @functools.cached_property
    def a3_mode2(self):
        """t3 reshaped to (d0*d1) x d2: TTV along mode 2 is this CSR @ v."""
        (d0, d1, d2), coords, values = self.raw.t3
        red = np.stack([coords[:, 0] * d1 + coords[:, 1], coords[:, 2]], axis=1)
        return csr_of((d0 * d1, d2), red, values, self.it)

    # pydata/sparse objects: COO keeps int64 coordinates (its own choice), GCXS is
    # its compressed (CSR-like) format
    @functools.cached_property
    def p_coo(self):
        shape, coords, values = self.raw.m
        return pyd.COO(coords.T.copy(), values, shape=shape, has_duplicates=False,
                       sorted=True)

    @functools.cached_property
    def p_coo2(self):
        shape, coords, values = self.raw.m2
        return pyd.COO(coords.T.copy(), values, shape=shape, has_duplicates=False,
                       sorted=True)

    @functools.cached_property
    def p_gcxs(self):
        return pyd.GCXS.from_scipy_sparse(self.a)

    @functools.cached_property
    def p_gcxs_narrow(self):
        return pyd.GCXS.from_scipy_sparse(self.an)

    @functools.cached_property
    def p_coo3(self):
        shape, coords, values = self.raw.t3
        return pyd.COO(coords.T.copy(), values, shape=shape, has_duplicates=False,
                       sorted=True)

    def dense2(self):
        """Not cached: 800 MB at 10^7, freed once its op is timed."""
        shape, coords, values = self.raw.d2
        d = np.zeros(shape)
        d[coords[:, 0], coords[:, 1]] = values
        return d


def fresh_shuffled(o):
    shuffled = o.shuffled
    return lambda: coo_of(*shuffled, o.it, False)


def sum_dups(c):
    c.sum_duplicates()
    return c


def reshape3(o):
    d0, d1, d2 = o.raw.t3[0]
    c = o.coo3
    return lambda: c.reshape((d0, d1 * d2)).tocsr()


# op -> (description, f(objects) -> callable, setup(objects) -> callable or None,
#        report the result's index dtype, widths it runs with)
BOTH = ("i32", "i64")
OPS = {
    "tocsr_canon": ("coo_array.tocsr(), has_canonical_format=True",
                    lambda o: o.coo.tocsr, None, True, BOTH),
    "tocsr_shuffled": ("coo_array.tocsr() on shuffled entries (sorts, sums duplicates)",
                       lambda o: o.coo_s.tocsr, None, True, BOTH),
    "tocsr_shuffled_nosort": ("coo_array.tocsr() on shuffled entries, "
                              "has_canonical_format forced True",
                              lambda o: o.coo_s_forced.tocsr, None, True, BOTH),
    "tocsc_canon": ("coo_array.tocsc(), has_canonical_format=True",
                    lambda o: o.coo.tocsc, None, True, BOTH),
    "csr_tocsc": ("csr_array.tocsc()", lambda o: o.a.tocsc, None, True, BOTH),
    "csc_tocsr": ("csc_array.tocsr()", lambda o: o.ac.tocsr, None, True, BOTH),
    "sum_duplicates": ("coo_array.sum_duplicates() on a fresh shuffled copy",
                       lambda o: sum_dups, fresh_shuffled, False, BOTH),
    "csr_matvec": ("csr_array @ x", lambda o: (lambda a=o.a, x=o.raw.x: a @ x), None, False, BOTH),
    "csr_narrow_matvec": ("csr_array (2^15 columns) @ x",
                          lambda o: (lambda a=o.an, x=o.raw.xn: a @ x), None, False, BOTH),
    "csc_matvec": ("csc_array @ x", lambda o: (lambda a=o.ac, x=o.raw.x: a @ x), None, False, BOTH),
    "coo_matvec": ("coo_array @ x", lambda o: (lambda a=o.coo, x=o.raw.x: a @ x), None, False, BOTH),
    "csr_matmat": ("csr_array @ B (16 columns)", lambda o: (lambda a=o.a, b=o.raw.b: a @ b), None,
                   False, BOTH),
    "csc_matmat": ("csc_array @ B (16 columns)", lambda o: (lambda a=o.ac, b=o.raw.b: a @ b), None,
                   False, BOTH),
    "add": ("csr_array + csr_array", lambda o: (lambda a=o.a, b=o.a2: a + b), None, True, BOTH),
    "multiply": ("csr_array.multiply(csr_array)", lambda o: (lambda a=o.a, b=o.a2: a.multiply(b)),
                 None, True, BOTH),
    "scale": ("csr_array * 2.5", lambda o: (lambda a=o.a: a * 2.5), None, True, BOTH),
    "sum_all": ("csr_array.sum()", lambda o: o.a.sum, None, False, BOTH),
    "sum_axis1": ("csr_array.sum(axis=1)", lambda o: (lambda a=o.a: a.sum(axis=1)), None, False,
                  BOTH),
    "sum_axis0": ("csr_array.sum(axis=0)", lambda o: (lambda a=o.a: a.sum(axis=0)), None, False,
                  BOTH),
    "coo3_reshape_tocsr": ("3-D coo_array.reshape((d0, d1*d2)).tocsr()", reshape3, None,
                           True, BOTH),
    "red_matvec": ("reduced csr_array (d0 x d1*d2) @ x",
                   lambda o: (lambda a=o.ared, x=o.x3: a @ x), None, False, BOTH),
    # scipy picks the index type of a conversion from an ndarray itself (int32 here)
    "dense2_to_coo": ("coo_array(ndarray)", lambda o: (lambda d=o.dense2(): sp.coo_array(d)), None,
                      True, ("i32",)),
    "dense2_to_csr": ("csr_array(ndarray)", lambda o: (lambda d=o.dense2(): sp.csr_array(d)), None,
                      True, ("i32",)),
}


def ttv0(o):
    d0 = o.raw.t3[0][0]
    a, v = o.ared, o.ttv_vec[:d0]
    return lambda: v @ a


def ttv2(o):
    d2 = o.raw.t3[0][2]
    a, v = o.a3_mode2, o.ttv_vec[:d2]
    return lambda: a @ v


def p_ttv(mode):
    def make(o):
        t = o.p_coo3
        v = o.ttv_vec[:t.shape[mode]]
        return lambda: pyd.tensordot(t, v, axes=((mode,), (0,)))
    return make


OPS.update({
    "ttv3_mode0": ("v @ csr_array(d0 x d1*d2) (TTV along mode 0 of the 3-D tensor)", ttv0, None,
                   False, BOTH),
    "ttv3_mode2": ("csr_array(d0*d1 x d2) @ v (TTV along mode 2 of the 3-D tensor)", ttv2, None,
                   False, BOTH),
})

# pydata/sparse 0.15 (numba kernels: the first call compiles, so every op runs at
# least twice and the best run counts). Its COO keeps int64 coordinates whatever
# the input, so these run with the int64 data sets only.
I64 = ("i64",)
PYD_OPS = {
    "pyd_coo_to_gcxs": ("pydata COO.asformat('gcxs', compressed_axes=[0]) (sorted COO)",
                        lambda o: (lambda a=o.p_coo: a.asformat("gcxs", compressed_axes=[0])),
                        None, False, I64),
    "pyd_gcxs_tocsc": ("pydata GCXS.change_compressed_axes([1]) (CSR -> CSC)",
                       lambda o: (lambda a=o.p_gcxs: a.change_compressed_axes([1])),
                       None, False, I64),
    "pyd_coo_matvec": ("pydata COO @ x", lambda o: (lambda a=o.p_coo, x=o.raw.x: a @ x),
                       None, False, I64),
    "pyd_gcxs_matvec": ("pydata GCXS @ x", lambda o: (lambda a=o.p_gcxs, x=o.raw.x: a @ x),
                        None, False, I64),
    "pyd_gcxs_narrow_matvec": ("pydata GCXS (2^15 columns) @ x",
                               lambda o: (lambda a=o.p_gcxs_narrow, x=o.raw.xn: a @ x),
                               None, False, I64),
    "pyd_gcxs_matmat": ("pydata GCXS @ B (16 columns)",
                        lambda o: (lambda a=o.p_gcxs, b=o.raw.b: a @ b), None, False, I64),
    "pyd_add": ("pydata COO + COO", lambda o: (lambda a=o.p_coo, b=o.p_coo2: a + b),
                None, False, I64),
    "pyd_multiply": ("pydata COO * COO", lambda o: (lambda a=o.p_coo, b=o.p_coo2: a * b),
                     None, False, I64),
    "pyd_scale": ("pydata COO * 2.5", lambda o: (lambda a=o.p_coo: a * 2.5), None, False, I64),
    "pyd_sum_all": ("pydata COO.sum()", lambda o: o.p_coo.sum, None, False, I64),
    "pyd_sum_axis1": ("pydata COO.sum(axis=1)", lambda o: (lambda a=o.p_coo: a.sum(axis=1)),
                      None, False, I64),
    "pyd_sum_axis0": ("pydata COO.sum(axis=0)", lambda o: (lambda a=o.p_coo: a.sum(axis=0)),
                      None, False, I64),
    "pyd_ttv3_mode0": ("pydata tensordot(COO 3-D, v, mode 0)", p_ttv(0), None, False, I64),
    "pyd_ttv3_mode2": ("pydata tensordot(COO 3-D, v, mode 2)", p_ttv(2), None, False, I64),
    "pyd_dense2_to_coo": ("pydata COO.from_numpy(ndarray)",
                          lambda o: (lambda d=o.dense2(): pyd.COO.from_numpy(d)), None, False,
                          I64),
}
OPS.update(PYD_OPS)


def time_op(o, op, max_iters, budget):
    desc, make, setup, report, widths = OPS[op]
    if o.idx not in widths:
        return {"op": op, "skip": "the reference chooses its own index type here"}
    if op in PYD_OPS and pyd is None:
        return {"op": op, "skip": "pydata/sparse is not installed"}
    f = make(o)
    if op in PYD_OPS:
        f()  # numba compiles on the first call: not timed
    s = best_of(f, max_iters, budget, setup(o) if setup is not None else None)
    idx = "-"
    if report:
        r = f(setup(o)()) if setup is not None else f()
        idx = out_idx(r)
        del r
    return {"op": op, "s": s, "desc": desc, "out_idx": idx}


def serve(raw, max_iters, budget):
    o = None
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd = words[0]
        if cmd == "quit":
            break
        if cmd == "idx":
            o = None
            gc.collect()
            o = Objects(raw, words[1])
            reply = {"ok": True}
        elif cmd == "time":
            reply = time_op(o, words[1], max_iters, budget)
        elif cmd == "check":
            y = o.a @ raw.x
            reply = {"m_nnz": int(raw.m[2].shape[0]), "spmv_sum": float(y.sum())}
        elif cmd == "version":
            reply = {"scipy": scipy.__version__, "numpy": np.__version__,
                     "sparse": pyd.__version__ if pyd is not None else "missing"}
        else:
            reply = {"error": f"unknown command {cmd!r}"}
        print(json.dumps(reply), flush=True)


def batch(raw, max_iters, budget):
    for idx in raw.ds["idx"]:
        o = Objects(raw, idx)
        for op in OPS:
            r = time_op(o, op, max_iters, budget)
            r.update(kind="time", idx=idx, sparsity=raw.ds["sparsity"], size=raw.ds["size"])
            print(json.dumps(r), flush=True)
        del o


def main():
    args = sys.argv[1:]
    server = bool(args) and args[0] == "--serve"
    if server:
        args = args[1:]
    if len(args) != 3:
        sys.exit(__doc__)
    raw = Raw(args[0])
    (serve if server else batch)(raw, int(args[1]), float(args[2]))


if __name__ == "__main__":
    main()
