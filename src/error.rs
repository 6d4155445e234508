//! The crate's error type.
//!
//! Every fallible operation returns [`Result<T>`](Result). Variants are structured
//! (what went wrong, where, what was expected, what was found) so callers can match
//! on them instead of parsing strings.
//!
//! ```
//! use arrow_sparse::{CooTensor, Error};
//! let err = CooTensor::<f64, i64>::from_entries(vec![2, 2], &[(vec![2, 0], 1.0)]).unwrap_err();
//! match err {
//!     Error::IndexOutOfBounds { value, bound, .. } => assert_eq!((value, bound), (2, 2)),
//!     other => panic!("unexpected {other}"),
//! }
//! # Ok::<(), arrow_sparse::Error>(())
//! ```

use std::fmt;

/// Shorthand for `std::result::Result<T, arrow_sparse::Error>`.
///
/// ```
/// use arrow_sparse::{CooTensor, Result};
/// fn nnz_of(shape: Vec<usize>) -> Result<usize> {
///     Ok(CooTensor::<f64, i64>::from_entries(shape, &[(vec![1], 1.0)])?.nnz())
/// }
/// assert_eq!(nnz_of(vec![3])?, 1);
/// assert!(nnz_of(vec![1]).is_err()); // coordinate 1 is outside a dimension of 1
/// # Ok::<(), arrow_sparse::Error>(())
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in arrow-sparse.
///
/// ```
/// use arrow_sparse::{CompressedAxis, CsxMatrix, Error};
/// // a 2 x 2 CSR matrix needs 3 indptr entries
/// let err = CsxMatrix::<f64, i32>::try_new(
///     vec![2, 2], CompressedAxis::Row, vec![0, 1].into(), vec![0].into(), vec![1.0].into()).unwrap_err();
/// assert!(matches!(&err, Error::Length { buffer, expected: 3, found: 2 } if buffer == "indptr"));
/// assert_eq!(err.to_string(), "buffer indptr has 2 elements, expected 3");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A shape is not acceptable (wrong number of dimensions, negative or overflowing
    /// extents, a shape that does not match another operand).
    Shape {
        /// What was being checked.
        what: String,
        /// What the check expected.
        expected: String,
        /// What it found.
        found: String,
    },
    /// A buffer has the wrong number of elements.
    Length {
        /// Which buffer (`"indptr"`, `"indices[1]"`, `"values"` ...).
        buffer: String,
        /// Expected element count.
        expected: usize,
        /// Actual element count.
        found: usize,
    },
    /// A coordinate or index lies outside its dimension.
    IndexOutOfBounds {
        /// Which buffer holds it.
        buffer: String,
        /// Position of the offending element in that buffer.
        position: usize,
        /// The value found (as i128, so every index type fits, negatives included).
        value: i128,
        /// The exclusive upper bound it had to respect.
        bound: u64,
    },
    /// A structural invariant of a format does not hold (indptr not starting at 0,
    /// decreasing, not ending at nnz, axis order not a permutation, canonical flag
    /// wrong, ...).
    Invariant {
        /// Which buffer or field.
        what: String,
        /// Where (element position or level), when it applies.
        position: Option<usize>,
        /// A sentence saying what was wrong.
        detail: String,
    },
    /// A value does not fit the requested integer type (index narrowing, overflow of
    /// a sum or a product).
    Overflow {
        /// What was being computed or converted.
        what: String,
        /// The value or expression that did not fit.
        value: String,
        /// The target type.
        target: String,
    },
    /// Memory for a result or a working buffer could not be allocated: the
    /// size overflows the address space, or the allocator refused it. Kernels
    /// size their outputs from the operands' declared extents, so a tensor that
    /// declares a huge extent gets this error instead of aborting the process.
    Allocation {
        /// What was being allocated (`"SpMV result"`, `"CSC indices"`, ...).
        what: String,
        /// How many elements were asked for.
        elements: usize,
        /// The size of one element in bytes.
        element_bytes: usize,
    },
    /// A type is not supported where it was used.
    Type {
        /// What was being typed (`"value type"`, `"index type"`, ...).
        what: String,
        /// What is accepted.
        expected: String,
        /// What was found.
        found: String,
    },
    /// An IPC message or stream is malformed.
    Ipc {
        /// Byte offset in the stream or file where the problem was found, if known.
        offset: Option<u64>,
        /// What was wrong.
        detail: String,
    },
    /// A buffer is not aligned for its element type and the caller required
    /// alignment (see [`ReadOptions::require_alignment`](crate::ipc::StreamReadOptions)).
    Misaligned {
        /// Which buffer.
        buffer: String,
        /// Required alignment in bytes.
        alignment: usize,
    },
    /// The operation is not supported for this combination of inputs.
    Unsupported(String),
    /// Extension metadata or CLI arguments could not be parsed.
    Parse {
        /// What was being parsed.
        what: String,
        /// Why it failed.
        detail: String,
    },
    /// A row of a sparse tensor column (`arrow_sparse::column`) is not a valid
    /// tensor, or does not fit the column's type.
    Row {
        /// The row (0-based, within the array that was read).
        row: usize,
        /// What is wrong with it.
        source: Box<Error>,
    },
    /// Reading an input would take more memory than its read limit allows (see
    /// [`ReadLimit`](crate::limit::ReadLimit)): a declared size (rows, a page, a
    /// dictionary, a broadcast) is out of proportion to the bytes of the input.
    Limit {
        /// What would have been allocated, and for which input.
        what: String,
        /// Bytes it needs.
        needed: u64,
        /// Bytes the limit allows for this input.
        limit: u64,
    },
    /// An element cannot be written in place (see
    /// [`kernels::elementwise::set_values`](crate::kernels::elementwise::set_values)):
    /// the tensor does not store it (`count` 0; adding an element changes the
    /// structure, so the tensor must be rebuilt), or stores it several times
    /// (duplicates whose sum is the element; canonicalize first).
    NotStored {
        /// The element's logical coordinates.
        coordinates: Vec<usize>,
        /// How many stored values hold it.
        count: usize,
    },
    /// An I/O error.
    Io(std::io::Error),
    /// An error from the Arrow crates.
    Arrow(arrow_schema::ArrowError),
    /// An error from the Parquet crate (a malformed or truncated file, an
    /// unsupported encoding or compression).
    #[cfg(feature = "parquet")]
    Parquet(::parquet::errors::ParquetError),
    /// An error from an object store (feature `object-store`): a request that
    /// failed, an object that does not exist, a URL or configuration that names
    /// no store.
    #[cfg(feature = "object-store")]
    ObjectStore(object_store::Error),
}

impl Error {
    /// Whether the error says that a file or an object does not exist: an I/O
    /// error of kind `NotFound`, or (feature `object-store`) a store's missing
    /// object, also within a row's context. Bindings map it to their own "not
    /// found" (Python: errno 2, as `FileNotFoundError`).
    ///
    /// ```
    /// use arrow_sparse::archive::{self, ArchiveReadOptions};
    /// use arrow_sparse::Error;
    /// let dir = tempfile::tempdir()?;
    /// let err = archive::read_archive(dir.path().join("none.parquet"), &ArchiveReadOptions::default()).unwrap_err();
    /// assert!(err.is_not_found(), "{err}");
    /// assert!(!Error::Unsupported("x".into()).is_not_found());
    /// # Ok::<(), arrow_sparse::Error>(())
    /// ```
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Io(e) => e.kind() == std::io::ErrorKind::NotFound,
            Error::Row { source, .. } => source.is_not_found(),
            #[cfg(feature = "object-store")]
            Error::ObjectStore(object_store::Error::NotFound { .. }) => true,
            _ => false,
        }
    }

    pub(crate) fn ipc(offset: Option<u64>, detail: impl Into<String>) -> Self {
        Error::Ipc {
            offset,
            detail: detail.into(),
        }
    }

    pub(crate) fn invariant(
        what: impl Into<String>,
        position: Option<usize>,
        detail: impl Into<String>,
    ) -> Self {
        Error::Invariant {
            what: what.into(),
            position,
            detail: detail.into(),
        }
    }

    pub(crate) fn shape(
        what: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        Error::Shape {
            what: what.into(),
            expected: expected.into(),
            found: found.into(),
        }
    }

    pub(crate) fn length(buffer: impl Into<String>, expected: usize, found: usize) -> Self {
        Error::Length {
            buffer: buffer.into(),
            expected,
            found,
        }
    }

    pub(crate) fn allocation(
        what: impl Into<String>,
        elements: usize,
        element_bytes: usize,
    ) -> Self {
        Error::Allocation {
            what: what.into(),
            elements,
            element_bytes,
        }
    }

    pub(crate) fn overflow(
        what: impl Into<String>,
        value: impl Into<String>,
        target: impl Into<String>,
    ) -> Self {
        Error::Overflow {
            what: what.into(),
            value: value.into(),
            target: target.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Shape {
                what,
                expected,
                found,
            } => write!(
                f,
                "bad shape for {what}: expected {expected}, found {found}"
            ),
            Error::Length {
                buffer,
                expected,
                found,
            } => write!(
                f,
                "buffer {buffer} has {found} elements, expected {expected}"
            ),
            Error::IndexOutOfBounds {
                buffer,
                position,
                value,
                bound,
            } => write!(
                f,
                "index out of bounds in {buffer} at position {position}: {value} is not in 0..{bound}"
            ),
            Error::Invariant {
                what,
                position: Some(p),
                detail,
            } => write!(f, "invalid {what} at position {p}: {detail}"),
            Error::Invariant {
                what,
                position: None,
                detail,
            } => write!(f, "invalid {what}: {detail}"),
            Error::Overflow {
                what,
                value,
                target,
            } => write!(f, "overflow in {what}: {value} does not fit in {target}"),
            Error::Allocation {
                what,
                elements,
                element_bytes,
            } => write!(
                f,
                "cannot allocate {what}: {elements} elements of {element_bytes} bytes ({})",
                match elements.checked_mul(*element_bytes) {
                    Some(b) => format!("{b} bytes"),
                    None => "more bytes than the address space holds".to_string(),
                }
            ),
            Error::Type {
                what,
                expected,
                found,
            } => write!(f, "unsupported {what}: expected {expected}, found {found}"),
            Error::Ipc {
                offset: Some(o),
                detail,
            } => write!(f, "malformed IPC data at byte {o}: {detail}"),
            Error::Ipc {
                offset: None,
                detail,
            } => write!(f, "malformed IPC data: {detail}"),
            Error::Misaligned { buffer, alignment } => write!(
                f,
                "buffer {buffer} is not aligned to {alignment} bytes and alignment is required"
            ),
            Error::Unsupported(s) => write!(f, "unsupported: {s}"),
            Error::Parse { what, detail } => write!(f, "cannot parse {what}: {detail}"),
            Error::Row { row, source } => write!(f, "row {row}: {source}"),
            Error::Limit {
                what,
                needed,
                limit,
            } => write!(
                f,
                "{what} needs {needed} bytes, more than the read limit of {limit} bytes for this input (a size declared out of proportion to the file; raise the limit in the read options if the file is trusted)"
            ),
            Error::NotStored {
                coordinates,
                count: 0,
            } => write!(
                f,
                "element {coordinates:?} is not stored, so it cannot be written in place (rebuild the tensor with the entry added)"
            ),
            Error::NotStored { coordinates, count } => write!(
                f,
                "element {coordinates:?} is stored {count} times (duplicates), so it cannot be written in place (canonicalize the tensor first)"
            ),
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::Arrow(e) => write!(f, "Arrow error: {e}"),
            // the crate's `General` message already starts "Parquet error: "
            #[cfg(feature = "parquet")]
            Error::Parquet(e @ ::parquet::errors::ParquetError::General(_)) => write!(f, "{e}"),
            #[cfg(feature = "parquet")]
            Error::Parquet(e) => write!(f, "Parquet error: {e}"),
            #[cfg(feature = "object-store")]
            Error::ObjectStore(object_store::Error::NotFound { path, .. }) => {
                write!(f, "object store error: no object at {path}")
            }
            // one line: a server's answer (an XML document) may follow the message
            #[cfg(feature = "object-store")]
            Error::ObjectStore(e) => {
                let text = e.to_string();
                let mut line = text.split_whitespace().collect::<Vec<_>>().join(" ");
                if line.len() > 600 {
                    let cut = (0..=600)
                        .rev()
                        .find(|&i| line.is_char_boundary(i))
                        .unwrap_or(0);
                    line.truncate(cut);
                    line.push_str(" ...");
                }
                write!(f, "object store error: {line}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Row { source, .. } => Some(source.as_ref()),
            Error::Arrow(e) => Some(e),
            #[cfg(feature = "parquet")]
            Error::Parquet(e) => Some(e),
            #[cfg(feature = "object-store")]
            Error::ObjectStore(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Arrow(e)
    }
}

/// Errors cross into arrow-rs code (an [`ExtensionType`](arrow_schema::extension::ExtensionType)
/// implementation, a `RecordBatchReader`, a function returning `ArrowError`) with `?`.
/// An [`Error::Arrow`] gives back the Arrow error it wraps, [`Error::Io`] becomes
/// `ArrowError::IoError`, and every other variant becomes
/// `ArrowError::ExternalError` holding the `Error` itself, so callers can still
/// downcast and match on it.
///
/// ```
/// use arrow_schema::ArrowError;
/// use arrow_sparse::{CooTensor, Error};
/// fn nnz() -> Result<usize, ArrowError> {
///     Ok(CooTensor::<f64, i64>::from_entries(vec![2], &[(vec![5], 1.0)])?.nnz())
/// }
/// let ArrowError::ExternalError(e) = nnz().unwrap_err() else { panic!() };
/// assert!(matches!(e.downcast_ref::<Error>(), Some(Error::IndexOutOfBounds { value: 5, .. })));
/// // an Arrow error comes back out as it went in
/// let arrow = ArrowError::ComputeError("no".into());
/// assert_eq!(ArrowError::from(Error::from(arrow)).to_string(), "Compute error: no");
/// ```
impl From<Error> for arrow_schema::ArrowError {
    fn from(e: Error) -> Self {
        match e {
            Error::Arrow(e) => e,
            Error::Io(e) => arrow_schema::ArrowError::IoError(e.to_string(), e),
            other => arrow_schema::ArrowError::ExternalError(Box::new(other)),
        }
    }
}

/// Errors cross into `std::io` code (a `Read` / `Write` adaptor) with `?`: an
/// [`Error::Io`] gives back the I/O error it wraps, every other variant becomes an
/// error of kind `InvalidData` holding the `Error`.
///
/// ```
/// use arrow_sparse::{ipc, Error};
/// fn read(bytes: &[u8]) -> std::io::Result<usize> {
///     Ok(ipc::TensorStreamReader::new(bytes).collect::<Result<Vec<_>, Error>>()?.len())
/// }
/// let e = read(&[0xFF, 0xFF, 0xFF, 0xFF, 9, 0, 0, 0, 1]).unwrap_err(); // a cut message
/// assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
/// assert!(matches!(e.get_ref().and_then(|e| e.downcast_ref::<Error>()), Some(Error::Ipc { .. })));
/// ```
impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Io(e) => e,
            other => std::io::Error::new(std::io::ErrorKind::InvalidData, other),
        }
    }
}

/// Errors cross into parquet-crate code with `?`: an [`Error::Parquet`] gives back
/// the Parquet error it wraps, every other variant becomes
/// `ParquetError::External` holding the `Error`.
///
/// ```
/// use parquet::errors::ParquetError;
/// use arrow_sparse::{CooTensor, Error};
/// fn nnz() -> Result<usize, ParquetError> {
///     Ok(CooTensor::<f64, i64>::from_entries(vec![2], &[(vec![5], 1.0)])?.nnz())
/// }
/// let ParquetError::External(e) = nnz().unwrap_err() else { panic!() };
/// assert!(matches!(e.downcast_ref::<Error>(), Some(Error::IndexOutOfBounds { .. })));
/// ```
#[cfg(feature = "parquet")]
impl From<Error> for ::parquet::errors::ParquetError {
    fn from(e: Error) -> Self {
        match e {
            Error::Parquet(e) => e,
            other => ::parquet::errors::ParquetError::External(Box::new(other)),
        }
    }
}

#[cfg(feature = "parquet")]
impl From<::parquet::errors::ParquetError> for Error {
    fn from(e: ::parquet::errors::ParquetError) -> Self {
        Error::Parquet(e)
    }
}

#[cfg(feature = "object-store")]
impl From<object_store::Error> for Error {
    fn from(e: object_store::Error) -> Self {
        Error::ObjectStore(e)
    }
}

impl From<flatbuffers::InvalidFlatbuffer> for Error {
    fn from(e: flatbuffers::InvalidFlatbuffer) -> Self {
        Error::ipc(None, format!("flatbuffer verification failed: {e}"))
    }
}

/// Install a panic hook that prints every panic as the current hook does, except
/// the panics of a dependency that this crate catches and returns as an error.
///
/// On hostile input a few dependency decoders panic (`fuzz/FINDINGS.md` lists
/// them); the readers validate their input to avoid them and, as a last resort,
/// run such calls under `catch_unwind`, returning [`Error::Parquet`] /
/// [`Error::Arrow`]. The default panic hook still prints the caught panic on
/// stderr before the error reaches the caller. A program that reports errors
/// itself (the `arrow-sparse` CLI does) calls this once at start: caught panics
/// are then silent, and every other panic, in this crate, a dependency or the
/// program, is printed as before.
///
/// ```
/// arrow_sparse::error::install_panic_hook();
/// // an ordinary panic still reaches the previous hook (and is caught here)
/// assert!(std::panic::catch_unwind(|| panic!("printed as usual")).is_err());
/// ```
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !crate::guard::active() {
            previous(info)
        }
    }));
}
