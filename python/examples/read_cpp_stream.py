"""Read a SparseTensor stream written by Arrow C++ into scipy (what pyarrow cannot
do: pyarrow.ipc has no reader for SparseTensor messages).

    python python/examples/read_cpp_stream.py [FILE.arrow]

Default file: format/golden/stream_mixed.arrow, written by libarrow 26's
arrow::ipc::WriteSparseTensor (COO, CSR, dense, CSF, CSC and an empty COO).
"""

import pathlib
import sys

import numpy as np

import arrow_sparse

path = sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2] / "format/golden/stream_mixed.arrow"
reader = arrow_sparse.open(path)  # memory-mapped; nothing decoded yet
print(f"{path}: {len(reader)} tensors")
for i, t in enumerate(reader):
    m = t.to_scipy()
    zero_copy = t.format in ("csr", "csc") and np.shares_memory(m.data, t.buffers()["values"])
    print(f"  [{i}] {t.format:5} {t.value_type:8} shape={t.shape} nnz={t.nnz} -> {type(m).__name__}"
          f"{' (zero-copy view of the file)' if zero_copy else ''}")
    dense = m.toarray() if hasattr(m, "toarray") else m.todense()
    assert np.array_equal(np.asarray(dense), t.to_numpy().astype(dense.dtype), equal_nan=True)
