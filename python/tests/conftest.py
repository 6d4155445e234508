"""Shared helpers of the arrow_sparse pytest suite.

Entries are computed here from the numpy buffers (not through the Rust dump), so a
comparison with libarrow's dump checks what Python users see.
"""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = REPO / "format" / "golden"


def peer_path():
    """The C++ peer: ARROW_SPARSE_PEER (set by scripts/test-all.sh), else where
    scripts/setup-interop.sh builds it (target/peer/arrow-sparse-peer)."""
    p = os.environ.get("ARROW_SPARSE_PEER") or str(REPO / "target" / "peer" / "arrow-sparse-peer")
    if not os.access(p, os.X_OK):
        pytest.fail(f"no C++ peer at {p}: run bash scripts/setup-interop.sh (or set ARROW_SPARSE_PEER)")
    return p


def run_peer(*args):
    out = subprocess.run([peer_path(), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, f"peer {args} failed: {out.stderr}"
    return out.stdout


def cli_path():
    """The arrow-sparse CLI: ARROW_SPARSE_CLI (set by scripts/test-all.sh), else
    the debug build of ``cargo build --bin arrow-sparse`` (in CARGO_TARGET_DIR or
    target/)."""
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    p = os.environ.get("ARROW_SPARSE_CLI") or str(target / "debug" / "arrow-sparse")
    if not os.access(p, os.X_OK):
        pytest.fail(f"no arrow-sparse binary at {p}: run cargo build --bin arrow-sparse (or set ARROW_SPARSE_CLI)")
    return p


def entries(t):
    """Sorted ``[(coords..., value)]`` of a tensor, from its numpy buffers."""
    b = t.buffers()
    fmt = t.format
    if fmt == "coo":
        coords, values = b["coords"], b["values"]
    elif fmt in ("csr", "csc"):
        indptr, indices, values = b["indptr"].astype(np.int64), b["indices"], b["values"]
        outer = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        inner = indices.astype(np.int64)
        coords = np.stack([outer, inner] if fmt == "csr" else [inner, outer], axis=1)
    elif fmt == "csf":
        n = t.ndim
        order = t.axis_order
        # walk the levels: node k of level l covers children indptr_l[k]..indptr_l[k+1]
        cols = [b["indices_0"].astype(np.int64)]
        for lvl in range(1, n):
            ptr = b[f"indptr_{lvl - 1}"].astype(np.int64)
            parent = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
            cols = [c[parent] for c in cols] + [b[f"indices_{lvl}"].astype(np.int64)]
        coords = np.empty((len(b["values"]), n), dtype=np.int64)
        for lvl, d in enumerate(order):
            coords[:, d] = cols[lvl]
        values = b["values"]
    elif fmt == "dense":
        a = t.to_numpy()
        idx = np.nonzero(a)
        coords, values = np.stack(idx, axis=1), a[idx]
    else:
        raise AssertionError(f"no entry walk for {fmt}")
    rows = [tuple(int(c) for c in coords[k]) + (values[k],) for k in range(len(values))]
    rows.sort(key=lambda r: r[:-1])  # stable: duplicates keep their order
    return rows


def same_entries(ours, dump_line, context=""):
    """Compare our entries with one JSON line of a libarrow dump, values as the
    tensor's dtype (libarrow prints float32 in shortest form)."""
    theirs = json.loads(dump_line)
    dtype = np.dtype(theirs["value_type"])
    assert len(ours) == len(theirs["entries"]), f"{context}: nnz {len(ours)} vs {len(theirs['entries'])}"
    for o, e in zip(ours, theirs["entries"]):
        assert o[:-1] == tuple(e[:-1]), f"{context}: coordinates {o[:-1]} vs {e[:-1]}"
        v = e[-1]
        if isinstance(v, str):  # "NaN", "Infinity", "-Infinity"
            v = float(v.replace("Infinity", "inf"))
        want = np.array([v], dtype=np.float64 if dtype.kind == "f" else object).astype(dtype)[0]
        same = o[-1] == want or (dtype.kind == "f" and np.isnan(o[-1]) and np.isnan(want))
        assert same, f"{context}: value at {o[:-1]}: {o[-1]!r} vs {e[-1]!r}"
    return theirs
