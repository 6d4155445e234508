//! Rust errors as Python exceptions: one class per `arrow_sparse::Error` kind, all
//! defined in `arrow_sparse/errors.py` (so each can also derive from `ValueError` or
//! `OSError`, which `create_exception!` cannot express).

use arrow_sparse::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The name of the Python class for `e` (after unwrapping row context).
fn class_name(e: &Error) -> &'static str {
    match e {
        Error::Shape { .. } => "ShapeError",
        Error::Length { .. } => "LengthError",
        Error::IndexOutOfBounds { .. } => "IndexOutOfBoundsError",
        Error::Invariant { .. } => "InvariantError",
        Error::Overflow { .. } => "NumericOverflowError",
        Error::Type { .. } => "TypeMismatchError",
        Error::Ipc { .. } => "IpcError",
        Error::Misaligned { .. } => "MisalignedError",
        Error::Unsupported(_) => "UnsupportedError",
        Error::Parse { .. } => "ParseError",
        Error::Row { source, .. } => class_name(source),
        Error::Io(_) => "ArrowSparseIOError",
        Error::Arrow(_) => "ArrowError",
        Error::Parquet(_) => "ParquetError",
        Error::Limit { .. } => "LimitError",
        Error::Allocation { .. } => "AllocationError",
        #[cfg(feature = "object-store")]
        Error::ObjectStore(_) => "ObjectStoreError",
        _ => "ArrowSparseError",
    }
}

/// The `OSError.errno` of `e` (after unwrapping row context, as [`class_name`]):
/// the OS's code of an I/O error, else the code of its kind (`io::Error::new`
/// drops `raw_os_error`); a missing object is a missing file to Python
/// (`FileNotFoundError`'s errno, as [`Error::is_not_found`] decides).
fn errno(e: &Error) -> Option<i32> {
    match e {
        Error::Row { source, .. } => errno(source),
        Error::Io(io) => io.raw_os_error().or(match io.kind() {
            std::io::ErrorKind::NotFound => Some(2),
            std::io::ErrorKind::PermissionDenied => Some(13),
            std::io::ErrorKind::AlreadyExists => Some(17),
            _ => None,
        }),
        _ if e.is_not_found() => Some(2),
        _ => None,
    }
}

/// Convert a library error into the matching `arrow_sparse.errors` exception.
pub(crate) fn to_py(e: Error) -> PyErr {
    let name = class_name(&e);
    let message = e.to_string();
    let errno = errno(&e);
    Python::attach(|py| {
        let made = (|| -> PyResult<PyErr> {
            let class = py.import("arrow_sparse.errors")?.getattr(name)?;
            let value = match errno {
                // OSError(errno, strerror) sets .errno; the message already names the path
                Some(n) => class.call1((n, message.clone()))?,
                None => class.call1((message.clone(),))?,
            };
            Ok(PyErr::from_value(value))
        })();
        made.unwrap_or_else(|err| {
            PyRuntimeError::new_err(format!("{message} (and raising it failed: {err})"))
        })
    })
}

/// Run library code without the GIL and turn both its errors and its panics into
/// exceptions. A panic is a bug of the library (its public functions promise not
/// to panic); it becomes `arrow_sparse.InternalError` (an `ArrowSparseError` and a
/// `RuntimeError`) instead of PyO3's `PanicException`, which derives from
/// `BaseException` and escapes `except Exception`.
pub(crate) fn guarded<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, Error> + Send,
) -> PyResult<T> {
    let outcome = py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    match outcome {
        Ok(result) => result.py_err(),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let made = py
                .import("arrow_sparse.errors")
                .and_then(|m| m.getattr("InternalError"))
                .and_then(|c| c.call1((format!("arrow-sparse bug (please report it): {what}"),)));
            Err(match made {
                Ok(v) => PyErr::from_value(v),
                Err(e) => e,
            })
        }
    }
}

/// `Result<T, Error>` to `PyResult<T>`.
pub(crate) trait IntoPy<T> {
    /// Map the error to its Python exception.
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, Error> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
