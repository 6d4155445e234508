"""Regenerate the memory-amplification reproducers of issue #18 (run from the repository root):

    .venv/bin/python tests/data/bad/limits/make_limits.py

tests/read_limits.rs reads each under a counting allocator and checks that the read
fails with Error::Limit and stays under the documented bound (format/SPEC.md section 11).

- npz_deflated_indptr_2p24.npz: a scipy CSR matrix of 2^24 rows and no entries, its
  int64 indptr (128 MiB of zeros) deflated to about 130 kB. The issue's file had 2^27 rows
  in 1 MB (2.1 GB peak before the npz read limit); this one is the same defect scaled down
  to keep the repository small: 128 MiB inflated is twice the 64 MiB budget of a 130 kB file.
"""
import io
import os
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(arr):
    b = io.BytesIO()
    np.lib.format.write_array(b, np.asanyarray(arr), allow_pickle=False)
    return b.getvalue()


rows = 1 << 24
arrays = dict(
    indices=np.zeros(0, dtype=np.int32),
    indptr=np.zeros(rows + 1, dtype=np.int64),
    format=np.array(b"csr"),
    shape=np.array([rows, 1]),
    data=np.zeros(0),
)
with zipfile.ZipFile(os.path.join(HERE, "npz_deflated_indptr_2p24.npz"), "w",
                     compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for k, v in arrays.items():
        # fixed timestamps: the file is reproducible byte for byte
        info = zipfile.ZipInfo(k + ".npy", date_time=(2026, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, npy(v))
