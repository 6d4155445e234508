"""Sparse tensors through Apache Arrow, from Python.

arrow_sparse reads and writes Arrow SparseTensor IPC streams (what Arrow C++'s
``WriteSparseTensor`` writes, and what pyarrow cannot read), Parquet archives of
tensors, Matrix Market (``.mtx``), FROSTT (``.tns``) and scipy / pydata-sparse
``.npz`` files, and record-batch files with a sparse tensor column. Formats: COO,
CSR, CSC, CSF (any axis order), dense, GCS and DM.

Streams are memory-mapped: the numpy arrays of :meth:`Tensor.buffers` and the
scipy matrices of :meth:`Tensor.to_scipy` are views of the file, not copies::

    >>> import arrow_sparse, numpy as np, scipy.sparse as sp, tempfile, os
    >>> m = sp.csr_array(np.array([[0, 1.5, 0], [2.0, 0, 3.0]]))
    >>> path = os.path.join(tempfile.mkdtemp(), "m.arrow")
    >>> arrow_sparse.write(path, [m])
    >>> [t] = arrow_sparse.read(path)
    >>> t.format, t.shape, t.nnz, t.value_type, t.index_type
    ('csr', (2, 3), 3, 'float64', 'int32')
    >>> t.buffers()["values"]
    array([1.5, 2. , 3. ])
    >>> (t.to_scipy() != m).nnz
    0

The GIL is released while files are read, decoded, validated and written. Errors
are :class:`ArrowSparseError` subclasses (see :mod:`arrow_sparse.errors`).
"""

import numpy as _np

from . import _native
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _error_names

__all__ = [
    "Tensor", "Reader", "read", "open", "write", "write_dataset", "read_dataset", "read_range", "spmv", "spmm", "mttkrp", "ttv", "sum", "sum_duplicates",
    "canonicalize", "transpose", "map_values", "add", "subtract", "multiply", "scale", "allclose",
] + list(
    _error_names
)

# scipy.sparse holds int32 / int64 indices and no float16
_SCIPY_INDEX = (_np.dtype(_np.int32), _np.dtype(_np.int64))


class Tensor:
    """One sparse or dense tensor, with the custom metadata of its message.

    Tensors are immutable. Their buffers are shared, never copied, between
    tensors, numpy arrays and files: :meth:`buffers` gives read-only numpy views
    that keep the memory (a mapped file, or the numpy arrays a tensor was built
    from) alive.

    >>> import arrow_sparse, numpy as np
    >>> t = arrow_sparse.Tensor.from_numpy(np.array([[1, 0], [0, 2]], dtype=np.int16))
    >>> t.format, t.shape, t.nnz
    ('dense', (2, 2), 2)
    >>> t.convert("coo", index_type="int32").buffers()["coords"]
    array([[0, 0],
           [1, 1]], dtype=int32)
    """

    __slots__ = ("_t",)

    def __init__(self, native):
        if not isinstance(native, _native.Tensor):
            raise TypeError(
                "Tensor objects come from arrow_sparse.read / open or "
                "Tensor.from_scipy / from_numpy"
            )
        self._t = native

    # ------------------------------------------------------------ properties
    @property
    def format(self):
        """``"coo"``, ``"csr"``, ``"csc"``, ``"csf"``, ``"dense"``, ``"gcs"``, ``"dm"`` or ``"level"``."""
        return self._t.format

    @property
    def shape(self):
        """Extents, a tuple of ints."""
        return tuple(self._t.shape)

    @property
    def ndim(self):
        """Number of dimensions."""
        return len(self._t.shape)

    @property
    def dim_names(self):
        """Dimension names, a list of str (``""`` where unnamed)."""
        return self._t.dim_names

    @property
    def value_type(self):
        """Element type name: ``"int8"`` ... ``"uint64"``, ``"float16"``, ``"float32"``, ``"float64"``."""
        return self._t.value_type

    @property
    def dtype(self):
        """The numpy dtype of the values."""
        return _np.dtype(self._t.value_type)

    @property
    def index_type(self):
        """Index type name (``"int32"``, ...), or None for a dense tensor."""
        return self._t.index_type

    @property
    def indptr_type(self):
        """Index type of the indptr buffers (CSR, CSC, CSF, GCS), else None."""
        return self._t.indptr_type

    @property
    def nnz(self):
        """Number of stored entries (for a dense tensor: its non-zeros)."""
        return self._t.nnz

    @property
    def metadata(self):
        """The message's custom metadata, a dict of str to str."""
        return self._t.metadata

    @property
    def axis_order(self):
        """CSF: the order in which dimensions are compressed; else None."""
        return self._t.axis_order

    @property
    def dimensions(self):
        """GCS / DM: the permutation of the dimensions of the map; else None."""
        return self._t.dimensions

    @property
    def partitioning(self):
        """GCS / DM: split points of :attr:`dimensions` into reduced axes; else None."""
        return self._t.partitioning

    @property
    def strides(self):
        """Dense: element strides (in elements, signed: a negative stride walks
        its dimension backwards); else None."""
        return self._t.strides

    @property
    def offset(self):
        """Dense: the element offset of index ``(0, ..., 0)`` in the values
        buffer (numpy's strided layout: element ``i`` is at ``offset +
        sum(strides[d] * i[d])``); else None.

        >>> import arrow_sparse, numpy as np
        >>> a = np.arange(6, dtype=np.int32).reshape(2, 3)
        >>> t = arrow_sparse.Tensor.from_numpy(a[::-1, ::-1])
        >>> t.strides, t.offset, np.shares_memory(t.to_numpy(), a)
        ([-3, -1], 5, True)
        """
        return self._t.offset

    @property
    def compressed_axis(self):
        """GCS: ``"row"`` or ``"column"``, the compressed axis of the reduced
        matrix; else None."""
        return self._t.compressed_axis

    @property
    def reduced_shape(self):
        """GCS: the shape of the reduced 2-D matrix, a tuple; else None."""
        r = self._t.reduced_shape
        return None if r is None else tuple(r)

    @property
    def storage_format(self):
        """DM: the format of the storage tensor; else None."""
        return self._t.storage_format

    @property
    def is_canonical(self):
        """COO: whether the entries are sorted without duplicates; else None."""
        return self._t.is_canonical

    # ------------------------------------------------------------ buffers
    def buffers(self):
        """The tensor's buffers as read-only numpy arrays, without copies.

        Names by format: ``coords`` (COO, shape ``(nnz, ndim)``) and ``values``;
        ``indptr``, ``indices``, ``values`` (CSR, CSC and the reduced matrix of
        GCS); ``indptr_0`` ..., ``indices_0`` ..., ``values`` (CSF, one per level);
        ``values`` (dense, flat storage order; see :attr:`strides` and
        :attr:`offset`); DM: its storage's buffers prefixed ``storage.``; level
        tensors: MLIR's ``positions_<level>`` and ``coordinates_<level>`` for the
        levels that have them, and ``values``. For a tensor read from a stream
        every array is a view into the memory-mapped file and keeps it mapped.

        >>> import arrow_sparse, numpy as np
        >>> t = arrow_sparse.Tensor.from_numpy(np.eye(2)).convert("csr", index_type="int32")
        >>> sorted(t.buffers())
        ['indices', 'indptr', 'values']
        >>> t.buffers()["indptr"].flags.writeable
        False
        """
        out = {}
        ndim = len(self._t.shape)
        for name, view in self._t._buffers():
            a = _np.asarray(view)
            if name.endswith("coords"):
                if _coo_column_major(self._t, name):
                    a = a.reshape(ndim, -1).T
                else:
                    a = a.reshape(-1, ndim)
            out[name] = a
        return out

    # ------------------------------------------------------------ conversions
    def convert(self, to, index_type="int64", axis_order=None):
        """The same entries in format ``to`` (``"coo"``, ``"csr"``, ``"csc"``,
        ``"csf"``, ``"dense"``, ``"gcs"``, ``"dm"``) with indices of ``index_type``;
        ``axis_order`` for CSF. Entries are kept as stored (duplicates too).
        CSR <-> CSC with the index type kept (``index_type`` equal to the
        tensor's index and indptr type) runs the library's ``transpose_csx``
        kernel directly (one radix scatter, like scipy's ``tocsc``); every other
        conversion goes through COO. (For the transposed matrix, see
        :func:`transpose`.)

        >>> import arrow_sparse, numpy as np
        >>> t = arrow_sparse.Tensor.from_numpy(np.array([[0, 2.0], [3.0, 0]]))
        >>> c = t.convert("csc", index_type="int16")
        >>> c.format, c.index_type, c.nnz
        ('csc', 'int16', 2)
        """
        return Tensor(self._t.convert(to, index_type, axis_order))

    def to_gcs(self, dimensions, partitioning, compressed_axis="row", index_type="int64"):
        """A GCS tensor: the dimensions, permuted by ``dimensions`` and grouped
        at the split points ``partitioning``, reduced to a CSR (``"row"``) or CSC
        (``"column"``) matrix.

        >>> import arrow_sparse, numpy as np
        >>> t = arrow_sparse.Tensor.from_numpy(np.arange(24.0).reshape(2, 3, 4))
        >>> g = t.to_gcs([0, 1, 2], [2])
        >>> g.format, g.shape, g.dimensions, g.partitioning
        ('gcs', (2, 3, 4), [0, 1, 2], [2])
        """
        return Tensor(self._t.to_gcs(list(dimensions), list(partitioning), compressed_axis, index_type))

    def to_dm(self, dimensions, partitioning, storage="coo", index_type="int64"):
        """A DM tensor: the map (``dimensions``, ``partitioning``) over a storage
        tensor of format ``storage`` with ``index_type`` indices.

        >>> import arrow_sparse, numpy as np
        >>> t = arrow_sparse.Tensor.from_numpy(np.arange(6.0).reshape(2, 3))
        >>> d = t.to_dm([1, 0], [1], storage="csr")
        >>> d.format, d.to_numpy().tolist() == t.to_numpy().tolist()
        ('dm', True)
        >>> t.to_dm([1, 0], [1], storage="csr", index_type="int16").index_type
        'int16'
        """
        return Tensor(self._t.to_dm(list(dimensions), list(partitioning), storage, index_type))

    @property
    def levels(self):
        """A level tensor's levels in MLIR's map syntax (level ``l`` stores the
        dimension named on its left); None for other formats.

        >>> import arrow_sparse, numpy as np
        >>> t = arrow_sparse.Tensor.from_numpy(np.eye(3)).to_level("(d0, d1) -> (d0 : compressed, d1 : compressed)")
        >>> t.format, t.levels
        ('level', '(d0, d1) -> (d0 : compressed, d1 : compressed)')
        """
        return self._t.levels

    def to_level(self, levels, index_type="int64", indptr_type=None):
        """A level tensor (MLIR's sparse storage: dense, compressed and singleton
        levels with ``nonunique`` / ``nonordered`` / ``soa``, over any order of the
        dimensions) with the same entries: duplicates summed, dense levels filled
        with zeros. ``levels`` is MLIR's map syntax, e.g. DCSR
        ``"(d0, d1) -> (d0 : compressed, d1 : compressed)"`` or batched CSR
        ``"(d0, d1, d2) -> (d0 : dense, d1 : dense, d2 : compressed)"``;
        ``indptr_type`` (the positions' type) defaults to ``index_type`` (the
        coordinates'). ``convert("level")`` gives the level tensor a tensor is
        without choosing (COO, CSR, CSC, CSF and dense share their buffers).

        >>> import arrow_sparse, numpy as np
        >>> a = np.array([[0, 1.5, 0], [0, 0, 0], [2.5, 0, 0]])
        >>> t = arrow_sparse.Tensor.from_numpy(a).to_level("(d0, d1) -> (d1 : compressed, d0 : compressed)", "int32")
        >>> {k: v.tolist() for k, v in t.buffers().items()}
        {'positions_0': [0, 2], 'positions_1': [0, 1, 2], 'coordinates_0': [0, 1], 'coordinates_1': [2, 0], 'values': [2.5, 1.5]}
        >>> t.mlir_encoding
        '#sparse_tensor.encoding<{ map = (d0, d1) -> (d1 : compressed, d0 : compressed), posWidth = 32, crdWidth = 32 }>'
        >>> bool((t.to_numpy() == a).all())
        True
        """
        return Tensor(self._t.to_level(levels, index_type, indptr_type))

    @property
    def mlir_encoding(self):
        """The MLIR ``#sparse_tensor.encoding`` attribute of the tensor's storage
        levels (level properties computed from the stored coordinates).

        >>> import arrow_sparse, numpy as np, scipy.sparse as sp
        >>> t = arrow_sparse.Tensor.from_scipy(sp.csr_array(np.eye(3)))
        >>> t.mlir_encoding
        '#sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 32, crdWidth = 32 }>'
        """
        return self._t.mlir_encoding

    def take(self, indices, axis=0):
        """``numpy.take(a, indices, axis)`` as a view: a DM tensor over this
        tensor's buffers, which are shared, not copied (only the index array is
        kept). Indices may repeat and come in any order; negative indices and
        axis count from the end. ``to_numpy()`` / ``convert`` gather.

        >>> import arrow_sparse, numpy as np
        >>> a = np.arange(12.0).reshape(3, 4)
        >>> t = arrow_sparse.Tensor.from_numpy(a).convert("csr")
        >>> v = t.take([3, -1, 0], axis=1)
        >>> v.format, v.shape, v.storage_format
        ('dm', (3, 3), 'csr')
        >>> bool((v.to_numpy() == np.take(a, [3, -1, 0], axis=1)).all())
        True
        """
        return Tensor(self._t.take([int(i) for i in indices], int(axis)))

    def to_numpy(self):
        """The dense numpy array. A dense tensor gives a read-only view of its
        buffer with its strides and offset (no copy, negative strides
        included); a sparse one is expanded (duplicates summed).

        >>> import arrow_sparse, numpy as np
        >>> a = np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3))
        >>> v = arrow_sparse.Tensor.from_numpy(a).to_numpy()
        >>> np.shares_memory(v, a), v.tolist()
        (True, [[0, 1, 2], [3, 4, 5]])
        """
        t = self if self._t.format == "dense" else self.convert("dense")
        values = t.buffers()["values"]
        item = values.dtype.itemsize
        if values.size == 0:
            return _np.zeros(t.shape, dtype=values.dtype)
        return _np.lib.stride_tricks.as_strided(
            values[t._t.offset:],
            shape=t.shape,
            strides=tuple(s * item for s in t._t.strides),
            writeable=False,
        )

    def to_scipy(self):
        """A ``scipy.sparse`` array: ``csr_array`` / ``csc_array`` for CSR / CSC
        (reusing the buffers when the indices are int32 or int64 and the values
        are not float16: no copy), else ``coo_array`` (N-D for N-D tensors; COO
        coordinates are copied into scipy's per-dimension arrays; CSF, GCS, DM and
        dense tensors are converted first). Indices of other types are widened
        to int32 / int64, float16 values to float32 (copies).

        >>> import arrow_sparse, numpy as np
        >>> t = arrow_sparse.Tensor.from_numpy(np.array([[0, 2.0], [3.0, 0]])).convert("csr")
        >>> m = t.to_scipy()
        >>> type(m).__name__, np.shares_memory(m.data, t.buffers()["values"])
        ('csr_array', True)
        """
        import scipy.sparse as sp

        fmt = self._t.format
        if fmt in ("csr", "csc"):
            b = self.buffers()
            indptr, indices = _scipy_index(b["indptr"]), _scipy_index(b["indices"])
            if indptr.dtype != indices.dtype:
                wide = _np.promote_types(indptr.dtype, indices.dtype)
                indptr, indices = indptr.astype(wide), indices.astype(wide)
            cls = sp.csr_array if fmt == "csr" else sp.csc_array
            return cls((_scipy_values(b["values"]), indices, indptr), shape=self.shape)
        if fmt == "dense":
            return sp.coo_array(self.to_numpy())
        t = self if fmt == "coo" else self.convert("coo", "int64")
        b = t.buffers()
        coords = _scipy_index(b["coords"])
        return sp.coo_array(
            (_scipy_values(b["values"]), tuple(coords[:, d] for d in range(t.ndim))),
            shape=t.shape,
        )

    def to_pyarrow(self):
        """A pyarrow object: ``SparseCOOTensor``, ``SparseCSRMatrix``,
        ``SparseCSCMatrix``, ``SparseCSFTensor`` or (dense) ``Tensor``. Values are
        shared with this tensor; pyarrow holds int64 indices only, so other index
        types are widened (a copy). GCS and DM tensors become a COO tensor.

        >>> import arrow_sparse, numpy as np
        >>> t = arrow_sparse.Tensor.from_numpy(np.array([[0, 2.0], [3.0, 0]])).convert("csr")
        >>> p = t.to_pyarrow()
        >>> type(p).__name__, p.non_zero_length, np.shares_memory(p.to_numpy()[0], t.buffers()["values"])
        ('SparseCSRMatrix', 2, True)
        """
        import pyarrow as pa

        from . import ext

        fmt = self._t.format
        if fmt == "dense":
            return pa.Tensor.from_numpy(self.to_numpy(), dim_names=self.dim_names)
        t = self.convert("coo") if fmt in ("gcs", "dm") else self
        b = t.buffers()
        row = {"shape": t.shape, "dim_names": t.dim_names, "values": b["values"]}
        if t.format == "coo":
            row["coords"] = _np.ascontiguousarray(b["coords"])
        elif t.format == "csf":
            row["indptr"] = [b[f"indptr_{k}"] for k in range(t.ndim - 1)]
            row["indices"] = [b[f"indices_{k}"] for k in range(t.ndim)]
            row["axis_order"] = t.axis_order
        else:
            row["indptr"], row["indices"] = b["indptr"], b["indices"]
        return ext.row_to_pyarrow(t.format, row)

    def to_sparse(self):
        """A pydata/sparse array: ``GCXS`` for CSR, CSC and GCS tensors whose map
        GCXS can express (row-compressed, the column dimensions in increasing
        order; buffers shared), else ``COO`` (coordinates copied into sparse's
        ``(ndim, nnz)`` int64 layout when stored otherwise).

        >>> import arrow_sparse, numpy as np
        >>> t = arrow_sparse.Tensor.from_numpy(np.arange(24.0).reshape(2, 3, 4)).to_gcs([1, 0, 2], [1])
        >>> s = t.to_sparse()
        >>> type(s).__name__, s.compressed_axes, np.array_equal(s.todense(), t.to_numpy())
        ('GCXS', (1,), True)
        """
        import sparse

        fmt = self._t.format
        b = self.buffers() if fmt in ("csr", "csc", "gcs") else None
        if fmt in ("csr", "csc"):
            axes = (0,) if fmt == "csr" else (1,)
            return sparse.GCXS((b["values"], b["indices"], b["indptr"]), shape=self.shape, compressed_axes=axes)
        if fmt == "gcs":
            dims, (p,) = self.dimensions, self.partitioning
            rest = dims[p:]
            if self._t.compressed_axis == "row" and 0 < p < self.ndim and rest == sorted(rest):
                return sparse.GCXS(
                    (b["values"], b["indices"], b["indptr"]), shape=self.shape, compressed_axes=tuple(dims[:p])
                )
        t = self if fmt == "coo" else self.convert("coo", "int64")
        c = t.buffers()
        return sparse.COO(c["coords"].T, c["values"], shape=t.shape, has_duplicates=not t._t.is_canonical,
                          sorted=bool(t._t.is_canonical))

    # ------------------------------------------------------------ constructors
    @staticmethod
    def from_sparse(array, *, validate=True):
        """A tensor over a pydata/sparse ``COO`` (coordinates kept in sparse's
        dimension-by-dimension layout, no copy) or ``GCXS`` (a GCS tensor with the
        same map, buffers shared) array.

        >>> import arrow_sparse, numpy as np, sparse
        >>> s = sparse.COO.from_numpy(np.array([[0, 1.5], [2.5, 0]]))
        >>> t = arrow_sparse.Tensor.from_sparse(s)
        >>> t.format, t.nnz, t.to_numpy().tolist()
        ('coo', 2, [[0.0, 1.5], [2.5, 0.0]])
        """
        import sparse

        shape = list(array.shape)
        if isinstance(array, sparse.COO):
            arrays = {"values": _flat(array.data), "coords": _flat(array.coords)}
            # sparse.COO does not say whether it is sorted without duplicates:
            # the tensor does not claim to be canonical
            return Tensor(_native.Tensor._from_arrays(
                "coo", shape, arrays, column_major_coords=True, validate=validate
            ))
        if isinstance(array, sparse.GCXS):
            c = list(array.compressed_axes)
            dims = c + [d for d in range(len(shape)) if d not in c]
            arrays = {"values": _flat(array.data), "indices": _flat(array.indices), "indptr": _flat(array.indptr)}
            if len(shape) == 2 and dims == [0, 1]:
                fmt, extra = "csr", {}
            elif len(shape) == 2:
                fmt, extra = "csc", {}
            else:
                fmt, extra = "gcs", {"dimensions": dims, "partitioning": [len(c)]}
            return Tensor(_native.Tensor._from_arrays(fmt, shape, arrays, validate=validate, **extra))
        raise TypeError(f"expected a sparse.COO or sparse.GCXS array, got {type(array).__name__}")

    @staticmethod
    def from_pyarrow(obj, *, axis_order=None, validate=True):
        """A tensor over a pyarrow ``SparseCOOTensor`` / ``SparseCSRMatrix`` /
        ``SparseCSCMatrix`` / ``SparseCSFTensor`` / ``Tensor`` (dense) without
        copying its buffers (pyarrow's ``to_numpy`` views; indices stay int64).
        pyarrow does not report a CSF axis order: pass ``axis_order`` when it is
        not ``0..ndim``.

        >>> import arrow_sparse, numpy as np, pyarrow as pa
        >>> p = pa.SparseCOOTensor.from_dense_numpy(np.array([[0, 1.5], [2.5, 0]]))
        >>> t = arrow_sparse.Tensor.from_pyarrow(p)
        >>> t.format, t.index_type, t.to_numpy().tolist()
        ('coo', 'int64', [[0.0, 1.5], [2.5, 0.0]])
        """
        import pyarrow as pa

        kinds = (pa.Tensor, pa.SparseCOOTensor, pa.SparseCSRMatrix, pa.SparseCSCMatrix, pa.SparseCSFTensor)
        if not isinstance(obj, kinds):
            raise TypeError(f"expected a pyarrow sparse tensor or Tensor, got {type(obj).__name__}")
        names = [obj.dim_name(d) for d in range(obj.ndim)] if obj.dim_names else None
        shape = list(obj.shape)
        if isinstance(obj, pa.Tensor):
            return Tensor.from_numpy(obj.to_numpy(), dim_names=names)
        if isinstance(obj, pa.SparseCOOTensor):
            data, coords = obj.to_numpy()
            arrays = {"values": _flat(data), "coords": _flat(coords)}
            native = _native.Tensor._from_arrays(
                "coo", shape, arrays, dim_names=names, canonical=bool(obj.has_canonical_format), validate=validate
            )
        elif isinstance(obj, pa.SparseCSFTensor):
            data, indptr, indices = obj.to_numpy()
            arrays = {"values": _flat(data)}
            arrays.update({f"indptr_{k}": _flat(p) for k, p in enumerate(indptr)})
            arrays.update({f"indices_{k}": _flat(x) for k, x in enumerate(indices)})
            native = _native.Tensor._from_arrays(
                "csf",
                shape,
                arrays,
                dim_names=names,
                axis_order=None if axis_order is None else list(axis_order),
                validate=validate,
            )
        elif isinstance(obj, (pa.SparseCSRMatrix, pa.SparseCSCMatrix)):
            data, indptr, indices = obj.to_numpy()
            fmt = "csr" if isinstance(obj, pa.SparseCSRMatrix) else "csc"
            arrays = {"values": _flat(data), "indptr": _flat(indptr), "indices": _flat(indices)}
            native = _native.Tensor._from_arrays(fmt, shape, arrays, dim_names=names, validate=validate)
        return Tensor(native)

    @staticmethod
    def from_numpy(array, *, dim_names=None):
        """A dense tensor over a numpy array, in place (no copy) for every
        strided layout whose strides are multiples of the item size: C or
        Fortran order, slices with steps of either sign, reversed or permuted
        axes, broadcasts. The tensor's values buffer is the memory from the
        lowest to the highest element, with the array's element strides and
        offset. Other arrays (odd byte strides, empty arrays) are copied to C
        order first.

        >>> import arrow_sparse, numpy as np
        >>> t = arrow_sparse.Tensor.from_numpy(np.zeros((2, 3), dtype=np.float32), dim_names=["r", "c"])
        >>> t.format, t.shape, t.dim_names, t.nnz
        ('dense', (2, 3), ['r', 'c'], 0)
        >>> a = np.arange(12.0).reshape(3, 4)
        >>> v = arrow_sparse.Tensor.from_numpy(a[::2, ::-1])
        >>> v.strides, v.offset, np.shares_memory(v.buffers()["values"], a), v.to_numpy().tolist()
        ([8, -1], 3, True, [[3.0, 2.0, 1.0, 0.0], [11.0, 10.0, 9.0, 8.0]])
        """
        a = _np.asarray(array)
        item = a.itemsize
        strides, offset = None, 0
        if a.flags.c_contiguous:
            flat = a.reshape(-1)
        elif a.size > 0 and item > 0 and all(s % item == 0 for s in a.strides):
            strides = [s // item for s in a.strides]
            lo = hi = 0  # the lowest and the highest element offset from a[0, ..., 0]
            for n, s in zip(a.shape, strides):
                if s < 0:
                    lo += (n - 1) * s
                else:
                    hi += (n - 1) * s
            # the lowest-addressed element heads the array with the negative axes
            # flipped; the memory from it to the highest element, as one 1-D view
            low = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides)]
            flat = _np.lib.stride_tricks.as_strided(low, shape=(hi - lo + 1,), strides=(item,))
            offset = -lo
        else:
            flat = _np.ascontiguousarray(a).reshape(-1)
        return Tensor(
            _native.Tensor._from_arrays(
                "dense", list(a.shape), {"values": flat}, dim_names=dim_names, strides=strides,
                offset=offset,
            )
        )

    @staticmethod
    def from_scipy(matrix, *, dim_names=None, validate=True):
        """A tensor over a ``scipy.sparse`` array or matrix: CSR and CSC reuse
        ``indptr``, ``indices`` and ``data`` as they are (no copy, index dtypes
        kept); COO stacks scipy's per-dimension coordinate arrays into one
        ``(nnz, ndim)`` buffer (one copy of the coordinates); other formats go
        through ``tocsr()``.

        >>> import arrow_sparse, scipy.sparse as sp
        >>> m = sp.random_array((4, 5), density=0.5, format="csc", random_state=1)
        >>> t = arrow_sparse.Tensor.from_scipy(m)
        >>> t.format, t.shape, t.nnz == m.nnz
        ('csc', (4, 5), True)
        """
        import scipy.sparse as sp

        if not sp.issparse(matrix):
            raise TypeError(f"expected a scipy.sparse array or matrix, got {type(matrix).__name__}")
        m = matrix
        if m.format not in ("csr", "csc", "coo"):
            m = m.tocsr()
        if m.format in ("csr", "csc"):
            arrays = {
                "indptr": _np.ascontiguousarray(m.indptr),
                "indices": _np.ascontiguousarray(m.indices),
                "values": _np.ascontiguousarray(m.data),
            }
            native = _native.Tensor._from_arrays(
                m.format, list(m.shape), arrays, dim_names=dim_names, validate=validate
            )
        else:
            coords = _np.stack([_np.asarray(c) for c in m.coords], axis=1) if m.nnz else _np.zeros(
                (0, len(m.shape)), dtype=m.coords[0].dtype
            )
            arrays = {"coords": coords.reshape(-1), "values": _np.ascontiguousarray(m.data)}
            native = _native.Tensor._from_arrays(
                "coo",
                list(m.shape),
                arrays,
                dim_names=dim_names,
                canonical=bool(m.has_canonical_format),
                validate=validate,
            )
        return Tensor(native)

    # ------------------------------------------------------------ operators
    # numpy hands ``ndarray + Tensor`` (and the other operators) to the
    # Tensor's reflected method instead of looping over the Tensor as an
    # object scalar
    __array_ufunc__ = None

    def __matmul__(self, other):
        """``A @ x``: :func:`spmv` for a 1-D numpy array (or list) ``x``,
        :func:`spmm` for a 2-D one, with their rules (``x`` of the tensor's
        dtype, never cast). Sparse @ sparse is not supported (``TypeError``);
        ``x @ A`` is ``A.T @ x``.

        >>> import arrow_sparse, numpy as np, scipy.sparse as sp
        >>> a = arrow_sparse.Tensor.from_scipy(sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]])))
        >>> a @ np.ones(3)
        array([3., 3.])
        >>> (a @ np.eye(3)).tolist()
        [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]
        """
        return _product(self, other, transposed=False)

    def __rmatmul__(self, other):
        """``x @ A``: ``A.T @ x``, :func:`spmv` or :func:`spmm` on
        :func:`transpose` (which shares a CSR / CSC matrix's buffers).

        >>> import arrow_sparse, numpy as np, scipy.sparse as sp
        >>> a = arrow_sparse.Tensor.from_scipy(sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]])))
        >>> np.array([1.0, 10.0]) @ a
        array([ 1., 30.,  2.])
        >>> (np.eye(2) @ a).tolist()
        [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]
        """
        return _product(self, other, transposed=True)

    @property
    def T(self):  # noqa: N802  (numpy's name)
        """The transpose, as :func:`transpose` (buffers shared where the format
        allows it).

        >>> import arrow_sparse, numpy as np
        >>> t = arrow_sparse.Tensor.from_numpy(np.arange(6.0).reshape(2, 3)).convert("csr")
        >>> t.T.format, t.T.shape
        ('csc', (3, 2))
        """
        return transpose(self)

    def __add__(self, other):
        """``a + b``: :func:`add`, in the format of the left operand (``b`` a
        :class:`Tensor`, numpy array or anything else :func:`write` takes).

        >>> import arrow_sparse, numpy as np
        >>> a = arrow_sparse.Tensor.from_numpy(np.array([[1, 0], [0, 2]])).convert("csr")
        >>> s = a + np.array([[0, 5], [0, 1]])
        >>> s.format, s.to_numpy().tolist()
        ('csr', [[1, 5], [0, 3]])
        >>> (np.ones((2, 2), dtype=a.dtype) + a).format  # the left operand's
        'dense'
        >>> (a - a).nnz, (-a).to_numpy().tolist()
        (0, [[-1, 0], [0, -2]])
        """
        return _operator(self, other, "add")

    def __radd__(self, other):
        return _operator(self, other, "add", reflected=True)

    def __sub__(self, other):
        """``a - b``: :func:`subtract`, as ``+``."""
        return _operator(self, other, "subtract")

    def __rsub__(self, other):
        return _operator(self, other, "subtract", reflected=True)

    def __mul__(self, other):
        """``a * b``: :func:`scale` for a scalar ``b``, else :func:`multiply`
        (entry by entry, as scipy's sparse arrays; ``@`` is the product).

        >>> import arrow_sparse, numpy as np
        >>> a = arrow_sparse.Tensor.from_numpy(np.array([[1.0, 0], [0, 2.0]])).convert("coo")
        >>> (a * 3).to_numpy().tolist(), (3 * a).format
        ([[3.0, 0.0], [0.0, 6.0]], 'coo')
        >>> (a * np.array([[5.0, 5.0], [0, 1.0]])).to_numpy().tolist()
        [[5.0, 0.0], [0.0, 2.0]]
        """
        if _is_scalar(other):
            return scale(self, other)
        return _operator(self, other, "multiply")

    def __rmul__(self, other):
        if _is_scalar(other):
            return scale(self, other)
        return _operator(self, other, "multiply", reflected=True)

    def __neg__(self):
        """``-a``: :func:`scale` by -1 (unsigned value types raise ``OverflowError``)."""
        return scale(self, -1)

    # ------------------------------------------------------------ misc
    def __eq__(self, other):
        return isinstance(other, Tensor) and self._t == other._t

    __hash__ = None

    def __repr__(self):
        return repr(self._t)


def _is_scalar(x):
    """A Python or numpy number (what :func:`scale` takes), not a string."""
    return _np.isscalar(x) and not isinstance(x, (str, bytes))


def _operator(t, other, op, reflected=False):
    """``t op other`` (``other op t`` when ``reflected``), entry by entry, for
    the operators; NotImplemented when :func:`write` does not take ``other``."""
    o = _as_tensor(other, strict=False)
    if o is None:
        return NotImplemented
    return _binary(o, t, op) if reflected else _binary(t, o, op)


def _product(t, other, transposed):
    """``t @ other`` for :class:`Tensor` ``t`` and a 1-D or 2-D array (or
    list), or ``other @ t`` when ``transposed`` (``t.T @ other.T``,
    transposed back); NotImplemented for other operands."""
    if not isinstance(other, (_np.ndarray, list, tuple)):
        return NotImplemented
    x = _np.asarray(other)
    if x.ndim not in (1, 2):
        raise ValueError(f"a product with a sparse tensor takes a 1-D or 2-D array, found {x.ndim} dimensions")
    if transposed:
        t, x = transpose(t), x.T
    if x.ndim == 1:
        return spmv(t, x)
    c = spmm(t, x)
    return c.T if transposed else c


def _flat(a):
    """A C-contiguous 1-D view (a copy only for other layouts)."""
    return _np.ascontiguousarray(a).reshape(-1)


def _coo_column_major(native, name):
    if name == "coords":
        return bool(native.column_major_coords)
    # DM storage: ask the storage (only COO storages have coords)
    return False


def _scipy_index(a):
    return a if a.dtype in _SCIPY_INDEX else a.astype(_np.int64 if a.dtype.itemsize >= 4 else _np.int32)


def _scipy_values(a):
    return a.astype(_np.float32) if a.dtype == _np.float16 else a


class Reader:
    """A memory-mapped stream: ``len``, indexing (negative from the end, slices)
    and iteration decode and validate one message at a time; nothing is decoded
    when the stream is opened.

    >>> import arrow_sparse, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "two.arrow")
    >>> arrow_sparse.write(path, [np.eye(2), np.ones(3)])
    >>> r = arrow_sparse.open(path)
    >>> len(r), r[-1].shape, [t.format for t in r]
    (2, (3,), ['dense', 'dense'])
    """

    __slots__ = ("_r", "path")

    def __init__(self, path, *, validate=True):
        self._r = _native.Reader(path, validate=validate)
        self.path = path

    def __len__(self):
        return len(self._r)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [Tensor(self._r.get(k)) for k in range(*i.indices(len(self)))]
        return Tensor(self._r.get(int(i)))

    def __iter__(self):
        for k in range(len(self)):
            yield Tensor(self._r.get(k))

    def __repr__(self):
        return f"Reader({str(self.path)!r}, {len(self)} tensors)"


def open(path, *, validate=True):  # noqa: A001  (the module's verb, like io.open)
    """Open a SparseTensor / Tensor IPC stream lazily (memory-mapped). See
    :class:`Reader`."""
    return Reader(path, validate=validate)


def read(path, *, validate=True):
    """Read every tensor of ``path``, by extension: ``.parquet`` (archive of one
    tensor, or a table with a sparse tensor column), ``.mtx``, ``.tns``, ``.npz``,
    a dataset directory (see :func:`read_dataset`),
    and anything else as an Arrow IPC stream of SparseTensor / Tensor messages
    (memory-mapped, zero-copy) or an Arrow IPC file / stream of record batches with
    a sparse tensor column. ``validate=False`` skips the O(nnz) checks (for files
    you trust). Returns a list of :class:`Tensor`.

    ``path`` may also be an object store URL, as a ``str``: ``s3://bucket/key``
    or ``file:///path``. A URL whose name ends in ``.parquet`` is read as an
    archive, any other as a dataset (see :func:`read_dataset`). S3 credentials,
    region and endpoint come from the ``AWS_*`` environment variables (a local
    server such as MinIO needs ``AWS_ENDPOINT_URL`` and ``AWS_ALLOW_HTTP=true``);
    a failed request or a missing object is an :class:`ObjectStoreError` (an
    ``OSError``).

    >>> import arrow_sparse, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "m.mtx"
    >>> _ = path.write_text("%%MatrixMarket matrix coordinate real general\\n2 3 1\\n2 3 -1.5\\n")
    >>> [t] = arrow_sparse.read(path)
    >>> t.format, t.shape, t.metadata["arrow_sparse.mtx.field"], t.to_numpy()[1, 2]
    ('coo', (2, 3), 'real', np.float64(-1.5))
    """
    return [Tensor(t) for t in _native.read(path, validate=validate)]


def _as_tensor(obj, *, strict=True):
    """``obj`` as a :class:`Tensor`; a TypeError for a type :func:`write` does
    not take, or ``None`` when not ``strict`` (the operators then return
    NotImplemented; a type they take but cannot convert still raises)."""
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, _np.ndarray):
        return Tensor.from_numpy(obj)
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover
        sp = None
    if sp is not None and sp.issparse(obj):
        return Tensor.from_scipy(obj)
    if type(obj).__module__.startswith("pyarrow"):
        return Tensor.from_pyarrow(obj)
    if type(obj).__module__.startswith("sparse"):
        return Tensor.from_sparse(obj)
    if not strict:
        return None
    raise TypeError(
        f"cannot write a {type(obj).__module__}.{type(obj).__name__}: pass arrow_sparse.Tensor, "
        "scipy.sparse arrays / matrices or numpy arrays"
    )


def _reshape(t, to, index_type, axis_order, dimensions, partitioning, compressed_axis, storage):
    """``t`` converted as :func:`write`'s options say (the CLI's ``--to`` rules)."""
    if to is None:
        given = [n for n, v in (("dimensions", dimensions), ("partitioning", partitioning),
                                ("compressed_axis", compressed_axis), ("storage", storage)) if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} need to= (the format to convert to)")
        if index_type is None and axis_order is None:
            return t
        to = t.format
    if axis_order is not None and to != "csf":
        raise ValueError("axis_order applies to to='csf' only")
    if (dimensions is not None or partitioning is not None) and to not in ("gcs", "dm"):
        raise ValueError("dimensions and partitioning apply to to='gcs' or to='dm' only")
    if compressed_axis is not None and to != "gcs":
        raise ValueError("compressed_axis applies to to='gcs' only")
    if storage is not None and to != "dm":
        raise ValueError("storage applies to to='dm' only")
    it = index_type or t.index_type or "int64"
    n = t.ndim
    if to == "gcs":
        axis = compressed_axis or "row"
        if dimensions is None or partitioning is None:
            best_dims, best_parts = _native.Tensor._best_mapping(list(t.shape), t.nnz, axis)
            if dimensions is None and partitioning is None:
                dimensions = best_dims
            elif dimensions is None:
                dimensions = list(range(n))
            if partitioning is None:
                partitioning = best_parts
        return t.to_gcs(list(dimensions), list(partitioning), axis, it)
    if to == "dm":
        dims = list(range(n)) if dimensions is None else list(dimensions)
        parts = list(range(1, n)) if partitioning is None else list(partitioning)
        return t.to_dm(dims, parts, storage or "coo", it)
    return t.convert(to, it, None if axis_order is None else list(axis_order))


def write(path, tensors, *, to=None, index_type=None, axis_order=None, dimensions=None, partitioning=None,
          compressed_axis=None, storage=None, row_group_size=None, compression=None, sync=True,
          as_column=False, npz_flavor=None, binsparse_format=None, mtx_symmetry=None):
    """Write tensors to ``path`` atomically (a temporary file renamed into place),
    the kind chosen by extension as in :func:`read` (``.arrow``, ``.arrows`` or
    ``.ipc`` streams, ``.parquet``, ``.mtx``, ``.tns``, ``.npz``; another extension
    is a ValueError): an Arrow IPC stream holds any number of tensors, the other
    kinds one. ``path`` may also be an object store URL of a Parquet archive (a
    ``str``, ``s3://bucket/key.parquet`` or ``file:///path.parquet``; settings
    as in :func:`read`): the archive is written to a local temporary file, then
    uploaded whole, so readers see the old object or the new one.

    ``tensors`` is one object or a list of :class:`Tensor`, ``scipy.sparse``
    arrays / matrices (CSR, CSC, COO), pydata/sparse ``COO`` / ``GCXS``, pyarrow
    sparse tensors / ``pyarrow.Tensor`` or numpy arrays (dense); their buffers are
    encoded in place, not copied first (except scipy COO coordinates, see
    :meth:`Tensor.from_scipy`), and checked once (as :meth:`Tensor.from_scipy`
    with ``validate=True``).

    Options as the CLI's ``convert``:

    * ``to``: the format to convert every tensor to (``"coo"``, ``"csr"``,
      ``"csc"``, ``"csf"``, ``"dense"``, ``"gcs"``, ``"dm"``); without it tensors
      are written as they are;
    * ``index_type`` (default: the tensor's, else int64), ``axis_order`` (CSF);
    * ``dimensions`` and ``partitioning``: the map of a GCS / DM tensor (GCS
      default: the mapping with the fewest bytes; DM default: the identity, one
      reduced axis per dimension); giving one of the two keeps the other's default
      (identity dimensions; the default map's partitioning);
    * ``compressed_axis`` (GCS): ``"row"`` (default) or ``"column"``;
    * ``storage`` (DM): the storage format of the reduced tensor (default coo);
    * ``.parquet`` only: ``row_group_size`` and ``compression`` (``"zstd"``,
      ``"zstd:LEVEL"``, ``"none"``);
    * ``.npz`` only: ``npz_flavor``, ``"scipy"`` (``scipy.sparse.load_npz``:
      CSR, CSC, COO), ``"pydata"`` (``sparse.load_npz``: COO, GCXS) or
      ``"binsparse"`` (a Binsparse 0.1 archive, as the PyPI ``binsparse``
      package reads it); default: the flavor the tensor was read with, else by
      format; ``binsparse_format`` (implies ``"binsparse"``): the Binsparse
      format written, ``"CSR"``, ``"CSC"``, ``"COO"``, ``"COOR"``, ``"COOC"``,
      ``"DCSR"``, ``"DCSC"``, ``"CVEC"``, ``"DVEC"``, ``"DMAT"``, ``"DMATR"`` or
      ``"DMATC"`` (default: the tensor's own format, or the one it was read
      with);
    * ``.mtx`` only: ``mtx_symmetry``, ``"general"`` (default), ``"symmetric"`` or
      ``"skew-symmetric"`` (one triangle stored; the matrix must have the
      symmetry);
    * ``as_column=True``: instead of SparseTensor messages / an archive, one
      record batch with an ``id`` column and a sparse tensor column ``tensor``
      (extension type ``arrow_sparse.<format>``, readable by pyarrow with
      :mod:`arrow_sparse.ext`): an Arrow IPC *file* for ``.arrow``, a Parquet
      table for ``.parquet``; the tensors must share format, value and index
      types and ndim.

    Durability. Every write is atomic: readers see the old file or the complete
    new one, never a partial file, whatever happens to this process. ``sync``
    (``.arrow`` streams; the other kinds always sync) chooses what survives an
    operating-system crash or power loss:

    * ``sync=True`` (the default): the file is fsynced before the rename and its
      directory after it, so when ``write`` returns the new file is on storage
      and survives a crash or power loss;
    * ``sync=False``: no fsync; the file sits in the OS page cache and reaches
      storage when the kernel writes it back (typically within 30 s): a crash or
      power loss before that may leave the old, an empty or a partial file. This
      is what ``numpy.save`` and ``scipy.sparse.save_npz`` give, and it is faster
      (python/benches/bench_scipy.py measures both against ``save_npz`` with and
      without an fsync).

    >>> import arrow_sparse, numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.parquet")
    >>> arrow_sparse.write(path, np.array([[0, 1], [2, 0]]), to="coo", index_type="int32")
    >>> [t] = arrow_sparse.read(path)
    >>> t.format, t.index_type, t.to_numpy().tolist()
    ('coo', 'int32', [[0, 1], [2, 0]])
    >>> g = os.path.join(tempfile.mkdtemp(), "g.arrow")
    >>> arrow_sparse.write(g, np.arange(24.0).reshape(2, 3, 4), to="gcs", dimensions=[2, 0, 1],
    ...                    partitioning=[1], compressed_axis="column")
    >>> [t] = arrow_sparse.read(g)
    >>> t.format, t.dimensions, t.partitioning, t.reduced_shape
    ('gcs', [2, 0, 1], [1], (4, 6))
    """
    if not isinstance(tensors, (list, tuple)):
        tensors = [tensors]
    out = []
    for obj in tensors:
        t = _reshape(_as_tensor(obj), to, index_type, axis_order, dimensions, partitioning, compressed_axis, storage)
        out.append(t._t)
    _native.write(path, out, row_group_size=row_group_size, compression=compression, sync=sync,
                  as_column=bool(as_column), npz_flavor=npz_flavor, binsparse_format=binsparse_format,
                  mtx_symmetry=mtx_symmetry)


def write_dataset(path, tensor, *, partition_by=0, rows_per_file=65536, to=None, index_type=None,
                  row_group_size=None, compression=None):
    """Write one tensor as a dataset: a directory of Parquet archives, one per
    block of ``rows_per_file`` coordinates along dimension ``partition_by``, in
    Hive-style folders (``dim_0_block=K/part-0.parquet``) with a JSON manifest
    (``format/SPEC.md`` 9.7). pyarrow, DuckDB, DataFusion and Spark read the
    directory as one table of the entries (columns ``dim_0``, ``dim_1``, ...,
    ``value``); :func:`read_dataset` and :func:`read` restore the exact tensor.
    ``tensor`` is anything :func:`write` takes; ``to`` (``"coo"``, ``"csr"``,
    ``"csc"`` or ``"csf"``) and ``index_type`` convert it first. CSR is
    partitioned by rows only, CSC by columns, CSF along its first level. The
    directory is written beside ``path`` and moved into place (an earlier dataset
    there is replaced). Returns ``(rows, parts, bytes)``.

    ``path`` may be an object store URL (a ``str``, ``s3://bucket/prefix`` or
    ``file:///path``; credentials as in :func:`read`): the parts are uploaded
    as each one is complete and the manifest last, so readers see the old
    dataset or the new one, never a mix (``format/SPEC.md`` 9.8).

    >>> import arrow_sparse, tempfile, pathlib, numpy as np, scipy.sparse as sp
    >>> a = sp.random(1000, 50, density=0.01, format="csr", random_state=0)
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "ds"
    >>> arrow_sparse.write_dataset(d, a, rows_per_file=300)[:2]
    (500, 4)
    >>> sorted(p.name for p in d.iterdir())[:2]
    ['_arrow_sparse_dataset.json', 'dim_0_block=0']
    >>> t = arrow_sparse.read_dataset(d)
    >>> t.format, np.array_equal(t.to_scipy().toarray(), a.toarray())
    ('csr', True)
    """
    t = _reshape(_as_tensor(tensor), to, index_type, None, None, None, None, None)
    return _native.write_dataset(path, t._t, partition_by=partition_by, rows_per_file=rows_per_file,
                                 row_group_size=row_group_size, compression=compression)


def read_dataset(path, *, dim=None, start=None, stop=None, validate=True):
    """Read the dataset in directory ``path`` (see :func:`write_dataset`): the
    whole tensor, or with ``dim`` the entries whose coordinate along ``dim`` lies
    in ``start:stop``, as a tensor of that extent along ``dim`` (coordinates
    shifted down by ``start``). Along the partition dimension only the parts that
    can hold the range are opened, and in each part the row groups are skipped by
    their statistics.

    ``path`` may be an object store URL (a ``str``, ``s3://bucket/prefix`` or
    ``file:///path``; credentials as in :func:`read`). The reads are ranged:
    the manifest, then each opened part's footer and only the column chunks of
    the row groups it decodes.

    >>> import arrow_sparse, tempfile, pathlib, numpy as np
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "ds"
    >>> _ = arrow_sparse.write_dataset(f"file://{d}", np.array([[0.0, 1.0], [2.0, 0.0]]), to="csr")
    >>> arrow_sparse.read_dataset(f"file://{d}").to_numpy().tolist()
    [[0.0, 1.0], [2.0, 0.0]]

    >>> import arrow_sparse, tempfile, pathlib, numpy as np
    >>> x = np.zeros((6, 4)); x[1, 2] = 1.5; x[4, 0] = -2.0
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "ds"
    >>> _ = arrow_sparse.write_dataset(d, x, rows_per_file=2, to="coo")
    >>> part = arrow_sparse.read_dataset(d, dim=0, start=4, stop=6)
    >>> part.shape, part.to_numpy()[0, 0]
    ((2, 4), np.float64(-2.0))
    """
    t, _parts = _native.read_dataset(path, dim=dim, start=start, stop=stop, validate=validate)
    return Tensor(t)


def read_range(path, dim, start=None, stop=None, *, validate=True):
    """The entries of the Parquet archive or dataset at ``path`` whose
    coordinate along ``dim`` lies in ``start:stop`` (``None``: from the first /
    to the last; clamped to the extent), as a tensor of the same format and
    types with that extent along ``dim`` (coordinates shifted down by
    ``start``). Row groups whose statistics show no coordinate in the range
    are not decoded, and in a dataset only the parts that can hold the range
    are opened, so a range of a large archive costs what the range holds.

    ``path``: a ``.parquet`` archive, a dataset directory (see
    :func:`write_dataset`), or an object store URL of either (see :func:`read`;
    on a store the reads are ranged requests). A DM archive has no range
    reads (read it whole; its slices copy nothing).

    >>> import arrow_sparse, tempfile, pathlib, numpy as np, scipy.sparse as sp
    >>> a = sp.random(1000, 20, density=0.05, format="csr", random_state=0)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.parquet"
    >>> arrow_sparse.write(path, a, row_group_size=100)
    >>> t = arrow_sparse.read_range(path, 0, 200, 250)
    >>> t.format, t.shape, np.array_equal(t.to_numpy(), a[200:250].toarray())
    ('csr', (50, 20), True)
    """
    t, _parts, _groups, _total = _native.read_range(path, dim, start=start, stop=stop, validate=validate)
    return Tensor(t)


# ---------------------------------------------------------------- kernels
def _vector(x, dtype, name):
    """``x`` as a C-contiguous array of ``dtype`` (the tensor's value type):
    read in place when it already is one, else a ValueError (no silent cast)."""
    a = _np.asarray(x)
    if a.dtype != dtype:
        raise ValueError(f"{name} has dtype {a.dtype}, the tensor holds {dtype}: cast {name} first")
    return _np.ascontiguousarray(a)


def spmv(a, x, *, out=None, alpha=None, beta=None):
    """``y = A x`` for a 2-D CSR, CSC or COO tensor, or a GCS / DM tensor (``x``
    over its column dimensions, flattened); the result is flat, row-major over the
    row dimensions. ``a`` may be a :class:`Tensor` or anything :func:`write` takes;
    ``x`` a numpy array of the tensor's dtype (read in place). Runs without the
    GIL, on the buffers where they lie (a mapped file is not copied). Integer
    results that overflow raise :class:`NumericOverflowError`.

    With ``out`` (a writeable, C-contiguous array of the tensor's dtype with one
    element per row, not overlapping ``x`` or the tensor), the BLAS-style
    ``out = alpha A x + beta out`` is computed in place and ``out`` returned
    (``beta=0``, the default, overwrites ``out`` without reading it); without it
    a new array holds ``alpha A x`` (``alpha`` defaults to 1).

    >>> import arrow_sparse, numpy as np, scipy.sparse as sp
    >>> a = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
    >>> arrow_sparse.spmv(a, np.array([1.0, 1.0, 1.0]))
    array([3., 3.])
    >>> y = np.array([10.0, 20.0])
    >>> arrow_sparse.spmv(a, np.ones(3), out=y, alpha=2.0, beta=1.0)
    array([16., 26.])
    """
    t = _as_tensor(a)
    return _native.spmv(t._t, _vector(x, t.dtype, "x"), out=out, alpha=alpha, beta=beta)


def spmm(a, b, *, out=None, alpha=None, beta=None):
    """``C = A B`` for a sparse matrix ``a`` (what :func:`spmv` takes) and a dense
    ``k x n`` numpy array ``b`` of the tensor's dtype (C-contiguous arrays are
    read in place; others are copied to C order); returns the ``m x n`` array.
    With ``out`` (writeable, C-contiguous, ``m x n``), ``out = alpha A B + beta
    out`` in place, as :func:`spmv`. Rows run in parallel without the GIL.

    >>> import arrow_sparse, numpy as np, scipy.sparse as sp
    >>> a = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
    >>> arrow_sparse.spmm(a, np.arange(6.0).reshape(3, 2))
    array([[ 8., 11.],
           [ 6.,  9.]])
    """
    t = _as_tensor(a)
    b = _vector(b, t.dtype, "b")
    if b.ndim != 2:
        raise ValueError(f"b must be a 2-D array (k x n), found {b.ndim} dimensions")
    n = b.shape[1]
    c = _native.spmm(t._t, b.reshape(-1), n, out=None if out is None else _out_flat(out), alpha=alpha, beta=beta)
    if out is not None:
        return out
    return c.reshape(-1, n)


def _out_flat(out):
    if not isinstance(out, _np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray, got {type(out).__name__}")
    if not out.flags.c_contiguous:
        raise ValueError("out is not C-contiguous")
    return out.reshape(-1)


def mttkrp(a, mode, factors, *, shape=None):
    """MTTKRP (matricized tensor times Khatri-Rao product) along ``mode``:
    ``M[i, r] = sum of value * prod_{d != mode} factors[d][x[d], r]`` over the
    stored entries ``x`` with ``x[mode] = i``. ``factors`` holds one
    ``shape[d] x rank`` numpy array per dimension of the tensor's dtype (the one
    at ``mode`` is not read and may be None). Returns the ``shape[mode] x rank``
    array. Runs on the CSF tree (one walk, no GIL); a tensor in another format,
    or a CSF tensor with indices other than int32 / int64, is converted to an
    int64 CSF tensor first (a copy).

    With ``shape`` (the tensor's shape), ``a`` is instead the tensor matricized
    along ``mode``, as a CSR matrix of ``shape[mode]`` rows whose column is the
    row-major linear index of the other coordinates (in increasing dimension
    order): the library's ``mttkrp_csr`` kernel, which recomputes each entry's
    coordinates from its column. The result is the same; use it when the data
    already is such a matrix (a scipy ``csr_array`` is read in place).

    >>> import arrow_sparse, numpy as np, scipy.sparse as sp
    >>> x = np.zeros((2, 3, 4)); x[0, 1, 2] = 2.0; x[1, 2, 3] = 3.0
    >>> t = arrow_sparse.Tensor.from_numpy(x).convert("csf", "int32")
    >>> f = [None, np.ones((3, 2)), np.arange(8.0).reshape(4, 2)]
    >>> arrow_sparse.mttkrp(t, 0, f)
    array([[ 8., 10.],
           [18., 21.]])
    >>> arrow_sparse.mttkrp(sp.csr_array(x.reshape(2, 12)), 0, f, shape=(2, 3, 4))
    array([[ 8., 10.],
           [18., 21.]])
    """
    t = _as_tensor(a)
    ndim = t.ndim if shape is None else len(shape)
    if not 0 <= mode < ndim:
        raise IndexError(f"mode {mode} out of range for a {ndim}-dimensional tensor")
    fs = [None if f is None else _vector(f, t.dtype, f"factors[{d}]") for d, f in enumerate(factors)]
    if shape is None:
        flat, rank = _native.mttkrp(t._t, mode, fs)
        return flat.reshape(t.shape[mode], rank)
    shape = [int(n) for n in shape]
    flat, rank = _native.mttkrp(t._t, mode, fs, shape)
    return flat.reshape(shape[mode], rank)


def ttv(a, mode, v, *, dense=False):
    """Tensor times vector along ``mode``: ``Y[..] = sum_i X[.., i, ..] v[i]``, a
    COO :class:`Tensor` over the other dimensions (int64 coordinates, sorted), or
    with ``dense=True`` a dense one (what scipy's ``v @ A`` gives for a
    matricized tensor: faster when the result is dense or nearly so, and it
    allocates every element of the other dimensions). ``v`` has ``shape[mode]``
    elements of the tensor's dtype. Runs on the CSF tree, converting other
    formats as :func:`mttkrp` does.

    >>> import arrow_sparse, numpy as np
    >>> x = np.arange(24.0).reshape(2, 3, 4)
    >>> y = arrow_sparse.ttv(arrow_sparse.Tensor.from_numpy(x), 2, np.ones(4))
    >>> y.format, y.to_numpy().tolist()
    ('coo', [[6.0, 22.0, 38.0], [54.0, 70.0, 86.0]])
    >>> arrow_sparse.ttv(arrow_sparse.Tensor.from_numpy(x), 0, np.ones(2), dense=True).format
    'dense'
    """
    t = _as_tensor(a)
    return Tensor(_native.ttv(t._t, mode, _vector(v, t.dtype, "v"), bool(dense)))


def sum_duplicates(a):
    """The COO tensor ``a`` with the values of repeated coordinates summed and its
    entries sorted (canonical, like scipy's ``coo_array.sum_duplicates``, which
    works in place; this returns a new tensor). Integers accumulate wide: only a
    total that does not fit the value type raises :class:`NumericOverflowError`.
    Entries that sum to zero stay (they were stored).

    >>> import arrow_sparse, numpy as np, scipy.sparse as sp
    >>> m = sp.coo_array((np.array([1.0, 2.0, 5.0]), (np.array([1, 0, 1]), np.array([2, 0, 2]))), shape=(2, 3))
    >>> s = arrow_sparse.sum_duplicates(arrow_sparse.Tensor.from_scipy(m))
    >>> s.nnz, s.is_canonical, s.to_numpy().tolist()
    (2, True, [[2.0, 0.0, 0.0], [0.0, 0.0, 6.0]])
    """
    return Tensor(_native.coo_fold(_as_tensor(a)._t, "sum_duplicates"))


def canonicalize(a):
    """The COO tensor ``a`` in canonical form: entries sorted lexicographically
    by coordinate (row-major coordinate layout), repeated coordinates summed.
    Unlike :func:`sum_duplicates`, an integer sum is checked at every step (a
    partial sum that overflows the value type raises
    :class:`NumericOverflowError`), and a tensor that already is canonical and
    row-major is returned with its buffers shared (no copy). Other formats raise
    :class:`UnsupportedError` (CSR / CSC / CSF hold no duplicates; convert to COO
    first).

    >>> import arrow_sparse, numpy as np, scipy.sparse as sp
    >>> m = sp.coo_array((np.array([1, 2, 5]), (np.array([1, 0, 1]), np.array([2, 0, 2]))), shape=(2, 3))
    >>> c = arrow_sparse.canonicalize(m)
    >>> c.is_canonical, c.buffers()["coords"].tolist(), c.buffers()["values"].tolist()
    (True, [[0, 0], [1, 2]], [2, 6])
    """
    return Tensor(_native.coo_fold(_as_tensor(a)._t, "canonicalize"))


def transpose(a):
    """The transposed tensor (axes reversed, as numpy's ``.T``), sharing the
    buffers of ``a`` where the format allows it: a CSR ``m x n`` matrix becomes
    the CSC ``n x m`` matrix over the same ``indptr`` / ``indices`` / ``values``
    (and CSC becomes CSR), a CSF tensor keeps its tree with the axis order
    renumbered, a dense tensor gets reversed strides: no copy, O(1). A COO
    tensor shares its values and gets new coordinates (a copy of the coordinate
    buffer, columns reversed). Dimension names are reversed too. GCS and DM
    tensors raise :class:`UnsupportedError` (convert them first).

    To keep the matrix and change only its compression (CSR <-> CSC, the
    library's ``transpose_csx``), use :meth:`Tensor.convert`.

    >>> import arrow_sparse, numpy as np, scipy.sparse as sp
    >>> m = sp.csr_array(np.array([[1.0, 0, 2], [0, 3, 0]]))
    >>> t = arrow_sparse.transpose(m)
    >>> t.format, t.shape, t.to_numpy().tolist()
    ('csc', (3, 2), [[1.0, 0.0], [0.0, 3.0], [2.0, 0.0]])
    >>> np.shares_memory(t.buffers()["indices"], arrow_sparse.Tensor.from_scipy(m).buffers()["indices"])
    True
    """
    t = _as_tensor(a)
    shape = tuple(reversed(t.shape))
    names = list(reversed(t.dim_names)) if t.dim_names else None
    b, f, n = t.buffers(), t.format, t.ndim
    if f in ("csr", "csc"):
        return Tensor(_native.Tensor._from_arrays("csc" if f == "csr" else "csr", list(shape), b, dim_names=names,
                                                  validate=False))
    if f == "dense":
        return Tensor(_native.Tensor._from_arrays("dense", list(shape), b, dim_names=names,
                                                  strides=list(reversed(t.strides)), offset=t.offset,
                                                  validate=False))
    if f == "csf":
        return Tensor(_native.Tensor._from_arrays("csf", list(shape), b, dim_names=names,
                                                  axis_order=[n - 1 - d for d in t.axis_order], validate=False))
    if f == "coo":
        # buffers() shows the coordinates as nnz x ndim whatever their layout
        rev = _np.ascontiguousarray(b["coords"][:, ::-1]).reshape(-1)
        return Tensor(_native.Tensor._from_arrays("coo", list(shape), {"coords": rev, "values": b["values"]},
                                                  dim_names=names, validate=False))
    raise UnsupportedError(f"transpose of a {f} tensor: convert it to COO, CSR, CSC, CSF or dense first")


def map_values(a, func, *, dtype=None):
    """The tensor with every stored value replaced by ``func(values)``, in the same
    format and shape, over the same index buffers (shared, not copied). ``func``
    is called once, with the read-only numpy array of the stored values (a view
    of the tensor's buffer; for GCS / DM tensors, of their storage), and must
    return an array of the same length: a numpy ufunc (``np.sqrt``,
    ``np.negative``), ``lambda v: v * 2 + 1``, ``np.abs``... It runs under the
    GIL (it is Python); rebuilding the tensor is O(1). ``dtype`` casts the
    result (default: whatever ``func`` returns, which must be one of the 11 value
    types). Like the library's ``map_values``, stored zeros stay stored (a value
    mapped to 0 is kept as an explicit entry).

    >>> import arrow_sparse, numpy as np, scipy.sparse as sp
    >>> m = sp.csr_array(np.array([[4.0, 0], [0, 9.0]]))
    >>> r = arrow_sparse.map_values(m, np.sqrt)
    >>> r.format, r.to_numpy().tolist()
    ('csr', [[2.0, 0.0], [0.0, 3.0]])
    >>> arrow_sparse.map_values(m, lambda v: v > 5, dtype=np.int8).buffers()["values"]
    array([0, 1], dtype=int8)
    """
    t = _as_tensor(a)
    b = t.buffers()
    values = b["storage.values"] if t.format == "dm" else b["values"]
    out = _np.asarray(func(values))
    if dtype is not None:
        out = out.astype(dtype, copy=False)
    if out.ndim != 1 or out.shape[0] != values.shape[0]:
        raise LengthError(f"map_values: func returned an array of shape {out.shape}, "
                          f"expected {values.shape[0]} values (one per stored value)")
    return Tensor(_native.with_values(t._t, _np.ascontiguousarray(out)))


def scale(a, alpha):
    """Every stored value times the scalar ``alpha``, in the same format (indices
    shared, not copied). Integers are checked: a product that does not fit the
    value type raises :class:`NumericOverflowError`; ``alpha`` must be
    representable in it (else ``OverflowError`` / ``TypeError``).

    >>> import arrow_sparse, numpy as np
    >>> arrow_sparse.scale(np.array([[1, 0], [0, 2]], dtype=np.int8), 3).to_numpy().tolist()
    [[3, 0], [0, 6]]
    """
    return Tensor(_native.scale(_as_tensor(a)._t, alpha))


def allclose(a, b, rtol=1e-05, atol=1e-08):
    """Whether ``a`` and ``b`` (same shape and value type, any formats) hold the
    same elements within ``atol + rtol * |b|``, as ``numpy.allclose`` (absent
    elements count as zero, duplicates are summed, NaN equals nothing). Different
    shapes give False; different value types raise :class:`TypeMismatchError`.

    >>> import arrow_sparse, numpy as np, scipy.sparse as sp
    >>> a = sp.csr_array(np.array([[1.0, 0], [0, 2.0]]))
    >>> arrow_sparse.allclose(a, np.array([[1.0, 0], [0, 2.0 + 1e-9]]))
    True
    >>> arrow_sparse.allclose(a, np.eye(2))
    False
    """
    return bool(_native.allclose(_as_tensor(a)._t, _as_tensor(b)._t, float(rtol), float(atol)))


def sum(a, axis=None, *, output="auto"):  # noqa: A001  (numpy's name)
    """The sum of every entry (``axis=None``: a Python scalar) or over the
    dimensions ``axis`` (an int or a tuple: a :class:`Tensor` over the others).
    ``output`` chooses its format: ``"auto"`` (dense when it has at most
    max(4 nnz, 65536) elements, sparse otherwise), ``"dense"`` or ``"sparse"``
    (canonical COO with an entry wherever something was stored).
    Accumulates in float64 / float32 / checked integers (overflow raises
    :class:`NumericOverflowError`).

    >>> import arrow_sparse, numpy as np
    >>> t = arrow_sparse.Tensor.from_numpy(np.arange(6).reshape(2, 3))
    >>> int(arrow_sparse.sum(t)), arrow_sparse.sum(t, axis=0).to_numpy().tolist()
    (15, [3, 5, 7])
    >>> arrow_sparse.sum(t, axis=1, output="sparse").format
    'coo'
    """
    t = _as_tensor(a)
    if axis is None:
        return _native.sum(t._t)
    axes = [axis] if isinstance(axis, int) else list(axis)
    return Tensor(_native.sum_over(t._t, [d % t.ndim for d in axes], output))


def _binary(a, b, op):
    return Tensor(_native.elementwise(_as_tensor(a)._t, _as_tensor(b)._t, op))


def add(a, b):
    """``a + b`` entry by entry (same shape and value type, any formats): a
    :class:`Tensor` in the format of ``a`` (``b`` is converted once if it differs).

    >>> import arrow_sparse, numpy as np
    >>> a = np.array([[1, 0], [0, 2]]); b = np.array([[0, 5], [0, 1]])
    >>> arrow_sparse.add(a, b).to_numpy().tolist()
    [[1, 5], [0, 3]]
    """
    return _binary(a, b, "add")


def subtract(a, b):
    """``a - b`` entry by entry, as :func:`add`.

    >>> import arrow_sparse, numpy as np
    >>> arrow_sparse.subtract(np.array([3.0, 0]), np.array([1.0, 2.0])).to_numpy().tolist()
    [2.0, -2.0]
    """
    return _binary(a, b, "subtract")


def multiply(a, b):
    """``a * b`` entry by entry (only entries stored in both), as :func:`add`.

    >>> import arrow_sparse, numpy as np
    >>> arrow_sparse.multiply(np.array([3, 0, 2]), np.array([2, 5, 4])).to_numpy().tolist()
    [6, 0, 8]
    """
    return _binary(a, b, "multiply")
