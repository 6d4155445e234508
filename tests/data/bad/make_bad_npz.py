"""Regenerate the malformed .npz files of the bad-input corpus (run from the repository root):

    .venv/bin/python tests/data/bad/make_bad_npz.py

Each file breaks one rule; tests/io_formats.rs lists the error each must give.
The .mtx and .tns files of this directory are written by hand.
"""
import io
import os
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(arr):
    b = io.BytesIO()
    np.lib.format.write_array(b, np.asanyarray(arr), allow_pickle=True)
    return b.getvalue()


def npz(name, arrays, compress=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(os.path.join(HERE, name), "w", compression=compress) as z:
        for k, v in arrays.items():
            z.writestr(k + ".npy", v if isinstance(v, bytes) else npy(v))


def csr(**over):
    base = dict(indices=np.array([0, 2, 1], dtype=np.int32), indptr=np.array([0, 2, 3], dtype=np.int32),
                format=np.array(b"csr"), shape=np.array([2, 3]), data=np.array([1.0, 2.0, 3.0]))
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


with open(os.path.join(HERE, "not_a_zip.npz"), "w") as f:
    f.write("this is not a zip archive\n")
npz("missing_indptr.npz", csr(indptr=None))
npz("decreasing_indptr.npz", csr(indptr=np.array([0, 3, 2, 3], dtype=np.int32), shape=np.array([3, 3])))
npz("index_out_of_bounds.npz", csr(indices=np.array([0, 3, 1], dtype=np.int32)))
npz("bsr.npz", csr(format=np.array(b"bsr")))
npz("unknown_format.npz", csr(format=np.array(b"xyz")))
npz("object_array.npz", csr(data=np.array([1.0, "two", None], dtype=object)))
npz("shape_3d_csr.npz", csr(shape=np.array([2, 3, 4])))
npz("complex_values.npz", csr(data=np.array([1 + 1j, 2, 3])))
npz("data_length_mismatch.npz", csr(data=np.array([1.0, 2.0])))
npz("not_npy_entry.npz", csr(data=b"just some bytes, not an npy array\n"))
npz("no_sparse_arrays.npz", dict(a=np.arange(3), b=np.ones(2)))
npz("fill_value_nonzero.npz", dict(data=np.array([1.0, 2.0]), shape=np.array([2, 2]),
                                   fill_value=np.array(1.0), coords=np.array([[0, 1], [1, 0]])))
npz("gcxs_unsorted_axes.npz", dict(data=np.array([1.0]), shape=np.array([2, 3, 4]),
                                   fill_value=np.array(0.0), indices=np.array([0]),
                                   indptr=np.array([0, 1, 1, 1, 1, 1, 1, 1, 1]),
                                   compressed_axes=np.array([2, 0])))
npz("coords_wrong_shape.npz", dict(data=np.array([1.0, 2.0]), shape=np.array([2, 2]),
                                   fill_value=np.array(0.0), coords=np.array([[0, 1, 1], [1, 0, 0]])))
# the header of data.npy announces 1000 float64 but 3 follow
hdr = npy(np.zeros(1000))
lie = hdr[: len(hdr) - 8000] + np.array([1.0, 2.0, 3.0]).tobytes()
npz("header_lies.npz", csr(data=lie))
# a stored (uncompressed) entry with one flipped data byte: the CRC-32 check fails
npz("bad_crc.npz", csr(), compress=zipfile.ZIP_STORED)
raw = bytearray(open(os.path.join(HERE, "bad_crc.npz"), "rb").read())
pos = raw.find(np.array([1.0, 2.0, 3.0]).tobytes())
raw[pos + 7] ^= 0x01
open(os.path.join(HERE, "bad_crc.npz"), "wb").write(bytes(raw))
# a valid archive cut in half: no central directory
npz("truncated.npz", csr())
raw = open(os.path.join(HERE, "truncated.npz"), "rb").read()
open(os.path.join(HERE, "truncated.npz"), "wb").write(raw[: len(raw) // 2])
print("ok")
