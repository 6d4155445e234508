"""The exceptions of arrow_sparse: one class per error kind of the Rust library.

Every error raised by the package is an :class:`ArrowSparseError`. Errors about
the input (bad shapes, out-of-range indices, corrupt files, unsupported types) are
also :class:`ValueError`; I/O errors are also :class:`OSError` (with ``errno``)::

    >>> import arrow_sparse, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "bad.arrow")
    >>> _ = open(path, "wb").write(b"not an arrow stream")
    >>> try:
    ...     arrow_sparse.read(path)
    ... except arrow_sparse.IpcError as e:
    ...     isinstance(e, ValueError)
    True
"""

__all__ = [
    "ArrowSparseError",
    "ShapeError",
    "LengthError",
    "IndexOutOfBoundsError",
    "InvariantError",
    "NumericOverflowError",
    "TypeMismatchError",
    "IpcError",
    "MisalignedError",
    "UnsupportedError",
    "ParseError",
    "ArrowSparseIOError",
    "ObjectStoreError",
    "ArrowError",
    "ParquetError",
    "LimitError",
    "AllocationError",
    "InternalError",
]


class ArrowSparseError(Exception):
    """Base class of every error raised by arrow_sparse."""


class ShapeError(ArrowSparseError, ValueError):
    """A shape, rank or dimension count is wrong."""


class LengthError(ArrowSparseError, ValueError):
    """A buffer has the wrong number of elements."""


class IndexOutOfBoundsError(ArrowSparseError, ValueError):
    """An index or coordinate lies outside its dimension."""


class InvariantError(ArrowSparseError, ValueError):
    """A structural rule is broken (indptr not monotonic, unsorted indices, ...)."""


class NumericOverflowError(ArrowSparseError, ValueError):
    """A count or index does not fit the target type."""


class TypeMismatchError(ArrowSparseError, ValueError):
    """A value or index type is not the expected one."""


class IpcError(ArrowSparseError, ValueError):
    """An Arrow IPC message is malformed (corrupt or truncated file)."""


class MisalignedError(ArrowSparseError, ValueError):
    """A buffer is not aligned as required."""


class UnsupportedError(ArrowSparseError, ValueError):
    """The input is valid but uses something arrow_sparse does not handle."""


class ParseError(ArrowSparseError, ValueError):
    """A text file (Matrix Market, FROSTT) or option string does not parse."""


class ArrowSparseIOError(ArrowSparseError, OSError):
    """Reading or writing a file failed."""


class ObjectStoreError(ArrowSparseError, OSError):
    """A request to an object store (an ``s3://`` or ``file://`` URL) failed, or
    its object does not exist (``errno`` 2, as a missing file)."""


class ArrowError(ArrowSparseError, ValueError):
    """An error reported by arrow-rs (record batch files)."""


class ParquetError(ArrowSparseError, ValueError):
    """An error reported by the Parquet reader or writer (corrupt archive)."""


class LimitError(ArrowSparseError, ValueError):
    """A file declares more than its read limit allows (by default 16 bytes per
    input byte, at least 64 MiB): hostile or corrupt input, or a limit set too low."""


class AllocationError(ArrowSparseError, MemoryError):
    """A kernel or conversion could not allocate its output (for example a vector
    as long as a huge declared extent)."""


class InternalError(ArrowSparseError, RuntimeError):
    """A bug of arrow-sparse (a panic in the Rust library, caught at the binding):
    please report it with the input that caused it."""
