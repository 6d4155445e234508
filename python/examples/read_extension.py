"""Read the table of examples/extension_column.rs (Arrow IPC file and Parquet) into
scipy.sparse, through the extension types of python/arrow_sparse_ext.py.

    cargo run --example extension_column -- DIR
    python python/examples/read_extension.py DIR
"""

import sys
from pathlib import Path

import numpy as np
import pyarrow.ipc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import arrow_sparse_ext as ase  # noqa: E402  (registers the extension types)

d = Path(sys.argv[1])
with pyarrow.ipc.open_file(d / "table.arrow") as f:
    from_ipc = f.read_all()
from_parquet = pq.read_table(d / "table.parquet")

for name, table in (("Arrow IPC", from_ipc), ("Parquet", from_parquet)):
    col = table.column("tensor")
    assert isinstance(col.type, ase.CsrType), col.type
    matrices = [chunk.to_scipy(i) for chunk in col.chunks for i in range(len(chunk))]
    ids = table.column("id").to_pylist()
    for id_, m in zip(ids, matrices):
        n = 3 + id_ % 5
        want = np.zeros((n, n))
        for i in range(n):
            want[i, (i + id_) % n] = (id_ + i) * 0.5
        assert np.array_equal(m.toarray(), want), id_
    print(f"{name}: {len(matrices)} scipy {type(matrices[0]).__name__}s, "
          f"dim names {col.type.metadata['dim_names']}, first nnz {matrices[0].nnz}")
