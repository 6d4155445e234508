#!/usr/bin/env python3
"""Regenerate the bad-input corpus tests/data/bad/binsparse/ (numpy only).

    python tests/python/make_bad_binsparse.py tests/data/bad/binsparse

Each file is a Binsparse NPZ archive with one defect; expect.json maps the file
name to [error kind, text the error must contain] (tests/binsparse.rs checks it).
"""
import copy
import json
import os
import sys

import numpy as np

# a 4 x 5 CSR matrix with 5 entries
CSR = {
    "pointers_to_1": np.array([0, 2, 2, 4, 5], np.int64),
    "indices_1": np.array([0, 3, 1, 4, 2], np.int64),
    "values": np.array([1.0, 2.0, 3.0, 4.0, 5.0]),
}
CSR_D = {"version": "0.1.0", "format": "CSR", "shape": [4, 5], "number_of_stored_values": 5,
         "data_types": {"pointers_to_1": "int64", "indices_1": "int64", "values": "float64"}}
COO = {
    "indices_0": np.array([0, 0, 2, 2, 3], np.int32),
    "indices_1": np.array([0, 3, 1, 4, 2], np.int32),
    "values": np.array([1, 2, 3, 4, 5], np.int32),
}
COO_D = {"version": "0.1.0", "format": "COO", "shape": [4, 5], "number_of_stored_values": 5,
         "data_types": {"indices_0": "int32", "indices_1": "int32", "values": "int32"}}
DCSR = {
    "indices_0": np.array([0, 2, 3], np.int64),
    "pointers_to_1": np.array([0, 2, 4, 5], np.int64),
    "indices_1": np.array([0, 3, 1, 4, 2], np.int64),
    "values": np.array([1.0, 2.0, 3.0, 4.0, 5.0]),
}
DCSR_D = dict(CSR_D, format="DCSR", data_types=dict(CSR_D["data_types"], indices_0="int64"))

CASES = {}


def case(name, kind, text, arrays, desc, raw=None, outside=None):
    CASES[name] = (kind, text, arrays, desc, raw, outside)


def d(base, **kw):
    out = copy.deepcopy(base)
    out.update(kw)
    return out


def dt(base, **kw):
    out = copy.deepcopy(base)
    out["data_types"].update(kw)
    return out


def arr(base, **kw):
    out = dict(base)
    out.update(kw)
    return {k: v for k, v in out.items() if v is not None}


case("not_json", "parse", "not valid JSON", CSR, None, raw="{nope")
case("no_namespace", "parse", "`binsparse`", CSR, None, raw=json.dumps(CSR_D))
case("unknown_format", "parse", "unknown format", CSR, d(CSR_D, format="BSR"))
case("format_not_string", "parse", "`format`", CSR, d(CSR_D, format=3))
case("shape_rank", "parse", "`shape`", CSR, d(CSR_D, shape=[20]))
case("shape_negative", "parse", "`shape`", CSR, d(CSR_D, shape=[-4, 5]))
case("version", "parse", "`version`", CSR, d(CSR_D, version="2.0.0"))
case("nnz_missing", "parse", "number_of_stored_values", CSR,
     {k: v for k, v in CSR_D.items() if k != "number_of_stored_values"})
case("nnz_disagrees", "parse", "number_of_stored_values", CSR, d(CSR_D, number_of_stored_values=7))
case("data_types_missing", "parse", "data_types", CSR,
     {k: v for k, v in CSR_D.items() if k != "data_types"})
case("data_type_missing", "parse", "data_types.indices_1", CSR,
     d(CSR_D, data_types={"pointers_to_1": "int64", "values": "float64"}))
case("dtype_mismatch", "parse", "declares", CSR, dt(CSR_D, indices_1="int32"))
case("unknown_type", "parse", "unknown type", CSR, dt(CSR_D, values="float128"))
case("complex_values", "unsupported", "complex", CSR, dt(CSR_D, values="complex[float64]"))
case("array_missing", "parse", "indices_1", arr(CSR, indices_1=None), CSR_D)
case("csr_index_out_of_range", "parse", "indices", arr(CSR, indices_1=np.array([0, 3, 1, 9, 2])), CSR_D)
case("csr_unsorted_row", "parse", "sorted", arr(CSR, indices_1=np.array([3, 0, 1, 4, 2])), CSR_D)
case("csr_pointers_short", "parse", "pointers_to_1", arr(CSR, pointers_to_1=np.array([0, 2, 4, 5])), CSR_D)
case("coo_unsorted", "parse", "sorted", arr(COO, indices_0=np.array([0, 2, 0, 2, 3], np.int32)), COO_D)
case("coo_duplicate", "parse", "sorted",
     arr(COO, indices_0=np.array([0, 0, 2, 2, 3], np.int32), indices_1=np.array([0, 0, 1, 4, 2], np.int32)), COO_D)
case("coo_out_of_range", "bounds", "indices_1", arr(COO, indices_1=np.array([0, 3, 1, 5, 2], np.int32)), COO_D)
case("coo_negative", "bounds", "indices_0", arr(COO, indices_0=np.array([-1, 0, 2, 2, 3], np.int32)), COO_D)
case("coo_lengths", "parse", "indices_1", arr(COO, indices_1=np.array([0, 3, 1, 4], np.int32)), COO_D)
case("dcsr_pointers_start", "parse", "starts at", arr(DCSR, pointers_to_1=np.array([1, 2, 4, 5])), DCSR_D)
case("dcsr_pointers_decrease", "parse", "decreases", arr(DCSR, pointers_to_1=np.array([0, 4, 2, 5])), DCSR_D)
case("dcsr_pointers_end", "parse", "ends at", arr(DCSR, pointers_to_1=np.array([0, 2, 4, 4])), DCSR_D)
case("dcsr_pointers_length", "parse", "pointers", arr(DCSR, pointers_to_1=np.array([0, 2, 5])), DCSR_D)
EL = {"level_desc": "element"}
case("custom_unknown_level", "unsupported", "custom level 1", CSR,
     d(CSR_D, format="custom", custom={"level": {"level_desc": "dense", "rank": 1, "level": {"level_desc": "banded", "rank": 1, "level": EL}}}))
case("custom_no_level_desc", "parse", "level_desc", CSR,
     d(CSR_D, format="custom", custom={"level": {"rank": 1, "level": EL}}))
case("custom_ranks", "parse", "dimensions", CSR,
     d(CSR_D, format="custom", custom={"level": {"level_desc": "dense", "rank": 1, "level": EL}}))
case("custom_transpose", "parse", "custom.transpose", CSR,
     d(CSR_D, format="custom", custom={"level": {"level_desc": "dense", "rank": 1, "level": {"level_desc": "sparse", "rank": 1, "level": EL}}, "transpose": [0, 0]}))
case("custom_missing", "parse", "`custom`", CSR, d(CSR_D, format="custom"))
case("iso_two_values", "parse", "iso", CSR, dt(CSR_D, values="iso[float64]"))
case("fill_nonzero", "unsupported", "fill_value", arr(CSR, fill_value=np.array([2.0])),
     dt(d(CSR_D, fill=True), fill_value="float64"))
case("fill_not_bool", "parse", "`fill`", CSR, d(CSR_D, fill="yes"))
case("structure_unknown", "parse", "unknown structure", CSR, d(CSR_D, shape=[5, 5], structure="banded"))
case("structure_outside_triangle", "parse", "outside", COO, d(COO_D, shape=[5, 5], structure="symmetric_lower"))
case("structure_not_square", "parse", "square", CSR, d(CSR_D, structure="symmetric_upper"))
case("structure_hermitian", "unsupported", "complex", CSR, d(CSR_D, shape=[5, 5], structure="hermitian_lower"))
# a tiny file that declares a huge dense matrix: refused before allocating
case("dense_iso_huge", "limit", "iso values", {"values": np.array([1.0])},
     {"version": "0.1.0", "format": "DMAT", "shape": [100000, 100000], "number_of_stored_values": 10**10,
      "data_types": {"values": "iso[float64]"}})
case("dense_level_huge", "limit", "dense level", {"pointers_to_1": np.array([0], np.int64), "indices_1": np.array([], np.int64), "values": np.array([])},
     {"version": "0.1.0", "format": "custom", "shape": [10**9, 10**9, 10], "number_of_stored_values": 0,
      "custom": {"level": {"level_desc": "dense", "rank": 2, "level": {"level_desc": "sparse", "rank": 1, "level": EL}}},
      "data_types": {"pointers_to_1": "int64", "indices_2": "int64", "values": "float64"}})


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    expect = {}
    for name, (kind, text, arrays, desc, raw, outside) in CASES.items():
        header = raw if raw is not None else json.dumps({"binsparse": desc})
        np.savez(os.path.join(out, name + ".npz"), binsparse=np.asarray(header), **arrays)
        expect[name + ".npz"] = [kind, text]
    with open(os.path.join(out, "expect.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
    print(f"wrote {len(expect)} files")


if __name__ == "__main__":
    main()
