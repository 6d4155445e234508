"""Sparse tensor columns of arrow-sparse, for pyarrow (pure Python, no build step).

Importing this module registers one ``pyarrow.ExtensionType`` per extension name
written by arrow-sparse (``arrow_sparse.coo``, ``.csr``, ``.csc``, ``.csf``,
``.gcs``; layout in ``format/SPEC.md`` section 10), so ``pyarrow.ipc.open_file``,
``pyarrow.ipc.open_stream`` and ``pyarrow.parquet.read_table`` give typed columns
whose chunks are :class:`SparseTensorArray`::

    import pyarrow.ipc, arrow_sparse_ext as ase
    table = pyarrow.ipc.open_file("tensors.arrow").read_all()
    chunk = table.column("tensor").chunk(0)
    chunk.row(0)          # dict of numpy arrays (zero-copy views of the column)
    chunk.to_pyarrow(0)   # pyarrow.SparseCOOTensor / SparseCSRMatrix / SparseCSCMatrix / SparseCSFTensor
    chunk.to_scipy(0)     # scipy.sparse array (N-D coo_array for COO / CSF / GCS)
    chunk.to_dense(0)     # numpy.ndarray

and back: :func:`from_pyarrow` (a list of pyarrow sparse tensors),
:func:`from_scipy` (a list of scipy.sparse matrices) and :func:`from_rows` (row
dicts, the form :meth:`SparseTensorArray.row` returns) build a column that
arrow-sparse reads. pyarrow's sparse tensors always hold int64 indices and do not
report a CSF axis order: pass ``index_type`` / ``indptr_type`` / ``axis_order``
to get the column's original types back. scipy.sparse has no float16: float16
values are widened to float32 by :meth:`SparseTensorArray.to_scipy`.
"""

import json

import numpy as np
import pyarrow as pa

VERSION = 1
FORMATS = ("coo", "csr", "csc", "csf", "gcs")
NAMES = {f: "arrow_sparse." + f for f in FORMATS}
INDEX_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
VALUE_TYPES = INDEX_TYPES + ("float16", "float32", "float64")


class ExtensionMetadataError(ValueError):
    """The column's ``ARROW:extension:metadata`` is not what arrow-sparse writes."""


def _arrow(name):
    return pa.from_numpy_dtype(np.dtype(name))


def _check_metadata(fmt, meta):
    if not isinstance(meta, dict) or meta.get("version") != VERSION:
        raise ExtensionMetadataError(f"unsupported metadata {meta!r} (version {VERSION} expected)")
    ndim = meta.get("ndim")
    if not isinstance(ndim, int) or ndim < 1 or ndim > 256:
        raise ExtensionMetadataError(f"bad ndim {ndim!r}")
    if meta.get("value_type") not in VALUE_TYPES or meta.get("index_type") not in INDEX_TYPES:
        raise ExtensionMetadataError(f"bad value or index type in {meta!r}")
    if fmt != "coo" and meta.get("indptr_type") not in INDEX_TYPES:
        raise ExtensionMetadataError(f"bad indptr_type in {meta!r}")
    if len(meta.get("dim_names", [""] * ndim)) != ndim:
        raise ExtensionMetadataError("dim_names must have ndim entries")
    if fmt in ("csr", "csc") and ndim != 2:
        raise ExtensionMetadataError(f"ndim {ndim} for {fmt}")
    if fmt == "gcs" and meta.get("compressed_axis") not in ("row", "column"):
        raise ExtensionMetadataError("compressed_axis must be row or column")


def _fixed(n):
    return pa.list_(pa.field("item", pa.int64(), nullable=False), n)


def _list(t):
    return pa.list_(pa.field("item", t, nullable=False))


def children(fmt, meta):
    """The (name, Arrow type) children of the storage struct, in write order."""
    n = meta["ndim"]
    index = _list(_arrow(meta["index_type"]))
    indptr = _list(_arrow(meta.get("indptr_type", meta["index_type"])))
    values = _list(_arrow(meta["value_type"]))
    c = [("shape", _fixed(n))]
    if fmt == "coo":
        c += [("coords", index), ("values", values), ("canonical", pa.bool_())]
    elif fmt == "csf":
        c += [(f"indptr_{l}", indptr) for l in range(n - 1)]
        c += [(f"indices_{l}", index) for l in range(n)]
        c += [("values", values)]
        if "axis_order" not in meta:
            c += [("axis_order", _fixed(n))]
    else:
        c += [("indptr", indptr), ("indices", index), ("values", values)]
        if fmt == "gcs" and "dimensions" not in meta:
            c += [("dimensions", _fixed(n)), ("partitioning", _fixed(1))]
    return c


def storage_type(fmt, meta):
    """The Arrow storage type of a column (a struct of non-nullable children)."""
    return pa.struct([pa.field(k, t, nullable=False) for k, t in children(fmt, meta)])


class SparseTensorType(pa.ExtensionType):
    """Base of the five extension types; ``metadata`` is the parsed JSON."""

    fmt = None

    def __init__(self, storage, metadata):
        _check_metadata(self.fmt, metadata)
        self.metadata = dict(metadata)
        super().__init__(storage, NAMES[self.fmt])

    def __arrow_ext_serialize__(self):
        return json.dumps(
            self.metadata, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()

    @classmethod
    def __arrow_ext_deserialize__(cls, storage, serialized):
        try:
            meta = json.loads(serialized.decode())
        except ValueError as e:
            raise ExtensionMetadataError(f"invalid JSON: {e}") from e
        _check_metadata(cls.fmt, meta)
        expected = storage_type(cls.fmt, meta)
        if [f.name for f in storage] != [f.name for f in expected]:
            raise ExtensionMetadataError(f"storage {storage} does not match {expected}")
        return cls(storage, meta)

    def __arrow_ext_class__(self):
        return SparseTensorArray

    def __reduce__(self):
        return type(self).__arrow_ext_deserialize__, (self.storage_type, self.__arrow_ext_serialize__())


class CooType(SparseTensorType):
    fmt = "coo"


class CsrType(SparseTensorType):
    fmt = "csr"


class CscType(SparseTensorType):
    fmt = "csc"


class CsfType(SparseTensorType):
    fmt = "csf"


class GcsType(SparseTensorType):
    fmt = "gcs"


TYPES = {t.fmt: t for t in (CooType, CsrType, CscType, CsfType, GcsType)}


def make_type(fmt, meta):
    """The extension type of a column of format ``fmt`` with metadata ``meta``."""
    return TYPES[fmt](storage_type(fmt, meta), meta)


def register():
    """Register the five types with pyarrow (done on import; idempotent)."""
    for fmt, cls in TYPES.items():
        meta = {"version": VERSION, "ndim": 2, "value_type": "float64", "index_type": "int64",
                "indptr_type": "int64", "compressed_axis": "row"}
        try:
            pa.register_extension_type(cls(storage_type(fmt, meta), meta))
        except pa.ArrowKeyError:
            pass  # already registered


register()


def _list_row(lst, i):
    """Row ``i`` of a list child as a numpy view of the child's buffer."""
    off = lst.offsets
    a, b = off[i].as_py(), off[i + 1].as_py()
    return lst.values.to_numpy(zero_copy_only=True)[a:b]


class SparseTensorArray(pa.ExtensionArray):
    """A chunk of a sparse tensor column; each row is one tensor."""

    @property
    def fmt(self):
        return self.type.fmt

    @property
    def meta(self):
        return self.type.metadata

    def row(self, i):
        """Row ``i`` as a dict of numpy arrays (views of the column's buffers), or
        ``None`` for a null row. Keys: ``shape``, ``dim_names``, ``values`` and
        ``coords`` (nnz x ndim) + ``canonical`` for COO; ``indptr`` and ``indices``
        for CSR / CSC / GCS (lists of arrays, one per level, for CSF);
        ``axis_order`` for CSF; ``compressed_axis``, ``dimensions`` and
        ``partitioning`` for GCS."""
        st = self.storage
        if not st[i].is_valid:
            return None
        meta, fmt = self.meta, self.fmt
        n = meta["ndim"]
        field = st.field
        r = {
            "shape": tuple(field("shape")[i].as_py()),
            "dim_names": list(meta.get("dim_names", [""] * n)),
            "values": _list_row(field("values"), i),
        }
        if fmt == "coo":
            r["coords"] = _list_row(field("coords"), i).reshape(-1, n)
            r["canonical"] = field("canonical")[i].as_py()
        elif fmt == "csf":
            r["indptr"] = [_list_row(field(f"indptr_{l}"), i) for l in range(n - 1)]
            r["indices"] = [_list_row(field(f"indices_{l}"), i) for l in range(n)]
            r["axis_order"] = tuple(meta["axis_order"] if "axis_order" in meta
                                    else field("axis_order")[i].as_py())
        else:
            r["indptr"] = _list_row(field("indptr"), i)
            r["indices"] = _list_row(field("indices"), i)
            if fmt == "gcs":
                r["compressed_axis"] = meta["compressed_axis"]
                if "dimensions" in meta:
                    r["dimensions"], r["partitioning"] = tuple(meta["dimensions"]), tuple(meta["partitioning"])
                else:
                    r["dimensions"] = tuple(field("dimensions")[i].as_py())
                    r["partitioning"] = tuple(field("partitioning")[i].as_py())
        return r

    def rows(self):
        return [self.row(i) for i in range(len(self))]

    def to_pyarrow(self, i):
        """Row ``i`` as a pyarrow sparse tensor (GCS: its reduced CSR / CSC matrix)."""
        return row_to_pyarrow(self.fmt, self.row(i))

    def to_scipy(self, i):
        """Row ``i`` as a scipy.sparse array: csr_array / csc_array for CSR / CSC,
        coo_array (N-D) for COO, CSF and GCS."""
        return row_to_scipy(self.fmt, self.row(i))

    def to_dense(self, i):
        """Row ``i`` as a dense numpy array (duplicates summed)."""
        return row_to_dense(self.fmt, self.row(i))


def _major(indptr):
    return np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr.astype(np.int64)))


def _gcs_reduced(row):
    shape, dims, (p,) = row["shape"], row["dimensions"], row["partitioning"]
    return (int(np.prod([shape[d] for d in dims[:p]], dtype=np.int64)),
            int(np.prod([shape[d] for d in dims[p:]], dtype=np.int64)))


def row_coords(fmt, row):
    """The (nnz, ndim) int64 coordinates of a row's stored entries, in storage order."""
    shape, n = row["shape"], len(row["shape"])
    if fmt == "coo":
        return row["coords"].astype(np.int64)
    if fmt in ("csr", "csc"):
        major, minor = _major(row["indptr"]), row["indices"].astype(np.int64)
        return np.stack([major, minor] if fmt == "csr" else [minor, major], axis=1)
    if fmt == "csf":
        indptr, indices, order = row["indptr"], row["indices"], row["axis_order"]
        out = np.zeros((len(row["values"]), n), dtype=np.int64)
        node = np.arange(len(row["values"]), dtype=np.int64)  # node of each leaf at level l
        for l in range(n - 1, -1, -1):
            out[:, order[l]] = indices[l].astype(np.int64)[node]
            if l > 0:
                node = _major(indptr[l - 1])[node]
        return out
    # gcs: reduced (r, c) -> N-D
    major, minor = _major(row["indptr"]), row["indices"].astype(np.int64)
    r, c = (major, minor) if row["compressed_axis"] == "row" else (minor, major)
    dims, (p,) = row["dimensions"], row["partitioning"]
    out = np.zeros((len(row["values"]), n), dtype=np.int64)
    for part, x in ((dims[:p], r), (dims[p:], c)):
        stride = 1
        for d in reversed(part):
            out[:, d] = (x // stride) % shape[d]
            stride *= shape[d]
    return out


def row_to_dense(fmt, row):
    dense = np.zeros(row["shape"], dtype=row["values"].dtype)
    coords = row_coords(fmt, row)
    np.add.at(dense, tuple(coords.T), row["values"])
    return dense


def _i64(x):
    return np.ascontiguousarray(x, dtype=np.int64)


def row_to_pyarrow(fmt, row):
    names = row["dim_names"]
    v = np.ascontiguousarray(row["values"])
    if fmt == "coo" and len(v) == 0:
        # libarrow refuses an empty coordinate matrix from numpy; go through dense
        if np.prod(row["shape"], dtype=np.float64) > 1 << 24:
            raise ValueError(f"pyarrow cannot hold an empty COO tensor of shape {row['shape']}")
        return pa.SparseCOOTensor.from_dense_numpy(np.zeros(row["shape"], v.dtype), dim_names=names)
    if fmt == "coo":
        return pa.SparseCOOTensor.from_numpy(v, _i64(row["coords"]).reshape(-1, len(row["shape"])), row["shape"],
                                           dim_names=names)
    if fmt == "csf":
        return pa.SparseCSFTensor.from_numpy(
            v, [_i64(p) for p in row["indptr"]], [_i64(x) for x in row["indices"]],
            row["shape"], axis_order=list(row["axis_order"]), dim_names=names)
    shape = row["shape"]
    kind = fmt
    if fmt == "gcs":
        shape, names = _gcs_reduced(row), None
        kind = "csr" if row["compressed_axis"] == "row" else "csc"
    cls = pa.SparseCSRMatrix if kind == "csr" else pa.SparseCSCMatrix
    return cls.from_numpy(v, _i64(row["indptr"]), _i64(row["indices"]),
                          shape, dim_names=names)


def row_to_scipy(fmt, row):
    import scipy.sparse as sp

    v = row["values"]
    if v.dtype == np.float16:
        v = v.astype(np.float32)
    if fmt == "csr":
        return sp.csr_array((v, row["indices"], row["indptr"]), shape=row["shape"])
    if fmt == "csc":
        return sp.csc_array((v, row["indices"], row["indptr"]), shape=row["shape"])
    coords = row_coords(fmt, row)
    return sp.coo_array((v, tuple(coords.T)), shape=row["shape"])


def _np_name(dtype):
    name = np.dtype(dtype).name
    if name not in VALUE_TYPES:
        raise TypeError(f"unsupported element type {name}")
    return name


def from_rows(fmt, rows, meta=None):
    """A column of format ``fmt`` from row dicts (``None`` for a null row).

    ``meta`` (the extension metadata) is inferred from the first row when not
    given: types from its arrays, the CSF axis order / GCS map as column constants
    when every row has the same."""
    live = [r for r in rows if r is not None]
    if meta is None:
        if not live:
            raise ValueError("cannot infer the type of an empty column: pass meta")
        r0 = live[0]
        meta = {"version": VERSION, "ndim": len(r0["shape"]), "dim_names": list(r0["dim_names"]),
                "value_type": _np_name(r0["values"].dtype)}
        if fmt == "coo":
            meta["index_type"] = _np_name(r0["coords"].dtype)
        elif fmt == "csf":
            meta["index_type"] = _np_name(r0["indices"][0].dtype)
            meta["indptr_type"] = _np_name(r0["indptr"][0].dtype if r0["indptr"] else r0["indices"][0].dtype)
            if all(tuple(r["axis_order"]) == tuple(r0["axis_order"]) for r in live):
                meta["axis_order"] = list(r0["axis_order"])
        else:
            meta["index_type"] = _np_name(r0["indices"].dtype)
            meta["indptr_type"] = _np_name(r0["indptr"].dtype)
            if fmt == "gcs":
                meta["compressed_axis"] = r0["compressed_axis"]
                key = lambda r: (tuple(r["dimensions"]), tuple(r["partitioning"]))  # noqa: E731
                if all(key(r) == key(r0) for r in live):
                    meta["dimensions"], meta["partitioning"] = map(list, key(r0))
    ext = make_type(fmt, meta)
    arrays = []
    for name, t in children(fmt, meta):
        if pa.types.is_fixed_size_list(t):
            size = t.list_size
            flat = []
            for r in rows:
                if r is None:
                    flat += [0] * size
                elif name == "shape":
                    flat += list(r["shape"])
                elif name == "axis_order":
                    flat += list(r["axis_order"])
                else:
                    flat += list(r[name])
            if len(flat) != size * len(rows):
                raise ValueError(f"{name}: every row needs {size} entries")
            arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.int64()), type=t))
        elif pa.types.is_boolean(t):
            arrays.append(pa.array([bool(r["canonical"]) if r else False for r in rows], pa.bool_()))
        else:
            item = t.value_type
            parts = []
            for r in rows:
                if r is None:
                    parts.append(np.zeros(0, dtype=item.to_pandas_dtype()))
                    continue
                if name.startswith("indptr_"):
                    x = r["indptr"][int(name[7:])]
                elif name.startswith("indices_"):
                    x = r["indices"][int(name[8:])]
                elif name == "coords":
                    x = np.asarray(r["coords"]).reshape(-1)
                else:
                    x = r[name]
                x = np.asarray(x)
                cast = x.astype(item.to_pandas_dtype())
                if cast.dtype.kind in "iu" and x.size and not np.array_equal(cast, x):
                    raise OverflowError(f"{name} does not fit {item}")
                parts.append(cast)
            offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts])]).astype(np.int64)
            if offsets[-1] > np.iinfo(np.int32).max:
                raise OverflowError(f"{name}: more than 2^31 - 1 elements (split into chunks)")
            values = pa.array(np.concatenate(parts) if parts else np.zeros(0, item.to_pandas_dtype()), item)
            arrays.append(pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values, type=t))
    mask = pa.array([r is None for r in rows], pa.bool_()) if any(r is None for r in rows) else None
    storage = pa.StructArray.from_arrays(
        arrays, fields=[pa.field(k, t, nullable=False) for k, t in children(fmt, meta)], mask=mask)
    return pa.ExtensionArray.from_storage(ext, storage)


def _cast(x, name):
    return x if name is None else x.astype(name)


def from_pyarrow(tensors, index_type=None, indptr_type=None, axis_order=None):
    """A column from pyarrow SparseCOOTensor / SparseCSRMatrix / SparseCSCMatrix /
    SparseCSFTensor objects of one kind (``None`` for a null row).

    pyarrow hands out int64 indices: ``index_type`` / ``indptr_type`` (numpy type
    names) narrow them. pyarrow does not report a CSF tensor's axis order: give
    ``axis_order`` (one sequence for every row, or one per row; default 0..n-1)."""
    kinds = {pa.SparseCOOTensor: "coo", pa.SparseCSRMatrix: "csr",
             pa.SparseCSCMatrix: "csc", pa.SparseCSFTensor: "csf"}
    fmts = {kinds[type(t)] for t in tensors if t is not None}
    if len(fmts) != 1:
        raise TypeError(f"one kind of pyarrow sparse tensor expected, found {fmts or 'none'}")
    (fmt,) = fmts
    rows = []
    for k, t in enumerate(tensors):
        if t is None:
            rows.append(None)
            continue
        names = [t.dim_name(d) for d in range(t.ndim)]
        r = {"shape": tuple(t.shape), "dim_names": names}
        if fmt == "coo":
            data, coords = t.to_numpy()
            r.update(values=data.reshape(-1), coords=_cast(coords, index_type),
                     canonical=t.has_canonical_format)
        elif fmt == "csf":
            data, indptr, indices = t.to_numpy()
            order = axis_order if axis_order is not None else range(t.ndim)
            if len(order) and not np.isscalar(list(order)[0]):
                order = order[k]
            r.update(values=data.reshape(-1), indptr=[_cast(p, indptr_type) for p in indptr],
                     indices=[_cast(x, index_type) for x in indices], axis_order=tuple(order))
        else:
            data, indptr, indices = t.to_numpy()
            r.update(values=data.reshape(-1), indptr=_cast(indptr, indptr_type),
                     indices=_cast(indices, index_type))
        rows.append(r)
    return from_rows(fmt, rows)


def from_scipy(matrices, fmt="csr", index_type=None, indptr_type=None, dim_names=None):
    """A CSR, CSC or COO column from scipy.sparse matrices / arrays (converted to
    ``fmt``; COO keeps the entries' order and reports them canonical only when
    scipy says so)."""
    rows = []
    for m in matrices:
        if m is None:
            rows.append(None)
            continue
        names = list(dim_names) if dim_names else [""] * m.ndim
        if fmt == "coo":
            c = m.tocoo()
            coords = np.stack(c.coords, axis=1) if hasattr(c, "coords") else np.stack([c.row, c.col], axis=1)
            rows.append({"shape": tuple(c.shape), "dim_names": names, "values": c.data,
                         "coords": _cast(coords, index_type), "canonical": bool(c.has_canonical_format)})
        else:
            c = m.tocsr() if fmt == "csr" else m.tocsc()
            rows.append({"shape": tuple(c.shape), "dim_names": names, "values": c.data,
                         "indptr": _cast(c.indptr, indptr_type), "indices": _cast(c.indices, index_type)})
    return from_rows(fmt, rows)
