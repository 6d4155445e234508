#!/usr/bin/env python3
"""Regenerate the bad-input corpus tests/data/bad/binsparse-h5/ (numpy and h5py).

    python tests/python/make_bad_binsparse_h5.py tests/data/bad/binsparse-h5

Each file is an HDF5 file with one defect; expect.json maps the file name to
[error kind, text the error must contain] (tests/binsparse.rs checks it with the
cargo feature `hdf5`). The NPZ corpus (make_bad_binsparse.py) covers the
descriptor and array checks both containers share; these cover the container.
"""
import json
import os
import sys

import h5py
import numpy as np

CSR = {
    "pointers_to_1": np.array([0, 2, 2, 4, 5], np.int64),
    "indices_1": np.array([0, 3, 1, 4, 2], np.int64),
    "values": np.array([1.0, 2.0, 3.0, 4.0, 5.0]),
}
CSR_D = {"binsparse": {
    "version": "0.1.0", "format": "CSR", "shape": [4, 5], "number_of_stored_values": 5,
    "data_types": {"pointers_to_1": "int64", "indices_1": "int64", "values": "float64"}}}

CASES = {}


def case(name, kind, text):
    def register(f):
        CASES[name] = (kind, text, f)
        return f
    return register


def binsparse(path, arrays=CSR, desc=CSR_D, attr=None):
    with h5py.File(path, "w") as f:
        f.attrs["binsparse"] = json.dumps(desc) if attr is None else attr
        for k, v in arrays.items():
            f.create_dataset(k, data=v)


@case("not_hdf5.h5", "parse", "not an HDF5 file")
def _(p):
    with open(p, "wb") as f:
        f.write(b"%%MatrixMarket matrix coordinate real general\n1 1 0\n")


@case("not_binsparse.h5", "parse", "no `binsparse` attribute")
def _(p):
    with h5py.File(p, "w") as f:
        f.create_dataset("data", data=np.arange(4.0))
        f.attrs["title"] = "some other HDF5 file"


@case("attr_not_string.h5", "parse", "expected a string")
def _(p):
    binsparse(p, attr=np.int64(7))


@case("attr_two_strings.h5", "parse", "expected one string")
def _(p):
    binsparse(p, attr=np.array([b"{}", b"{}"]))


@case("attr_not_json.h5", "parse", "not valid JSON")
def _(p):
    binsparse(p, attr="{binsparse: CSR")


@case("dataset_missing.h5", "parse", "`indices_1`, which is missing")
def _(p):
    binsparse(p, arrays={k: v for k, v in CSR.items() if k != "indices_1"})


@case("dataset_wrong_dtype.h5", "parse", "declares int64")
def _(p):
    binsparse(p, arrays=dict(CSR, indices_1=CSR["indices_1"].astype(np.float64)))


@case("dataset_string.h5", "parse", "declares float64")
def _(p):
    binsparse(p, arrays=dict(CSR, values=np.array([b"a", b"b", b"c", b"d", b"e"])))


@case("dataset_wrong_length.h5", "parse", "number_of_stored_values")
def _(p):
    binsparse(p, arrays=dict(CSR, values=np.arange(6.0)))


@case("dataset_2d.h5", "parse", "expected a 1-D array")
def _(p):
    binsparse(p, arrays=dict(CSR, indices_1=np.zeros((5, 1), np.int64)))


@case("dataset_huge.h5", "limit", "/values")
def _(p):
    # 10^12 float64 values declared, none written (chunked: nothing stored)
    d = json.loads(json.dumps(CSR_D))
    d["binsparse"]["number_of_stored_values"] = 10**12
    with h5py.File(p, "w") as f:
        f.attrs["binsparse"] = json.dumps(d)
        f.create_dataset("values", shape=(10**12,), dtype="f8", chunks=(1024,))
        f.create_dataset("pointers_to_1", data=CSR["pointers_to_1"])
        f.create_dataset("indices_1", data=CSR["indices_1"])


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    expect = {}
    for name, (kind, text, f) in CASES.items():
        f(os.path.join(d, name))
        expect[name] = [kind, text]
    with open(os.path.join(d, "expect.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(CASES)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
